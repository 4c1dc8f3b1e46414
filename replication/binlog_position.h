// BinlogPosition: a place in the source's binlog, "file:offset", plus the
// parsing of --start values.
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace binrelay::replication {

struct BinlogPosition {
  std::string file;
  uint64_t offset = 4;  // first event after the 4-byte magic

  std::string ToString() const;
  bool operator==(const BinlogPosition&) const = default;
};

// Where a dump starts, as given by --start.
struct StartSpec {
  enum class Kind { kCurrent, kEarliest, kPosition, kGtid };
  Kind kind = Kind::kCurrent;
  BinlogPosition position;  // kPosition
  std::string gtid_set;     // kGtid: MariaDB "d-s-n,..." or MySQL "uuid:1-5,..."
};

// Parses "current", "earliest", "FILE:POS" or "gtid:SET".
absl::StatusOr<StartSpec> ParseStartSpec(std::string_view text);

}  // namespace binrelay::replication
