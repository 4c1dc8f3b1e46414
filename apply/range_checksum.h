// RangeChecksum: COUNT(*) and the BIT_XOR of a 64-bit SHA-256 row hash
// over one primary-key range of a table, computed by the server over each
// column's bytes or the exact text the copier transfers (range_copier.h
// CopyTextExpression) and the NULL flags, so source and target compare
// alike whatever their session time zones. Both sides must be summed with
// the same shape (the source's): the expression depends on nullability
// and character sets. A move checks every range this way before cutover and
// repairs one that differs: its target rows are deleted and copied again.
// The servers' sessions must be the move's (move_session.h): its sql_mode
// has no EMPTY_STRING_IS_NULL (MariaDB), under which the '' standing for a
// NULL column would make the row's text NULL and drop the row from the sum
// on both sides, nor PAD_CHAR_TO_FULL_LENGTH.
//
// Thread safety: plain values; one caller per SqlSource.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "apply/key_range_chunker.h"
#include "apply/table_shape.h"
#include "replication/sql_source.h"

namespace binrelay::apply {

struct RangeSum {
  uint64_t rows = 0;
  uint64_t hash = 0;  // BIT_XOR of each row's 64-bit hash
  bool operator==(const RangeSum&) const = default;
};

class RangeChecksum {
 public:
  // Which SQL sums the row hashes; both give the same RangeSum.
  enum class Server {
    kMariaDb,  // BIT_XOR of integers: the hash's first 16 hex digits as a number
    kMySql,    // BIT_XOR of binary strings (MySQL 8.0+), the first 8 bytes kept
  };
  // The form for a server by its SELECT VERSION(): kMySql from MySQL 8.0
  // on, kMariaDb otherwise (MariaDB, and MySQL 5.7, which XORs integers only).
  static Server ServerFor(std::string_view version);
  // For `shape` (source or target: the same columns), read from `db`.`table`.
  explicit RangeChecksum(const TableShape& shape, Server server = Server::kMariaDb);

  // The range's sum on `server`; `where` is a KeyRange's condition.
  absl::StatusOr<RangeSum> Sum(replication::SqlSource& server, const std::string& where) const;

 private:
  std::string select_;  // everything up to WHERE
  Server server_;
};

}  // namespace binrelay::apply
