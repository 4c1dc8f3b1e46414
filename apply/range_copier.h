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
// With `bulk`, the rows go as one bulk command of a one-row INSERT IGNORE
// where the target takes COM_STMT_BULK_EXECUTE (MariaDB), else (MySQL) as
// prepared statements of many such rows (COM_STMT_EXECUTE), instead of
// VALUES text:
// integers, DOUBLE and FLOAT in binary, DECIMAL and temporal values as their
// text in a parameter, strings and HEX()-read values as binary-string
// parameters (taken without conversion: Item_param::setup_conversion_blob).
// The target then parses no literal, which is most of its cost per row.
// A duplicate on a secondary UNIQUE key is counted, not an error: while a
// move copies, a source transaction can move a unique value from a row
// already on the target to a row of a later chunk before the pipeline has
// applied the first row's change; the target still holds the old value,
// so the later row cannot go in yet. Whether the target's holder is stale
// or already newer than the copy's read is not knowable here, so the row
// is left out and the move's checksum, which compares every range at one
// binlog position and copies a differing one again, puts it right (see
// table_move.h). Any other warning fails the copy (INSERT IGNORE would
// otherwise hide an inexact row). Known limit: a range's rows are read
// whole, so ranges are sized to hold a bounded number of rows.
//
// kReplace writes REPLACE instead (the checksum's repair, after deleting
// the target's range at the snapshot's position: a row outside the range
// still holding one of its unique values is stale there, and goes).
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

struct CopyResult {
  uint64_t rows = 0;              // the source returned
  uint64_t bytes = 0;             // of their values as read (the range's memory)
  uint64_t unique_conflicts = 0;  // left out: a secondary UNIQUE value taken
};

class RangeCopier {
 public:
  enum class Write : uint8_t { kInsertIgnore, kReplace };

  // `source` and `target` describe the same table (CheckTargetShape).
  // `bulk`: write with COM_STMT_BULK_EXECUTE where the target takes it.
  static absl::StatusOr<RangeCopier> Create(const TableShape& source, const TableShape& target,
                                            bool bulk);

  // Bytes of the copy's text of the first `limit` rows in key order, and
  // how many rows that was (0 for an empty table): what a chunk of rows
  // will cost to hold, before the first is read. The server reads them;
  // only two numbers come back.
  absl::StatusOr<std::pair<uint64_t, uint64_t>> SampleRowBytes(
      replication::SqlSource& source, const KeyRangeChunker& chunker, int limit) const;

  // Copies `range`'s rows. Statements (or bulk commands) hold at most
  // `batch_bytes` (a larger row goes alone). The rows are read into
  // `scratch` when given: a worker copying range after range reuses one
  // buffer instead of growing a new one, copied and page-faulted at every
  // doubling, for each range.
  absl::StatusOr<CopyResult> Copy(replication::SqlSource& source, TargetSession& target,
                                  const KeyRange& range, const KeyRangeChunker& chunker,
                                  size_t batch_bytes, Write write = Write::kInsertIgnore,
                                  protocol::TextRows* scratch = nullptr) const;

 private:
  enum class Form : uint8_t { kNumber, kQuoted, kBytes, kHex };
  // A kNumber column's bulk parameter.
  enum class Number : uint8_t { kSigned, kUnsigned, kDouble, kDecimal };
  struct Column {
    Form form;
    Number number = Number::kSigned;
    std::string charset;  // kBytes, kHex: the introducer ("binary"; "" for none)
    // A bulk or execute parameter as text in character_set_client (utf8mb4),
    // not as a binary string: MySQL's JSON (error 3144 for binary).
    bool as_text = false;
  };
  RangeCopier() = default;
  absl::StatusOr<CopyResult> CopyText(const protocol::TextRows& rows, TargetSession& target,
                                      size_t batch_bytes, Write write,
                                      const std::function<std::string()>& where) const;
  // With `execute` (a target without bulk commands): COM_STMT_EXECUTE
  // of multi-row statements instead (target_session.h).
  absl::StatusOr<CopyResult> CopyBulk(const protocol::TextRows& rows, TargetSession& target,
                                      size_t batch_bytes, Write write, bool execute,
                                      const std::function<std::string()>& where) const;
  // Fails unless every warning of the last statement is a duplicate key;
  // counts those on a secondary UNIQUE key into `result` (see above).
  absl::Status CheckWarnings(TargetSession& target, uint16_t warnings,
                             const std::function<std::string()>& where,
                             CopyResult* result) const;
  // `unhex` is scratch space for kHex values.
  absl::Status AddBulkRow(const protocol::TextRows& rows, size_t row,
                          const std::function<std::string()>& where,
                          protocol::BulkExecuteBuilder* bulk, std::string* unhex) const;

  std::vector<Column> columns_;
  // A 1062 warning's text ends with one of these for the primary key
  // (MariaDB: 'PRIMARY'; MySQL 8.0.19 and later: 'table.PRIMARY').
  std::string primary_key_suffixes_[2];
  std::string select_list_;  // the SELECT expressions, in column order
  std::string length_sum_;   // "IFNULL(LENGTH(expr),0)+..." over select_list_'s expressions
  // [Write]: "INSERT IGNORE INTO `db`.`t` (`a`,...) VALUES " or "REPLACE INTO ..."
  std::string head_[2];
  std::string bulk_head_[2];  // head_ + "(?,?,...)"
  bool bulk_ = false;
};

}  // namespace binrelay::apply
