#include "replication/gtid_state.h"

#include <map>

#include "protocol/event_type.h"
#include "protocol/gtid_events.h"
#include "protocol/status_macros.h"

namespace binrelay::replication {

absl::Status GtidState::OnEvent(const protocol::EventView& ev) {
  switch (ev.type()) {
    case protocol::kGtidListEvent: {
      BR_ASSIGN_OR_RETURN(protocol::MariaGtidList list, protocol::ParseMariaGtidList(ev));
      // A GTID_LIST may name several servers of one domain; the position
      // keeps the newest (highest seq_no) per domain.
      std::map<uint32_t, MariaGtid> newest;
      for (const auto& e : list.gtids) {
        auto it = newest.find(e.domain_id);
        if (it == newest.end() || it->second.seq < e.seq_no) {
          newest[e.domain_id] = MariaGtid{e.domain_id, e.server_id, e.seq_no};
        }
      }
      maria_ = MariaGtidPosition();
      for (const auto& [domain, g] : newest) maria_.Update(g);
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

absl::Status GtidState::Seed(std::string_view text) {
  *this = GtidState();
  if (text.empty()) return absl::OkStatus();
  // MySQL sets name a uuid followed by ':'; MariaDB positions never have one.
  if (text.find(':') != std::string_view::npos) {
    BR_ASSIGN_OR_RETURN(mysql_, MysqlGtidSet::Parse(text));
    flavour_ = Flavour::kMysql;
  } else {
    BR_ASSIGN_OR_RETURN(maria_, MariaGtidPosition::Parse(text));
    flavour_ = Flavour::kMaria;
  }
  return absl::OkStatus();
}

void GtidState::Commit() {
  if (pending_maria_) maria_.Update(*pending_maria_);
  if (pending_mysql_) mysql_.Add(pending_mysql_->uuid, pending_mysql_->tag, pending_mysql_->gno);
  DropPending();
}

std::string GtidState::ToString() const {
  switch (flavour_) {
    case Flavour::kMaria:
      return maria_.ToString();
    case Flavour::kMysql:
      return mysql_.ToString();
    case Flavour::kNone:
      break;
  }
  return "";
}

}  // namespace binrelay::replication
