// ApplyTable: one subscribed table as the flushers write it: the decoding
// definition (types and metadata from the binlog's TABLE_MAP; names,
// signedness and BINARY lengths from the checked shape) and the target's
// name, columns and key, with the SQL that turns buffered row images into
// multi-row REPLACE and DELETE statements.
//
// Generated columns are left out of REPLACE: the target computes them.
//
// Thread safety: immutable once built; the rendering functions may run on
// several flusher threads at once (each with its own scratch).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "apply/table_buffer.h"
#include "apply/sql_literal.h"
#include "apply/table_shape.h"
#include "protocol/bulk_execute.h"
#include "protocol/column_def.h"

namespace binrelay::apply {

class TableCopyGate;

struct ApplyTable {
  TableShape source;  // as checked at start
  TableShape target;  // target db/table may differ (target_schema)
  bool keyed = true;  // KeyIsMemComparable(target)
  // Filled from the first TABLE_MAP seen for the table (MergeTableMap).
  protocol::TableDef def;
  bool def_ready = false;
  std::string qualified;    // `db`.`table` on the target
  std::string replace_head;  // REPLACE INTO `db`.`t` (`a`,`b`) VALUES
  std::string delete_head;   // DELETE FROM `db`.`t` WHERE
  // REPLACE INTO `db`.`t` (`a`,`b`) VALUES (?,?): one row's statement, run
  // over many rows by COM_STMT_BULK_EXECUTE.
  std::string bulk_replace;
  uint16_t bulk_params = 0;  // columns written (generated ones are not)
  // False when a value cannot be bound exactly (a MySQL JSON column fed
  // from a non-UTF-8 source column): REPLACE text, in the source's charset.
  bool bind_values = true;
  // How each target column's values are written (sql_literal.h).
  std::vector<LiteralStyle> styles;
  // The target's max_allowed_packet less room for the packet header.
  size_t max_statement_bytes = 16u << 20;
  // A move's copier of this table (copy_gate.h), or null.
  TableCopyGate* gate = nullptr;

  std::string Name() const { return source.db + "." + source.table; }
};

// Builds everything but `def`.
ApplyTable MakeApplyTable(TableShape source, TableShape target);

// Takes the TABLE_MAP's column types and metadata for `t.def`, with names,
// signedness and BINARY lengths from the checked shape. FailedPrecondition
// if the binlog's table has another number of columns than the checked one
// (a DDL the pipeline did not see).
absl::Status MergeTableMap(const protocol::TableDef& map, ApplyTable* t);

// True if `map` has the column types and metadata `t.def` was built from.
bool SameTableMap(const protocol::TableDef& map, const ApplyTable& t);

// Appends "(v1,v2,...)" for a full row image (generated columns skipped).
absl::Status AppendRowValues(const ApplyTable& t, std::string_view image, std::string* scratch,
                             std::string* out);
// Appends the primary key match of a row image: "`id` = 5" or
// "(`a` = 1 AND `b` = 'x')".
absl::Status AppendKeyMatch(const ApplyTable& t, std::string_view image, std::string* scratch,
                            std::string* out);

// Statements for rows[begin, end): each holds at most `max_rows` rows and,
// past its first row, at most `max_bytes` of SQL; none exceeds
// max_statement_bytes (a row that alone would is FailedPrecondition). Calls `emit` per
// statement; all rows must be upserts (Replace) or deletes (Delete).
absl::Status BuildReplaces(const ApplyTable& t, const BufferedRow* const* rows, size_t n,
                           size_t max_rows, size_t max_bytes,
                           absl::FunctionRef<absl::Status(std::string_view sql, size_t rows)> emit);
absl::Status BuildDeletes(const ApplyTable& t, const BufferedRow* const* rows, size_t n,
                          size_t max_rows, size_t max_bytes,
                          absl::FunctionRef<absl::Status(std::string_view sql, size_t rows)> emit);

// The same rows as BuildReplaces, as COM_STMT_BULK_EXECUTE commands of
// t.bulk_replace (MariaDB targets): values travel in binary form, so the
// target parses no literals and string bytes are never re-encoded
// (protocol/bulk_execute.h). Integers, YEAR, ENUM and SET go as 8-byte
// integers; FLOAT and DOUBLE as doubles (a FLOAT widened exactly, so it
// rounds back to itself); DECIMAL as decimal text; temporal values as
// MYSQL_TIME structures (DATE, DATETIME for DATETIME and TIMESTAMP, TIME),
// from the same parts their text is printed from; everything else (character and binary
// strings, BIT, JSON text, GEOMETRY) as binary strings, which the target
// stores unconverted into a column of any charset. Batches are cut as
// BuildReplaces cuts them, with the command's bytes in place of SQL's.
// `bulk` is the caller's scratch; `emit` runs the command it holds.
absl::Status BuildBulkReplaces(const ApplyTable& t, const BufferedRow* const* rows, size_t n,
                               size_t max_rows, size_t max_bytes,
                               protocol::BulkExecuteBuilder* bulk,
                               absl::FunctionRef<absl::Status(size_t rows)> emit);

// Flush partitioning for a table with UNIQUE secondary indexes: picks the
// unique index whose leading column has the fewest distinct values among
// `upserts` (the one whose values cluster most), sorts `upserts` by that
// index's columns, and cuts batches of at most `max_rows` at changes of the
// leading value where possible. Batches i and i+1 then cover neighbouring
// index ranges: running even and odd batches in separate waves keeps two
// concurrent REPLACEs from taking next-key locks on neighbouring entries.
// Returns [begin, end) ranges into the sorted `upserts`; without unique
// secondary indexes, plain consecutive chunks.
absl::StatusOr<std::vector<std::pair<size_t, size_t>>> PartitionUpserts(
    const ApplyTable& t, std::vector<const BufferedRow*>* upserts, size_t max_rows);

}  // namespace binrelay::apply
