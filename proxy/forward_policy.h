// ForwardPolicy: what binrelay does with a statement it does not answer
// itself (admin_parser.h). Read-only metadata statements that clients send
// on a replication connection (binlog libraries look up column names, CDC
// tools read table definitions) are forwarded to the source and answered
// with its result unchanged; writes are refused as a read-only server
// refuses them; anything else is not supported. The allow-list:
//
//   SHOW [FULL] {COLUMNS|FIELDS} {FROM|IN} ...   SHOW {INDEX|INDEXES|KEYS} ...
//   SHOW CREATE {TABLE|VIEW|DATABASE|SCHEMA} ... SHOW [FULL] TABLES ...
//   SHOW {DATABASES|SCHEMAS} ...                 SHOW TABLE STATUS ...
//   SHOW {CHARACTER SET|CHARSET|COLLATION|ENGINES|TRIGGERS} ...
//   {DESCRIBE|DESC|EXPLAIN} table [column]
//   SELECT ... whose every table (FROM, JOIN) is in information_schema
//   SELECT ... without tables and without @variables (the source computes
//     the expressions; variables are binrelay's own to answer)
//
// A SELECT may not lock (FOR UPDATE, LOCK IN SHARE MODE), write (INTO) or
// call functions that wait or touch the server (SLEEP, BENCHMARK, GET_LOCK,
// LOAD_FILE, MASTER_POS_WAIT, ...). The side connection is also read-only on
// the source (query_forwarder.h), so what slips through cannot write.
//
// Thread safety: pure functions.
// Lifetime: results own their strings.
#pragma once

#include <string>
#include <string_view>

namespace binrelay::proxy {

struct ForwardDecision {
  enum class Kind { kForward, kWrite, kUnsupported };
  Kind kind = Kind::kUnsupported;
  std::string keyword;  // the statement's first keyword, upper case ("INSERT")
  std::string reason;   // kUnsupported: why, for the error message
};

// `default_db`: the connection's current database (unqualified tables of a
// SELECT are in it).
ForwardDecision ClassifyStatement(std::string_view sql, std::string_view default_db);

}  // namespace binrelay::proxy
