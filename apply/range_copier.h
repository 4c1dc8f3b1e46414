// RangeCopier: the rows of one primary-key range (key_range_chunker.h)
// copied from the source to the target exactly, as a move's copier does:
// one SELECT of the range, then multi-row INSERT IGNORE (a row a change
// already put on the target is left as it is: copy_watermarks.h).
//
// Values travel as text the server prints exactly and takes back as it
// was: integers, DECIMAL and temporal values as their text (TIMESTAMP read
// with time_zone '+00:00', as the target session writes it), DOUBLE as
// the server's round-trip text and FLOAT widened to DOUBLE first (its own
// text has 6 digits), character and binary
// strings as the bytes stored (read with character_set_results = binary)
// written back as a literal introduced by the column's character set, as
// the apply path writes them (sql_literal.h: no conversion touches the
// bytes; half the size of hex and cheaper for both servers), BIT, ENUM and
// SET as their numbers, GEOMETRY and other types without a character set
// as HEX() written back as a hex literal. Generated columns are left out.
// A warning from the target other than a duplicate primary key fails the
// copy (INSERT IGNORE would otherwise hide an inexact row; the first 64 of
// a statement's warnings are checked). Known limit: a range's rows are
// read whole, so ranges are sized to hold a bounded number of rows.
//
// Thread safety: one copier thread per instance.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "apply/key_range_chunker.h"
#include "apply/table_shape.h"
#include "apply/target_session.h"
#include "replication/sql_source.h"

namespace binrelay::apply {

// The SELECT expression that reads column `c` as text the copier can write
// back exactly (see above); also what checksums compare.
std::string CopyTextExpression(const ShapeColumn& c);

class RangeCopier {
 public:
  // `source` and `target` describe the same table (CheckTargetShape).
  static absl::StatusOr<RangeCopier> Create(const TableShape& source, const TableShape& target);

  // Copies `range`'s rows; returns how many the source returned. Statements
  // hold at most `batch_bytes` of SQL (a larger row goes alone).
  absl::StatusOr<uint64_t> Copy(replication::SqlSource& source, TargetSession& target,
                                const KeyRange& range, const KeyRangeChunker& chunker,
                                size_t batch_bytes);

 private:
  enum class Form : uint8_t { kNumber, kQuoted, kBytes, kHex };
  struct Column {
    Form form;
    std::string charset;  // kBytes, kHex: the introducer ("binary"; "" for none)
  };
  RangeCopier() = default;

  std::vector<Column> columns_;
  std::string select_list_;  // the SELECT expressions, in column order
  std::string insert_head_;  // "INSERT IGNORE INTO `db`.`t` (`a`,...) VALUES "
};

}  // namespace binrelay::apply
