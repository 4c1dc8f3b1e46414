#include "replication/maria_binlog_state.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "protocol/status_macros.h"

namespace binrelay::replication {

void MariaBinlogState::Load(const std::vector<protocol::MariaGtidList::Entry>& entries) {
  domains_.clear();
  for (const auto& e : entries) Update(MariaGtid{e.domain_id, e.server_id, e.seq_no});
}

void MariaBinlogState::Update(const MariaGtid& gtid) {
  Domain* d = nullptr;
  for (Domain& cand : domains_) {
    if (cand.id == gtid.domain) d = &cand;
  }
  if (d == nullptr) {
    domains_.push_back(Domain{gtid.domain, {}, 0});
    d = &domains_.back();
  }
  for (size_t i = 0; i < d->servers.size(); ++i) {
    if (d->servers[i].server_id == gtid.server_id) {
      d->servers[i].seq = gtid.seq;
      d->last = i;
      return;
    }
  }
  d->servers.push_back(gtid);
  d->last = d->servers.size() - 1;
}

std::optional<uint64_t> MariaBinlogState::Find(uint32_t domain, uint32_t server_id) const {
  for (const Domain& d : domains_) {
    if (d.id != domain) continue;
    for (const MariaGtid& g : d.servers) {
      if (g.server_id == server_id) return g.seq;
    }
  }
  return std::nullopt;
}

std::optional<MariaGtid> MariaBinlogState::LastInDomain(uint32_t domain) const {
  for (const Domain& d : domains_) {
    if (d.id == domain && !d.servers.empty()) return d.servers[d.last];
  }
  return std::nullopt;
}

std::vector<protocol::MariaGtidList::Entry> MariaBinlogState::ToGtidList() const {
  std::vector<protocol::MariaGtidList::Entry> out;
  for (const Domain& d : domains_) {
    for (size_t i = 0; i < d.servers.size(); ++i) {
      if (i == d.last) continue;
      out.push_back({d.id, d.servers[i].server_id, d.servers[i].seq});
    }
    if (!d.servers.empty()) {
      const MariaGtid& last = d.servers[d.last];
      out.push_back({d.id, last.server_id, last.seq});
    }
  }
  return out;
}

MariaGtidPosition MariaBinlogState::ToPosition() const {
  MariaGtidPosition p;
  for (const Domain& d : domains_) {
    if (!d.servers.empty()) p.Update(d.servers[d.last]);
  }
  return p;
}

std::string MariaBinlogState::PositionString() const {
  std::vector<const MariaGtid*> last;
  last.reserve(domains_.size());
  for (const Domain& d : domains_) {
    if (!d.servers.empty()) last.push_back(&d.servers[d.last]);
  }
  std::sort(last.begin(), last.end(),
            [](const MariaGtid* a, const MariaGtid* b) { return a->domain < b->domain; });
  std::string out;
  for (const MariaGtid* g : last) {
    absl::StrAppend(&out, out.empty() ? "" : ",", g->domain, "-", g->server_id, "-", g->seq);
  }
  return out;
}

std::string MariaBinlogState::ToString() const {
  std::string out;
  for (const auto& e : ToGtidList()) {
    absl::StrAppend(&out, out.empty() ? "" : ",", e.domain_id, "-", e.server_id, "-", e.seq_no);
  }
  return out;
}

bool MariaBinlogState::operator==(const MariaBinlogState& other) const {
  if (domains_.size() != other.domains_.size()) return false;
  for (size_t i = 0; i < domains_.size(); ++i) {
    const Domain& a = domains_[i];
    const Domain& b = other.domains_[i];
    if (a.id != b.id || a.last != b.last || a.servers.size() != b.servers.size()) return false;
    for (size_t j = 0; j < a.servers.size(); ++j) {
      if (a.servers[j].server_id != b.servers[j].server_id || a.servers[j].seq != b.servers[j].seq) {
        return false;
      }
    }
  }
  return true;
}

absl::StatusOr<std::vector<protocol::MariaGtidList::Entry>> MariaBinlogState::ParseEntries(
    std::string_view text) {
  std::vector<protocol::MariaGtidList::Entry> out;
  if (absl::StripAsciiWhitespace(AV(text)).empty()) return out;
  for (absl::string_view part : absl::StrSplit(AV(text), ',')) {
    absl::string_view g = absl::StripAsciiWhitespace(part);
    std::vector<absl::string_view> f = absl::StrSplit(g, '-');
    protocol::MariaGtidList::Entry e{};
    if (f.size() != 3 || !absl::SimpleAtoi(f[0], &e.domain_id) ||
        !absl::SimpleAtoi(f[1], &e.server_id) || !absl::SimpleAtoi(f[2], &e.seq_no)) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", g, "' is not a MariaDB GTID (domain-server-seq) in '", AV(text), "'"));
    }
    out.push_back(e);
  }
  return out;
}

}  // namespace binrelay::replication
