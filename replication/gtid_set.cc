#include "replication/gtid_set.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "protocol/byte_cursor.h"
#include "protocol/status_macros.h"

namespace binrelay::replication {
namespace {

bool IsUuid(absl::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !absl::ascii_isxdigit(s[i])) return false;
  }
  return true;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  return absl::ascii_tolower(c) - 'a' + 10;
}

}  // namespace

std::string MariaGtid::ToString() const { return absl::StrCat(domain, "-", server_id, "-", seq); }

absl::StatusOr<MariaGtidPosition> MariaGtidPosition::Parse(std::string_view text) {
  MariaGtidPosition pos;
  for (absl::string_view part : absl::StrSplit(AV(text), ',', absl::SkipWhitespace())) {
    part = absl::StripAsciiWhitespace(part);
    std::vector<absl::string_view> f = absl::StrSplit(part, '-');
    MariaGtid g;
    if (f.size() != 3 || !absl::SimpleAtoi(f[0], &g.domain) ||
        !absl::SimpleAtoi(f[1], &g.server_id) || !absl::SimpleAtoi(f[2], &g.seq)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad MariaDB GTID '", part, "': expected domain-server-seq, e.g. 0-1-100"));
    }
    if (pos.domains_.contains(g.domain)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "MariaDB GTID position names domain ", g.domain, " twice: give one GTID per domain"));
    }
    pos.domains_[g.domain] = g;
  }
  return pos;
}

std::string MariaGtidPosition::ToString() const {
  std::vector<std::string> parts;
  for (const auto& [domain, g] : domains_) parts.push_back(g.ToString());
  return absl::StrJoin(parts, ",");
}

bool MariaGtidPosition::IsAtOrBefore(const MariaGtidPosition& other) const {
  for (const auto& [domain, g] : domains_) {
    auto it = other.domains_.find(domain);
    if (it == other.domains_.end() || it->second.seq < g.seq) return false;
  }
  return true;
}

absl::StatusOr<MysqlGtidSet> MysqlGtidSet::Parse(std::string_view text) {
  MysqlGtidSet set;
  std::string cleaned;
  for (char c : text) {
    if (!absl::ascii_isspace(c)) cleaned.push_back(c);
  }
  for (absl::string_view entry : absl::StrSplit(cleaned, ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> f = absl::StrSplit(entry, ':');
    if (f.size() < 2 || !IsUuid(f[0])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad MySQL GTID set entry '", entry, "': expected uuid:interval[:interval...]"));
    }
    std::string uuid = absl::AsciiStrToLower(f[0]);
    std::string tag;
    for (size_t i = 1; i < f.size(); ++i) {
      absl::string_view iv = f[i];
      if (!iv.empty() && !absl::ascii_isdigit(iv[0])) {  // a tag switches the current tag
        tag = absl::AsciiStrToLower(iv);
        continue;
      }
      std::vector<absl::string_view> ends = absl::StrSplit(iv, '-');
      Interval interval{};
      if (ends.size() > 2 || !absl::SimpleAtoi(ends[0], &interval.start) ||
          (ends.size() == 2 && !absl::SimpleAtoi(ends[1], &interval.end)) ||
          interval.start == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("bad GTID interval '", iv, "' in '", entry, "'"));
      }
      if (ends.size() == 1) interval.end = interval.start;
      if (interval.end < interval.start) {
        return absl::InvalidArgumentError(
            absl::StrCat("GTID interval '", iv, "' ends before it starts"));
      }
      set.AddInterval({uuid, tag}, interval);
    }
  }
  return set;
}

void MysqlGtidSet::AddInterval(const std::pair<std::string, std::string>& key, Interval iv) {
  auto& ivs = sids_[key];
  ivs.push_back(iv);
  std::sort(ivs.begin(), ivs.end(), [](auto a, auto b) { return a.start < b.start; });
  std::vector<Interval> merged;
  for (const Interval& cur : ivs) {
    if (!merged.empty() && cur.start <= merged.back().end + 1) {
      merged.back().end = std::max(merged.back().end, cur.end);
    } else {
      merged.push_back(cur);
    }
  }
  ivs = std::move(merged);
}

void MysqlGtidSet::AddAll(const MysqlGtidSet& other) {
  for (const auto& [key, ivs] : other.sids_) {
    for (const Interval& iv : ivs) AddInterval(key, iv);
  }
}

bool MysqlGtidSet::IsSubsetOf(const MysqlGtidSet& other) const {
  for (const auto& [key, ivs] : sids_) {
    auto it = other.sids_.find(key);
    if (it == other.sids_.end()) return false;
    // Both lists are sorted and merged: each interval must lie inside one of
    // the other's.
    for (const Interval& iv : ivs) {
      bool covered = false;
      for (const Interval& o : it->second) covered |= o.start <= iv.start && iv.end <= o.end;
      if (!covered) return false;
    }
  }
  return true;
}

MysqlGtidSet MysqlGtidSet::Minus(const MysqlGtidSet& other) const {
  MysqlGtidSet out;
  for (const auto& [key, ivs] : sids_) {
    auto it = other.sids_.find(key);
    if (it == other.sids_.end()) {
      out.sids_[key] = ivs;
      continue;
    }
    // Both lists are sorted, merged and disjoint: walk them together.
    std::vector<Interval> left;
    size_t j = 0;
    const std::vector<Interval>& cut = it->second;
    for (Interval iv : ivs) {
      while (j < cut.size() && cut[j].end < iv.start) ++j;
      uint64_t from = iv.start;
      bool covered_to_end = false;  // no iv.end + 1: gno may be 2^64 - 1 here
      for (size_t k = j; k < cut.size() && cut[k].start <= iv.end; ++k) {
        if (cut[k].start > from) left.push_back({from, cut[k].start - 1});
        if (cut[k].end >= iv.end) {
          covered_to_end = true;
          break;
        }
        from = std::max(from, cut[k].end + 1);
      }
      if (!covered_to_end) left.push_back({from, iv.end});
    }
    if (!left.empty()) out.sids_[key] = std::move(left);
  }
  return out;
}

bool MysqlGtidSet::operator==(const MysqlGtidSet& other) const { return sids_ == other.sids_; }

bool MysqlGtidSet::Contains(std::string_view uuid, std::string_view tag, uint64_t gno) const {
  auto it = sids_.find({absl::AsciiStrToLower(AV(uuid)), absl::AsciiStrToLower(AV(tag))});
  if (it == sids_.end()) return false;
  for (const Interval& iv : it->second) {
    if (iv.start <= gno && gno <= iv.end) return true;
  }
  return false;
}

void MysqlGtidSet::Add(std::string_view uuid, std::string_view tag, uint64_t gno) {
  AddInterval({absl::AsciiStrToLower(AV(uuid)), absl::AsciiStrToLower(AV(tag))}, {gno, gno});
}

std::string MysqlGtidSet::ToString() const {
  std::vector<std::string> entries;
  std::string last_uuid;
  for (const auto& [key, ivs] : sids_) {
    std::string s = key.first;
    if (!key.second.empty()) absl::StrAppend(&s, ":", key.second);
    for (const Interval& iv : ivs) {
      if (iv.start == iv.end) {
        absl::StrAppend(&s, ":", iv.start);
      } else {
        absl::StrAppend(&s, ":", iv.start, "-", iv.end);
      }
    }
    entries.push_back(std::move(s));
  }
  return absl::StrJoin(entries, ",");
}

std::string MysqlGtidSet::Encode() const {
  bool tagged = false;
  for (const auto& [key, ivs] : sids_) tagged |= !key.second.empty();
  std::string out;
  uint64_t n = sids_.size();
  // Tagged format marker: top byte 1, low byte 1, count in bits 8..55.
  protocol::AppendFixed(&out, tagged ? ((1ull << 56) | (n << 8) | 1) : n, 8);
  for (const auto& [key, ivs] : sids_) {
    const std::string& uuid = key.first;
    for (size_t i = 0; i < uuid.size();) {
      if (uuid[i] == '-') {
        ++i;
        continue;
      }
      out.push_back(static_cast<char>(HexValue(uuid[i]) << 4 | HexValue(uuid[i + 1])));
      i += 2;
    }
    if (tagged) {
      // mysql::serialization varlen: a 1-byte length is stored as len << 1.
      out.push_back(static_cast<char>(key.second.size() << 1));
      out.append(key.second);
    }
    protocol::AppendFixed(&out, ivs.size(), 8);
    for (const Interval& iv : ivs) {
      protocol::AppendFixed(&out, iv.start, 8);
      protocol::AppendFixed(&out, iv.end + 1, 8);  // exclusive on the wire
    }
  }
  return out;
}

}  // namespace binrelay::replication
