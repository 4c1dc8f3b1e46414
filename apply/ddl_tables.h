// DdlTables: which tables a DDL statement from the binlog changes, so an
// apply pipeline can stop before a row image of a new shape reaches a
// target table of the old one.
//
// Recognised: ALTER TABLE, CREATE [TEMPORARY] TABLE [IF NOT EXISTS] (also
// ... LIKE), DROP TABLE [IF EXISTS] a, b, RENAME TABLE a TO b, c TO d,
// TRUNCATE [TABLE], CREATE/DROP INDEX ... ON t. Names may be qualified and
// quoted; unqualified ones take the statement's default database. Comments
// are skipped. An ALTER TABLE whose every clause adds or drops a FOREIGN KEY
// (or a constraint named in such a clause) changes no row image and yields
// no table, unless a key it adds has ON DELETE/UPDATE CASCADE, SET NULL or
// SET DEFAULT (see DdlTarget::unlogged_action). A `SET STATEMENT ... FOR` prefix is looked through, and so are
// executable comments (/*!50100 ... */, /*M!100100 ... */). DROP DATABASE
// yields the database with an empty table name. INSERT, REPLACE, UPDATE,
// DELETE and LOAD DATA written as statements (a session with
// binlog_format=STATEMENT) yield their first table with `dml` set: their rows
// are not in the binlog. Other statements yield none.
//
// Thread safety: pure function.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace binrelay::apply {

struct DdlTarget {
  std::string db;
  std::string table;  // empty: every table of `db` (DROP DATABASE)
  bool dml = false;   // a row change logged as a statement (binlog_format=STATEMENT)
  // The statement may change the definition rows of this table are read
  // with, or remove the name (ALTER, CREATE, DROP, RENAME); not TRUNCATE,
  // CREATE/DROP INDEX or the partner of EXCHANGE PARTITION.
  bool redefines = false;
  // A table comes into being under this name (CREATE TABLE without IF NOT
  // EXISTS, CREATE OR REPLACE, the new name of a RENAME): no row of it under
  // this name comes before the statement.
  bool appears = false;
  // An ALTER TABLE that only adds or drops foreign keys yields its table
  // only when a key it adds has a referential action the server carries out
  // below the binlog: then this holds the action as written ("ON DELETE
  // CASCADE", "ON UPDATE SET NULL"), and `redefines` is false.
  std::string unlogged_action;
};

std::vector<DdlTarget> DdlTables(std::string_view default_db, std::string_view query);

struct UnloggedForeignKey {
  std::string name;    // the constraint's name ("" if the text gives none)
  std::string action;  // as in DdlTarget::unlogged_action
};

// The foreign keys of a SHOW CREATE TABLE text whose referential actions the
// server carries out without logging them. Read from the statement, not
// information_schema.REFERENTIAL_CONSTRAINTS: MariaDB shows a key there only
// to an account with a privilege on the table other than SELECT.
std::vector<UnloggedForeignKey> UnloggedForeignKeys(std::string_view create_table);

}  // namespace binrelay::apply
