#include "proxy/maria_dump_filter.h"

#include "absl/strings/str_cat.h"
#include "protocol/compat_events.h"
#include "protocol/event_type.h"
#include "protocol/gtid_events.h"
#include "protocol/server_error.h"
#include "protocol/status_macros.h"
#include "proxy/client_error.h"

namespace binrelay::proxy {
namespace {

using protocol::server_error::kMasterFatalReadingBinlog;
using protocol::server_error::kUnknownError;
using replication::MariaGtid;

constexpr uint32_t kGtidListUntilReached = 1u << 28;  // Gtid_list_log_event::FLAG_UNTIL_REACHED
constexpr uint16_t kErIncorrectGtidState = 1941;       // MariaDB ER_INCORRECT_GTID_STATE
constexpr uint16_t kErDuplicateGtidDomain = 1943;      // MariaDB ER_DUPLICATE_GTID_DOMAIN

std::string GtidTextOf(const MariaGtid& g) { return g.ToString(); }

absl::Status Fatal(std::string_view message) {
  return ClientError(absl::StatusCode::kFailedPrecondition, kMasterFatalReadingBinlog, message);
}

// slave_connection_state::load: one GTID per domain. Its errors are what
// the client gets (MariaDB's ER_INCORRECT_GTID_STATE, ER_DUPLICATE_GTID_DOMAIN).
absl::StatusOr<std::vector<MariaGtid>> ParseConnectionState(std::string_view text) {
  auto entries = replication::MariaBinlogState::ParseEntries(text);
  if (!entries.ok()) {
    return ClientError(absl::StatusCode::kInvalidArgument, kErIncorrectGtidState,
                       "Could not parse GTID list");
  }
  std::vector<MariaGtid> out;
  for (const auto& e : *entries) {
    for (const MariaGtid& g : out) {
      if (g.domain == e.domain_id) {
        return ClientError(absl::StatusCode::kInvalidArgument, kErDuplicateGtidDomain,
                           absl::StrCat("GTID ", e.domain_id, "-", e.server_id, "-", e.seq_no,
                                        " and ", GtidTextOf(g),
                                        " conflict (duplicate domain id ", e.domain_id, ")"));
      }
    }
    out.push_back(MariaGtid{e.domain_id, e.server_id, e.seq_no});
  }
  return out;
}

std::string GtidText(const MariaGtid& g) { return g.ToString(); }

// give_error_start_pos_missing_in_binlog, with the text mysql_binlog_send
// puts around it; the code is 1236 either way (the replica must not retry).
absl::Status MissingInBinlog(const MariaGtid& want, const replication::MariaBinlogState& state) {
  auto last = state.LastInDomain(want.domain);
  if (last && last->seq >= want.seq) {
    return Fatal(absl::StrCat(
        "Error: connecting slave requested to start from GTID ", GtidText(want),
        ", which is not in the master's binlog. Since the master's binlog contains GTIDs with "
        "higher sequence numbers, it probably means that the slave has diverged due to "
        "executing extra erroneous transactions"));
  }
  return Fatal(absl::StrCat("Error: connecting slave requested to start from GTID ",
                            GtidText(want), ", which is not in the master's binlog"));
}

// A GTID_LIST held every GTID of the requested state's domains at or before
// the file start (contains_all_slave_gtid).
bool ContainsAll(const std::vector<MariaGtid>& state,
                 const std::vector<protocol::MariaGtidList::Entry>& list) {
  for (size_t i = 0; i < list.size(); ++i) {
    const MariaGtid* g = nullptr;
    for (const MariaGtid& s : state) {
      if (s.domain == list[i].domain_id) g = &s;
    }
    if (g == nullptr) return false;
    if (g->server_id == list[i].server_id && g->seq <= list[i].seq_no) {
      if (g->seq < list[i].seq_no) return false;
      // Equal: fine only if it is the domain's last entry.
      if (i + 1 < list.size() && list[i + 1].domain_id == list[i].domain_id) return false;
    }
  }
  return true;
}

}  // namespace

MariaDumpFilter::Entry* MariaDumpFilter::FindEntry(ConnectionState& state, uint32_t domain) {
  for (Entry& e : state) {
    if (e.gtid.domain == domain) return &e;
  }
  return nullptr;
}

void MariaDumpFilter::Remove(ConnectionState& state, uint32_t domain) {
  for (auto it = state.begin(); it != state.end(); ++it) {
    if (it->gtid.domain == domain) {
      state.erase(it);
      return;
    }
  }
}

absl::StatusOr<MariaDumpFilter> MariaDumpFilter::Create(const DumpSettings& settings,
                                                        uint16_t flags,
                                                        const MariaDumpStart& start,
                                                        std::string* start_file) {
  MariaDumpFilter f;
  f.capability_ = settings.mariadb_capability;
  f.send_annotate_ = (flags & kDumpFlagSecond) != 0;
  f.skip_replication_ = settings.skip_replication;
  f.using_gtid_ = settings.slave_connect_state.has_value();
  f.may_be_behind_ = start.may_be_behind;
  if (!f.using_gtid_) return f;
  f.strict_ = settings.gtid_strict_mode;
  f.ignore_duplicates_ = settings.gtid_ignore_duplicates;
  f.store_state_ = start.binlog_state;
  BR_ASSIGN_OR_RETURN(std::vector<MariaGtid> want,
                      ParseConnectionState(*settings.slave_connect_state));
  for (const MariaGtid& g : want) f.state_.push_back(Entry{g});
  if (settings.until_gtid) {
    BR_ASSIGN_OR_RETURN(std::vector<MariaGtid> until, ParseConnectionState(*settings.until_gtid));
    f.until_.emplace();
    for (const MariaGtid& g : until) f.until_->push_back(Entry{g});
  }
  BR_RETURN_IF_ERROR(f.CheckStartPosition(start));
  BR_ASSIGN_OR_RETURN(*start_file, f.FindStartFile(start));
  return f;
}

absl::Status MariaDumpFilter::CheckStartPosition(const MariaDumpStart& start) {
  auto own = replication::MariaBinlogState::ParseEntries(start.own_slave_pos);
  std::vector<size_t> remove;
  for (size_t i = 0; i < state_.size(); ++i) {
    Entry& e = state_[i];
    MariaGtid& want = e.gtid;
    bool at_own_slave_pos = false;
    if (own.ok()) {
      for (const auto& o : *own) {
        at_own_slave_pos |= o.domain_id == want.domain && o.server_id == want.server_id &&
                            o.seq_no == want.seq;
      }
    }
    auto have = start.binlog_state.Find(want.domain, want.server_id);
    if (have && *have >= want.seq) {
      e.start_own_slave_pos = at_own_slave_pos;
      continue;
    }
    if (!at_own_slave_pos) {
      auto last = start.binlog_state.LastInDomain(want.domain);
      if (!last) {
        // Nothing in this domain here: another primary's domain. Checked
        // again if it ever shows up.
        e.start_on_empty_domain = true;
        continue;
      }
      if (ignore_duplicates_ && last->seq < want.seq) continue;
      if (until_) {
        Entry* u = FindEntry(*until_, want.domain);
        if (u == nullptr) continue;
        auto until_have = start.binlog_state.Find(u->gtid.domain, u->gtid.server_id);
        if (until_have && *until_have >= u->gtid.seq) {
          Remove(*until_, want.domain);
          continue;
        }
      }
      if (may_be_behind_ && last->server_id == want.server_id && last->seq < want.seq) {
        // The source may have it and binrelay not yet: the replica retries.
        return ClientError(absl::StatusCode::kUnavailable, kUnknownError, absl::StrCat(
            "Error: connecting slave requested to start from GTID ", GtidText(want),
            ", which binrelay has not stored yet (its store ends at ", GtidText(*last),
            " in domain ", want.domain, "); binrelay is behind its source, retry shortly"));
      }
      return MissingInBinlog(want, start.binlog_state);
    }
    // The position the source itself last applied as a replica: start
    // after what it logged since (or at its binlog end in that domain).
    auto own_logged = start.binlog_state.Find(want.domain, start.server_id);
    if (own_logged && *own_logged > want.seq) {
      want.server_id = start.server_id;
      e.start_own_slave_pos = true;
    } else if (auto last = start.binlog_state.LastInDomain(want.domain)) {
      want.server_id = last->server_id;
      want.seq = last->seq;
    } else {
      remove.push_back(i);
    }
  }
  for (auto it = remove.rbegin(); it != remove.rend(); ++it) {
    state_.erase(state_.begin() + static_cast<std::ptrdiff_t>(*it));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> MariaDumpFilter::FindStartFile(const MariaDumpStart& start) {
  std::vector<MariaGtid> want;
  for (const Entry& e : state_) want.push_back(e.gtid);
  for (auto it = start.files.rbegin(); it != start.files.rend(); ++it) {
    // Its FDE stored, its GTID_LIST not yet: its state could be past the
    // replica's position, so it cannot be the start.
    if (!it->first_gtids.known()) continue;
    if (it->first_gtids.is_mysql()) {
      return Fatal(absl::StrCat("binrelay's stored ", it->name,
                                " is from a MySQL source: it has no MariaDB GTIDs to start from"));
    }
    const std::vector<protocol::MariaGtidList::Entry> list = it->first_gtids.maria().ToGtidList();
    if (!ContainsAll(want, list)) continue;
    for (const auto& l : list) {
      Entry* e = FindEntry(state_, l.domain_id);
      if (e != nullptr && e->gtid.server_id == l.server_id && e->gtid.seq == l.seq_no) {
        // Requested exactly the last GTID before this file: nothing to skip.
        Remove(state_, l.domain_id);
      }
      if (until_) {
        Entry* u = FindEntry(*until_, l.domain_id);
        if (u != nullptr && u->gtid.server_id == l.server_id && u->gtid.seq <= l.seq_no) {
          Remove(*until_, l.domain_id);
        }
      }
    }
    return it->name;
  }
  std::string held = start.files.empty()
                         ? std::string("no files")
                         : absl::StrCat(start.files.front().name, " to ", start.files.back().name);
  return Fatal(absl::StrCat(
      "Could not find GTID state requested by slave in any binlog files. Probably the slave "
      "state is too old and required binlog files have been purged. (binrelay's store holds ",
      held, ")"));
}

bool MariaDumpFilter::position_reached() const {
  for (const Entry& e : state_) {
    if (!e.start_on_empty_domain) return false;
  }
  return true;
}

absl::Status MariaDumpFilter::OnGtid(const protocol::EventView& ev) {
  auto parsed = protocol::ParseMariaGtid(ev);
  if (!parsed.ok()) return Fatal("Failed to read Gtid_log_event: corrupt binlog");
  const MariaGtid g{parsed->domain_id, parsed->server_id, parsed->seq_no};
  const SkipGroup group = parsed->standalone() ? SkipGroup::kStandalone : SkipGroup::kTransaction;
  until_binlog_state_.Update(g);
  if (!state_.empty()) {
    if (Entry* e = FindEntry(state_, g.domain)) {
      if (e->start_on_empty_domain) {
        auto have = store_state_.Find(g.domain, e->gtid.server_id);
        if (!have || *have < e->gtid.seq) return MissingInBinlog(e->gtid, store_state_);
        e->start_on_empty_domain = false;
      }
      if (g.server_id != e->gtid.server_id || g.seq <= e->gtid.seq) skip_ = group;
      if (g.server_id == e->gtid.server_id && g.seq >= e->gtid.seq) {
        if (strict_ && g.seq > e->gtid.seq && !e->start_own_slave_pos) {
          return Fatal(absl::StrCat(
              "The binlog on the master is missing the GTID ", GtidText(e->gtid),
              " requested by the slave (even though both a prior and a subsequent sequence "
              "number does exist), and GTID strict mode is enabled"));
        }
        fake_gtid_list_due_ = true;
        Remove(state_, g.domain);
      }
    }
  }
  if (until_) {
    Entry* u = FindEntry(*until_, g.domain);
    if (u == nullptr) {
      skip_ = group;  // this domain already reached its UNTIL position
    } else if (g.server_id == u->gtid.server_id && g.seq >= u->gtid.seq) {
      const uint64_t until_seq = u->gtid.seq;
      Remove(*until_, g.domain);
      if (until_->empty()) {
        until_group_ = parsed->standalone() ? UntilGroup::kStopAfterStandalone
                                            : UntilGroup::kStopAfterTransaction;
      }
      if (g.seq > until_seq) skip_ = group;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<MariaDumpFilter::Action> MariaDumpFilter::OnEvent(const protocol::EventView& ev,
                                                                 bool with_crc,
                                                                 std::string* rewritten) {
  const uint8_t type = ev.type();
  if (type == protocol::kGtidListEvent && using_gtid_ && until_) {
    auto list = protocol::ParseMariaGtidList(ev);
    if (!list.ok()) return Fatal("Failed to read Gtid_list_log_event: corrupt binlog");
    until_binlog_state_.Load(list->gtids);
  }
  if (type == protocol::kMariaGtidEvent && using_gtid_ && (!state_.empty() || until_)) {
    BR_RETURN_IF_ERROR(OnGtid(ev));
  }
  // Skip the rest of a group the replica already has (a GTID-aware replica
  // tolerates the hole).
  switch (skip_) {
    case SkipGroup::kStandalone:
      if (!protocol::IsPartOfEventGroup(type)) skip_ = SkipGroup::kNot;
      return Action::kSkip;
    case SkipGroup::kTransaction:
      if (type == protocol::kXidEvent ||
          (type == protocol::kQueryEvent && protocol::QueryIsCommitOrRollback(ev.bytes, with_crc))) {
        skip_ = SkipGroup::kNot;
      }
      return Action::kSkip;
    case SkipGroup::kNot:
      break;
  }
  bool rewrite = false;
  if (type == protocol::kAnnotateRowsEvent && !send_annotate_) {
    if (capability_ >= maria_capability::kTolerateHoles) return Action::kSkip;
    if (capability_ < maria_capability::kAnnotate) {
      rewritten->assign(ev.bytes);
      if (!protocol::RewriteAsDummyEvent(rewritten, with_crc).ok()) {
        return Fatal("Failed to replace row annotate event with dummy: too small event.");
      }
      rewrite = true;
    }
  }
  if (type == protocol::kMariaGtidEvent && capability_ < maria_capability::kGtid) {
    rewritten->assign(ev.bytes);
    bool drop = false;
    if (!protocol::RewriteGtidForOldReplica(rewritten, with_crc,
                                            capability_ < maria_capability::kTolerateHoles, &drop)
             .ok()) {
      return Fatal("Failed to replace GTID event with backwards-compatible event: corrupt event.");
    }
    if (drop) return Action::kSkip;
    rewrite = true;
  }
  if ((type == protocol::kBinlogCheckpointEvent &&
       capability_ < maria_capability::kBinlogCheckpoint) ||
      (type == protocol::kGtidListEvent && capability_ < maria_capability::kGtid)) {
    if (capability_ >= maria_capability::kTolerateHoles) return Action::kSkip;
    rewritten->assign(ev.bytes);
    if (!protocol::RewriteAsDummyEvent(rewritten, with_crc).ok()) {
      return Fatal(
          "Failed to replace binlog checkpoint or gtid list event with dummy: too small event.");
    }
    rewrite = true;
  }
  if (skip_replication_ && (ev.header.flags & protocol::kFlagMariaSkipReplication) != 0) {
    return Action::kSkip;
  }
  return rewrite ? Action::kSendRewritten : Action::kSend;
}

bool MariaDumpFilter::TakeFakeGtidList(std::vector<protocol::MariaGtidList::Entry>* entries,
                                       uint32_t* flags) {
  if (!fake_gtid_list_due_ || skip_ != SkipGroup::kNot) return false;
  fake_gtid_list_due_ = false;
  *entries = until_binlog_state_.ToGtidList();
  *flags = 0;
  return true;
}

bool MariaDumpFilter::UntilReached(const protocol::EventView& ev, bool with_crc,
                                   std::vector<protocol::MariaGtidList::Entry>* entries,
                                   uint32_t* flags) {
  if (!until_) return false;
  switch (until_group_) {
    case UntilGroup::kNotDone:
      return false;
    case UntilGroup::kStopAfterStandalone:
      if (protocol::IsPartOfEventGroup(ev.type())) return false;
      break;
    case UntilGroup::kStopAfterTransaction:
      if (ev.type() != protocol::kXidEvent &&
          (ev.type() != protocol::kQueryEvent ||
           !protocol::QueryIsCommitOrRollback(ev.bytes, with_crc))) {
        return false;
      }
      break;
  }
  *entries = until_binlog_state_.ToGtidList();
  *flags = kGtidListUntilReached;
  return true;
}

void MariaDumpFilter::OnFileStart() {
  if (until_ && until_->empty()) until_group_ = UntilGroup::kStopAfterStandalone;
}

}  // namespace binrelay::proxy
