// KeyRangeChunker: one source table cut into primary-key ranges for a
// move's copier, in key order: each range's upper bound is the key about
// `rows` rows after the last one (SELECT ... ORDER BY pk LIMIT 1 OFFSET
// rows-1, an index dive), the last range runs to the end of the table.
// Every bound is kept as the source printed it and as an ordered key
// (ordered_key.h), which CopyWatermarks compares changes against.
//
// Keys of integer, DECIMAL, DATE, DATETIME, TIME and (VAR)CHAR/(VAR)BINARY
// columns, single or composite. Character keys are read as HEX() so that no
// character set conversion touches them, and compared in the column's own
// collation; their byte order can differ from that collation's order, which
// the move's checksum covers (ordered_key.h).
//
// Thread safety: one copier thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "apply/table_shape.h"
#include "protocol/column_def.h"
#include "replication/sql_source.h"

namespace binrelay::apply {

struct KeyBound {
  std::vector<std::string> values;  // per key column: the value's text (bytes for strings)
  std::string ordered;              // its ordered key
};

struct KeyRange {
  std::optional<KeyBound> lower;  // exclusive; nullopt: the table's start
  std::optional<KeyBound> upper;  // inclusive; nullopt: the table's end
  std::string where;              // an SQL condition selecting exactly the range's rows
};

class KeyRangeChunker {
 public:
  // Fails, naming the column, for a table without a primary key or with a
  // key column of a type this chunker does not order. `after`: resume
  // after this bound (a checkpoint's copied prefix).
  static absl::StatusOr<KeyRangeChunker> Create(const TableShape& source,
                                                std::optional<KeyBound> after = std::nullopt);

  // The next range, about `rows` rows long, or nullopt once the range to
  // the end of the table was handed out.
  absl::StatusOr<std::optional<KeyRange>> Next(replication::SqlSource& source, uint64_t rows);

  // The next range, up to `upper` (inclusive; nullopt: to the end of the
  // table), a bound this chunker's kind handed out earlier for the same
  // table, above the last one: a second pass over a table (the checksum's)
  // cut without another index dive. Nullopt once the range to the end was
  // handed out.
  std::optional<KeyRange> NextTo(const std::optional<KeyBound>& upper);

  // The highest key of `table_sql` (this table, or its copy on another
  // server: the same key columns) on `server`; nullopt if it is empty.
  absl::StatusOr<std::optional<KeyBound>> Highest(replication::SqlSource& server,
                                                  const std::string& table_sql) const;

  // "`db`.`t`", and the key column list "`a`,`b`" (for ORDER BY).
  const std::string& table_sql() const { return table_sql_; }
  const std::string& key_sql() const { return key_sql_; }

  // The SQL condition for rows after `b` / at or before `b`.
  std::string After(const KeyBound& b) const;
  std::string AtMost(const KeyBound& b) const;

 private:
  struct KeyColumn {
    std::string name;
    std::string charset;  // "" for non-character columns; "binary" for binary strings
    bool hex = false;     // read as HEX(), written as a hex literal
    protocol::ColumnDef def;
  };
  KeyRangeChunker() = default;
  void AppendLiteral(const KeyColumn& c, const std::string& value, std::string* out) const;
  // The key a bound query (select_sql_) returned, or nullopt for no row.
  absl::StatusOr<std::optional<KeyBound>> ReadBound(replication::SqlSource& server,
                                                    const std::string& sql) const;
  std::string Compare(const KeyBound& b, bool after) const;

  std::vector<KeyColumn> key_;
  std::string table_sql_;
  std::string key_sql_;
  std::string select_sql_;  // the key columns as read (HEX() for strings)
  std::optional<KeyBound> last_;
  bool done_ = false;
};

// The ColumnDef an information_schema column describes (for ordered keys):
// the type family, DECIMAL precision and scale, signedness, binary
// strings. Unimplemented for types a move cannot order.
absl::StatusOr<protocol::ColumnDef> KeyColumnDef(const ShapeColumn& c);

}  // namespace binrelay::apply
