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
// no table. Other statements yield none.
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
  std::string table;
};

std::vector<DdlTarget> DdlTables(std::string_view default_db, std::string_view query);

}  // namespace binrelay::apply
