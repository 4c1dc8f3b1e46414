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
// With `bulk` (a MariaDB target that takes COM_STMT_BULK_EXECUTE), the rows
// go as one bulk command of a one-row INSERT IGNORE instead of VALUES text:
// integers, DOUBLE and FLOAT in binary, DECIMAL and temporal values as their
// text in a parameter, strings and HEX()-read values as binary-string
// parameters (taken without conversion: Item_param::setup_conversion_blob).
// The target then parses no literal, which is most of its cost per row.
// A warning from the target other than a duplicate primary key fails the
// copy (INSERT IGNORE would otherwise hide an inexact row; the first 64 of
// a statement's warnings are checked). Known limit: a range's rows are
// read whole, so ranges are sized to hold a bounded number of rows.
//
// Thread safety: Copy may run on several threads at once (one chunk each).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "apply/key_range_chunker.h"
#include "apply/table_shape.h"
#include "apply/target_session.h"
#include "protocol/bulk_execute.h"
#include "protocol/text_rows.h"
#include "replication/sql_source.h"

namespace binrelay::apply {

// The SELECT expression that reads column `c` as text the copier can write
// back exactly (see above); also what checksums compare.
std::string CopyTextExpression(const ShapeColumn& c);

class RangeCopier {
 public:
  // `source` and `target` describe the same table (CheckTargetShape).
  // `bulk`: write with COM_STMT_BULK_EXECUTE where the target takes it.
  static absl::StatusOr<RangeCopier> Create(const TableShape& source, const TableShape& target,
                                            bool bulk);

  // Copies `range`'s rows; returns how many the source returned. Statements
  // (or bulk commands) hold at most `batch_bytes` (a larger row goes alone).
  absl::StatusOr<uint64_t> Copy(replication::SqlSource& source, TargetSession& target,
                                const KeyRange& range, const KeyRangeChunker& chunker,
                                size_t batch_bytes) const;

 private:
  enum class Form : uint8_t { kNumber, kQuoted, kBytes, kHex };
  // A kNumber column's bulk parameter.
  enum class Number : uint8_t { kSigned, kUnsigned, kDouble, kDecimal };
  struct Column {
    Form form;
    Number number = Number::kSigned;
    std::string charset;  // kBytes, kHex: the introducer ("binary"; "" for none)
  };
  RangeCopier() = default;
  absl::StatusOr<uint64_t> CopyText(const protocol::TextRows& rows,
                                    TargetSession& target, size_t batch_bytes,
                                    const std::function<std::string()>& where) const;
  absl::StatusOr<uint64_t> CopyBulk(const protocol::TextRows& rows,
                                    TargetSession& target, size_t batch_bytes,
                                    const std::function<std::string()>& where) const;
  // Fails unless every warning of the last statement is a duplicate
  // primary key (see Copy).
  static absl::Status CheckWarnings(TargetSession& target, uint16_t warnings,
                                    const std::function<std::string()>& where);
  // `unhex` is scratch space for kHex values.
  absl::Status AddBulkRow(const protocol::TextRows& rows, size_t row,
                          const std::function<std::string()>& where,
                          protocol::BulkExecuteBuilder* bulk, std::string* unhex) const;

  std::vector<Column> columns_;
  std::string select_list_;  // the SELECT expressions, in column order
  std::string insert_head_;  // "INSERT IGNORE INTO `db`.`t` (`a`,...) VALUES "
  std::string bulk_insert_;  // insert_head_ + "(?,?,...)"
  bool bulk_ = false;
};

}  // namespace binrelay::apply
