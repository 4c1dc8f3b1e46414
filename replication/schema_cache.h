// SchemaCache: column names, signedness, collations, ENUM/SET members,
// BINARY lengths and the primary key of source tables, read from the
// source's information_schema over a side connection. Used where TABLE_MAP
// optional metadata does not carry them (MariaDB's default, MySQL's MINIMAL).
// Entries are dropped after DDL on their table (Invalidate*), so the next
// TABLE_MAP re-reads them.
//
// Known limit: information_schema describes the table as it is now. A
// consumer far behind a DDL sees today's names; a column-count mismatch is
// detected and reported, a rename of equal shape is not.
//
// Thread safety: single-threaded (owned by one decoder).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "protocol/column_def.h"
#include "replication/sql_source.h"

namespace binrelay::replication {

class SchemaCache {
 public:
  // `source` may be null (decoding files with no server): Enrich then only
  // leaves the table as the binlog describes it.
  explicit SchemaCache(SqlSource* source) : source_(source) {}

  // Fills what `def` lacks from the cached or freshly read schema. Fails if
  // the table's column count differs from the binlog's, naming both.
  absl::Status Enrich(protocol::TableDef* def);

  // MariaDB's UUID/INET4/INET6 columns are logged as BINARY(16)/BINARY(4)
  // even with binlog_row_metadata=FULL. True when `def` (from a MariaDB
  // source) has such a BINARY column, so only the schema can say what it is.
  static bool MayHoldFixedBinary(const protocol::TableDef& def);
  // For a `def` whose names came from the TABLE_MAP: marks its UUID/INET
  // columns, matched by name. A column the schema no longer has stays BINARY
  // (its bytes are printed as base64).
  absl::Status MarkFixedBinary(protocol::TableDef* def);

  void Invalidate(std::string_view db, std::string_view table);
  void InvalidateSchema(std::string_view db);
  void InvalidateAll() { tables_.clear(); }
  uint64_t lookups() const { return lookups_; }

 private:
  struct Column {
    std::string name;
    bool is_unsigned = false;
    uint32_t collation = 0;
    std::vector<std::string> members;
    bool in_primary_key = false;
    uint32_t octet_length = 0;
    std::string data_type;
    uint32_t datetime_precision = 0;
  };
  struct Table {
    std::vector<Column> columns;
    std::vector<uint32_t> primary_key;
  };

  absl::StatusOr<Table> Load(std::string_view db, std::string_view table);
  // The cached entry, read when absent or (`expected_columns` > 0) when its
  // column count differs.
  absl::StatusOr<const Table*> Get(std::string_view db, std::string_view table,
                                   size_t expected_columns);

  SqlSource* source_;
  absl::flat_hash_map<std::string, Table> tables_;  // key: db + '\0' + table
  uint64_t lookups_ = 0;
};

// Parses the member list of an information_schema COLUMN_TYPE such as
// "enum('a','b''c')" or "set('x','y')". Exposed for tests.
std::vector<std::string> ParseEnumMembers(std::string_view column_type);

// Quotes a string as a SQL literal ('...' with ' and \ escaped).
std::string SqlQuote(std::string_view s);

}  // namespace binrelay::replication
