#include "replication/gtid_state.h"

#include "protocol/event_type.h"
#include "protocol/gtid_events.h"
#include "protocol/status_macros.h"

namespace binrelay::replication {

absl::Status GtidState::OnEvent(const protocol::EventView& ev) {
  switch (ev.type()) {
    case protocol::kGtidListEvent: {
      BR_ASSIGN_OR_RETURN(protocol::MariaGtidList list, protocol::ParseMariaGtidList(ev));
      flavour_ = Flavour::kMaria;
      // A GTID_LIST names every server of each domain, the domain's last
      // GTID last (MariaDB's rpl_binlog_state::load reads it in order).
      maria_.Load(list.gtids);
      if (floor_.is_mariadb()) maria_ = FloorMerged(floor_, SourceGtids(maria_)).maria();
      break;
    }
    case protocol::kPreviousGtidsEvent: {
      BR_ASSIGN_OR_RETURN(std::string text, protocol::DecodeGtidSetText(ev.body));
      BR_ASSIGN_OR_RETURN(mysql_, MysqlGtidSet::Parse(text));
      if (floor_.is_mysql()) mysql_.AddAll(floor_.mysql());
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

namespace {

bool MariaFloorHolds(const SourceGtids& floor, uint32_t domain, uint64_t seq) {
  if (!floor.is_mariadb()) return false;
  const auto last = floor.maria().LastInDomain(domain);
  return last && seq <= last->seq;
}

bool MysqlFloorHolds(const SourceGtids& floor, std::string_view uuid, std::string_view tag,
                     uint64_t gno) {
  return floor.is_mysql() && floor.mysql().Contains(uuid, tag, gno);
}

}  // namespace

SourceGtids FloorMerged(const SourceGtids& floor, const SourceGtids& opening) {
  if (floor.is_mariadb() && opening.is_mariadb()) {
    // Only what lies past the floor in its domain: an entry at or below it
    // would move the domain's last GTID back.
    MariaBinlogState merged = floor.maria();
    for (const auto& e : opening.maria().ToGtidList()) {
      const auto last = merged.LastInDomain(e.domain_id);
      if (!last || last->seq < e.seq_no) merged.Update({e.domain_id, e.server_id, e.seq_no});
    }
    return SourceGtids(std::move(merged));
  }
  if (floor.is_mysql() && opening.is_mysql()) {
    MysqlGtidSet merged = opening.mysql();
    merged.AddAll(floor.mysql());
    return SourceGtids(std::move(merged));
  }
  return opening;
}

absl::StatusOr<bool> FloorHolds(const SourceGtids& floor, const protocol::EventView& ev) {
  switch (ev.type()) {
    case protocol::kMariaGtidEvent: {
      if (!floor.is_mariadb()) return false;
      BR_ASSIGN_OR_RETURN(protocol::MariaGtid g, protocol::ParseMariaGtid(ev));
      return MariaFloorHolds(floor, g.domain_id, g.seq_no);
    }
    case protocol::kGtidEvent:
    case protocol::kGtidTaggedEvent: {
      if (!floor.is_mysql()) return false;
      BR_ASSIGN_OR_RETURN(protocol::MysqlGtid g, protocol::ParseMysqlGtid(ev));
      if (g.anonymous || g.gno <= 0) return false;
      return MysqlFloorHolds(floor, protocol::UuidToString(g.sid), g.tag,
                             static_cast<uint64_t>(g.gno));
    }
    default:
      return false;
  }
}

void GtidState::SetFloor(const SourceGtids& floor) {
  floor_ = floor;
  if (floor.is_mariadb()) {
    maria_ = floor.maria();
    flavour_ = Flavour::kMaria;
  } else if (floor.is_mysql()) {
    mysql_ = floor.mysql();
    flavour_ = Flavour::kMysql;
  }
}

bool GtidState::PendingIsBelowFloor() const {
  if (pending_maria_) return MariaFloorHolds(floor_, pending_maria_->domain, pending_maria_->seq);
  if (pending_mysql_) {
    return MysqlFloorHolds(floor_, pending_mysql_->uuid, pending_mysql_->tag, pending_mysql_->gno);
  }
  return false;
}

void GtidState::Commit() {
  if (PendingIsBelowFloor()) {
    DropPending();
    return;
  }
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
