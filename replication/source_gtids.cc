#include "replication/source_gtids.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "protocol/event_type.h"
#include "protocol/gtid_events.h"
#include "protocol/status_macros.h"

namespace binrelay::replication {

std::string_view GtidFlavourName(GtidFlavour f) {
  switch (f) {
    case GtidFlavour::kMariaDb:
      return "mariadb";
    case GtidFlavour::kMysql:
      return "mysql";
    case GtidFlavour::kNone:
      break;
  }
  return "none";
}

absl::StatusOr<SourceGtids> SourceGtids::Parse(GtidFlavour flavour, std::string_view text) {
  switch (flavour) {
    case GtidFlavour::kMariaDb: {
      BR_ASSIGN_OR_RETURN(auto entries, MariaBinlogState::ParseEntries(text));
      MariaBinlogState state;
      state.Load(entries);
      return SourceGtids(std::move(state));
    }
    case GtidFlavour::kMysql: {
      BR_ASSIGN_OR_RETURN(MysqlGtidSet set, MysqlGtidSet::Parse(text));
      return SourceGtids(std::move(set));
    }
    case GtidFlavour::kNone:
      break;
  }
  if (!absl::StripAsciiWhitespace(AV(text)).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("GTID state '", AV(text), "' given without its flavour (mariadb or mysql)"));
  }
  return SourceGtids();
}

std::string SourceGtids::PositionText() const {
  // MySQL's position is its whole set; only MariaDB's differs from its state.
  return is_mariadb() ? maria_.PositionString() : StateText();
}

std::string SourceGtids::StateText() const {
  switch (flavour_) {
    case GtidFlavour::kMariaDb:
      return maria_.ToString();
    case GtidFlavour::kMysql:
      return mysql_.ToString();
    case GtidFlavour::kNone:
      break;
  }
  return std::string();
}

absl::StatusOr<SourceGtids> GtidsOfStateEvent(const protocol::EventView& ev) {
  if (ev.type() == protocol::kGtidListEvent) {
    BR_ASSIGN_OR_RETURN(protocol::MariaGtidList list, protocol::ParseMariaGtidList(ev));
    MariaBinlogState state;
    state.Load(list.gtids);
    return SourceGtids(std::move(state));
  }
  if (ev.type() == protocol::kPreviousGtidsEvent) {
    BR_ASSIGN_OR_RETURN(std::string text, protocol::DecodeGtidSetText(ev.body));
    BR_ASSIGN_OR_RETURN(MysqlGtidSet set, MysqlGtidSet::Parse(text));
    return SourceGtids(std::move(set));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("event type ", ev.type(), " at ", ev.offset, " carries no GTID state"));
}

namespace {

void AppendGtid(std::string* out, const MariaGtid& g) {
  absl::StrAppend(out, out->empty() ? "" : ",", g.domain, "-", g.server_id, "-", g.seq);
}

GtidComparison CompareMaria(const MariaBinlogState& stored, const MariaBinlogState& candidate) {
  GtidComparison c;
  std::set<uint32_t> domains;
  std::set<uint32_t> named;  // domains whose last GTID store_lacks names
  for (const auto& e : stored.ToGtidList()) domains.insert(e.domain_id);
  for (const auto& e : candidate.ToGtidList()) domains.insert(e.domain_id);
  for (uint32_t d : domains) {
    std::optional<MariaGtid> mine = stored.LastInDomain(d);
    std::optional<MariaGtid> theirs = candidate.LastInDomain(d);
    if (mine) {
      // The candidate's binlog holds the stored domain's last GTID if its
      // state has that server at that seq_no or later.
      std::optional<uint64_t> seq = candidate.Find(d, mine->server_id);
      if (!seq || *seq < mine->seq) AppendGtid(&c.candidate_lacks, *mine);
    }
    if (theirs && (!mine || theirs->seq > mine->seq ||
                   (theirs->seq == mine->seq && theirs->server_id != mine->server_id))) {
      AppendGtid(&c.store_lacks, *theirs);
      named.insert(d);
    }
  }
  // Per server too: a server binrelay left that took writes afterwards
  // (an old primary back from the dead) has, in a domain, a server's seq_no
  // past the store's for that server, below the domain's last. The state
  // keeps each server's last GTID per domain (MariaDB's rpl_binlog_state).
  for (const protocol::MariaGtidList::Entry& e : candidate.ToGtidList()) {
    std::optional<MariaGtid> last = candidate.LastInDomain(e.domain_id);
    if (named.count(e.domain_id) && last && last->server_id == e.server_id) continue;
    std::optional<uint64_t> seq = stored.Find(e.domain_id, e.server_id);
    if (!seq || *seq < e.seq_no) AppendGtid(&c.store_lacks, {e.domain_id, e.server_id, e.seq_no});
  }
  c.contains_stored = c.candidate_lacks.empty();
  return c;
}

}  // namespace

GtidComparison CompareGtids(const SourceGtids& stored, const SourceGtids& candidate) {
  GtidComparison c;
  if (!stored.known()) {  // nothing stored that a GTID could name
    c.contains_stored = true;
    c.store_lacks = candidate.PositionText();
    return c;
  }
  if (stored.flavour() != candidate.flavour()) {
    c.candidate_lacks = absl::StrCat(stored.PositionText(), " (the store holds a ",
                                     AV(GtidFlavourName(stored.flavour())), " stream, the candidate ",
                                     AV(GtidFlavourName(candidate.flavour())), " GTIDs)");
    return c;
  }
  if (stored.is_mariadb()) return CompareMaria(stored.maria(), candidate.maria());
  c.candidate_lacks = stored.mysql().Minus(candidate.mysql()).ToString();
  c.store_lacks = candidate.mysql().Minus(stored.mysql()).ToString();
  c.contains_stored = c.candidate_lacks.empty();
  return c;
}

}  // namespace binrelay::replication
