#include "replication/gtid_state.h"

#include "protocol/event_type.h"
#include "protocol/gtid_events.h"
#include "protocol/status_macros.h"

namespace binrelay::replication {

absl::Status GtidState::OnEvent(const protocol::EventView& ev) {
  switch (ev.type()) {
    case protocol::kGtidListEvent: {
      BR_ASSIGN_OR_RETURN(protocol::MariaGtidList list, protocol::ParseMariaGtidList(ev));
      // A GTID_LIST names every server of each domain, the domain's last
      // GTID last (MariaDB's rpl_binlog_state::load reads it in order).
      maria_.Load(list.gtids);
      flavour_ = Flavour::kMaria;
      break;
    }
    case protocol::kPreviousGtidsEvent: {
      BR_ASSIGN_OR_RETURN(std::string text, protocol::DecodeGtidSetText(ev.body));
      BR_ASSIGN_OR_RETURN(mysql_, MysqlGtidSet::Parse(text));
      flavour_ = Flavour::kMysql;
      break;
    }
    case protocol::kMariaGtidEvent: {
      BR_ASSIGN_OR_RETURN(protocol::MariaGtid g, protocol::ParseMariaGtid(ev));
      pending_maria_ = MariaGtid{g.domain_id, g.server_id, g.seq_no};
      flavour_ = Flavour::kMaria;
      break;
    }
    case protocol::kGtidEvent:
    case protocol::kGtidTaggedEvent: {
      BR_ASSIGN_OR_RETURN(protocol::MysqlGtid g, protocol::ParseMysqlGtid(ev));
      if (!g.anonymous && g.gno > 0) {
        pending_mysql_ = PendingMysql{protocol::UuidToString(g.sid), g.tag,
                                      static_cast<uint64_t>(g.gno)};
        flavour_ = Flavour::kMysql;
      }
      break;
    }
    default:
      break;
  }
  return absl::OkStatus();
}

void GtidState::Commit() {
  if (pending_maria_) maria_.Update(*pending_maria_);
  if (pending_mysql_) mysql_.Add(pending_mysql_->uuid, pending_mysql_->tag, pending_mysql_->gno);
  DropPending();
}

SourceGtids GtidState::gtids() const {
  switch (flavour_) {
    case Flavour::kMaria:
      return SourceGtids(maria_);
    case Flavour::kMysql:
      return SourceGtids(mysql_);
    case Flavour::kNone:
      break;
  }
  return SourceGtids();
}

}  // namespace binrelay::replication
