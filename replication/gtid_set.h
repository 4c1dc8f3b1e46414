// GTID positions of both flavours.
//
// MariaDB: a GTID is domain-server-seq; a replication position is at most one
// GTID per domain ("0-1-100,1-2-5"), the last transaction applied in that domain.
// MySQL: a GTID is uuid:gno (8.3+: uuid:tag:gno); an executed set is a union of
// inclusive intervals per uuid/tag ("uuid:1-5:7,uuid2:1-3").
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace binrelay::replication {

struct MariaGtid {
  uint32_t domain = 0;
  uint32_t server_id = 0;
  uint64_t seq = 0;
  std::string ToString() const;
};

class MariaGtidPosition {
 public:
  static absl::StatusOr<MariaGtidPosition> Parse(std::string_view text);
  // Records `gtid` as the last transaction of its domain.
  void Update(const MariaGtid& gtid) { domains_[gtid.domain] = gtid; }
  bool empty() const { return domains_.empty(); }
  const std::map<uint32_t, MariaGtid>& domains() const { return domains_; }
  // In every domain of this position, `other` is at or past it (same domain,
  // seq_no >=): a stream positioned at `other` has passed this point.
  bool IsAtOrBefore(const MariaGtidPosition& other) const;
  // "0-1-100,1-2-5", domains ascending; the form @slave_connect_state takes.
  std::string ToString() const;

 private:
  std::map<uint32_t, MariaGtid> domains_;
};

class MysqlGtidSet {
 public:
  // Accepts "uuid:1-5:7,uuid2:3" and tagged "uuid:tag:1-5"; whitespace and
  // newlines (as @@gtid_executed prints) are ignored.
  static absl::StatusOr<MysqlGtidSet> Parse(std::string_view text);
  void Add(std::string_view uuid, std::string_view tag, uint64_t gno);
  // This set becomes the union of itself and `other`.
  void AddAll(const MysqlGtidSet& other);
  bool empty() const { return sids_.empty(); }
  // Every GTID of this set is also in `other`.
  bool IsSubsetOf(const MysqlGtidSet& other) const;
  // The GTIDs of this set that `other` lacks (this minus other).
  MysqlGtidSet Minus(const MysqlGtidSet& other) const;
  bool operator==(const MysqlGtidSet& other) const;
  // `uuid` in canonical text (any case), `tag` "" when untagged.
  bool Contains(std::string_view uuid, std::string_view tag, uint64_t gno) const;
  std::string ToString() const;
  // The binary encoding COM_BINLOG_DUMP_GTID and PREVIOUS_GTIDS use
  // (sql/rpl_gtid_set.cc Gtid_set::encode):
  // untagged unless a tag is present.
  std::string Encode() const;

 private:
  struct Interval {
    uint64_t start;  // inclusive
    uint64_t end;    // inclusive
    bool operator==(const Interval&) const = default;
  };
  // Key: (uuid in lowercase canonical text, tag).
  std::map<std::pair<std::string, std::string>, std::vector<Interval>> sids_;
  void AddInterval(const std::pair<std::string, std::string>& key, Interval iv);
};

}  // namespace binrelay::replication
