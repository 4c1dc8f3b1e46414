// TableShape: a table's columns and keys as information_schema describes
// them, read from the source and from the target, and the check that the
// target can take the source's row images as they are.
//
// The check (CheckTargetShape) compares types by meaning, so a MariaDB and a
// MySQL table of the same definition agree. It requires: the same column
// names in the same order, the same type (COLUMN_TYPE, ignoring integer and
// YEAR display widths, which MySQL 8 no longer reports; MySQL's JSON and
// MariaDB's JSON, a LONGTEXT with a json_valid CHECK, count as one), the same
// character set and collation for every text column (rows are written as
// bytes in that charset, apply/sql_literal.h; utf8 and utf8mb3 are one), the
// same generated columns, the same UNIQUE indexes and the same primary key.
// Errors name the table, the first column or key that differs and both
// types, and say what to change.
//
// Thread safety: plain values and functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "replication/sql_source.h"

namespace binrelay::apply {

struct ShapeColumn {
  std::string name;
  std::string data_type;    // lower case: "int", "varchar"
  std::string column_type;  // normalised: "int unsigned", "varchar(20)"
  std::string charset;      // "" for columns without one
  std::string collation;    // "" for columns without one
  bool generated = false;   // VIRTUAL or STORED/PERSISTENT
  bool nullable = true;     // IS_NULLABLE
  // LONGTEXT with MariaDB's CHECK (json_valid(`name`)): MariaDB's JSON.
  bool json_checked = false;
};

struct TableShape {
  std::string db;
  std::string table;
  std::vector<ShapeColumn> columns;
  std::vector<uint32_t> primary_key;               // column indexes, in key order
  std::vector<std::vector<uint32_t>> unique_keys;  // other UNIQUE indexes
};

// NotFound if the table does not exist; other errors name the server.
absl::StatusOr<TableShape> LoadTableShape(replication::SqlSource& server, std::string_view db,
                                          std::string_view table);

// Base tables of `server` (system schemas excluded) as (db, table) pairs.
// Whether db.table exists on `server` (information_schema.TABLES).
absl::StatusOr<bool> TableExists(replication::SqlSource& server, std::string_view db,
                                 std::string_view table);

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ListTables(
    replication::SqlSource& server);

// FailedPrecondition naming `target_name` ("target 10.0.0.5:3306 table
// app.t") and the first difference.
absl::Status CheckTargetShape(const TableShape& source, const TableShape& target,
                              std::string_view target_name);

// True if equal key bytes mean the same row on the target and different
// bytes different rows: every primary key column is an integer, DECIMAL,
// temporal, ENUM, SET, BIT or binary string. Character keys compare under
// a collation (case, accents, trailing spaces) and are not.
bool KeyIsMemComparable(const TableShape& target);

// "int(11) unsigned zerofill" -> "int unsigned zerofill"; lower case.
std::string NormaliseColumnType(std::string_view column_type, std::string_view data_type);

}  // namespace binrelay::apply
