// Parser of the SQL binrelay answers itself: what MariaDB
// 10.x / MySQL 8.x replication threads, mysqlbinlog / mariadb-binlog,
// binlog client libraries and monitoring tools send, and binrelay's admin
// statements.
//
// Accepted forms (keywords case-insensitive, free whitespace and comments,
// optional ';'):
//   SET @u = expr | @@[global.|session.]v = expr | [GLOBAL|SESSION] v = expr
//       | NAMES cs [COLLATE c]   (comma-separated, '=' or ':=')
//   SELECT expr [[AS] alias], ... [FROM DUAL] [LIMIT n]
//       expr: 'str' | number | @u | @@[scope.]v | IDENT | func(expr, ...)
//   SHOW [GLOBAL|SESSION] VARIABLES [LIKE 'pat' | WHERE pred [OR pred]...]
//       pred: Variable_name|Value {= | LIKE} 'str' | Variable_name IN ('a', ...)
//   SHOW [GLOBAL|SESSION] STATUS [LIKE 'pat' | WHERE ...]
//   SHOW MASTER STATUS | SHOW BINARY LOG STATUS | SHOW BINARY LOGS | SHOW MASTER LOGS
//   SHOW SLAVE HOSTS | SHOW REPLICAS | SHOW RELAY STATUS
//   SHOW [ALL] SLAVE STATUS | SHOW REPLICA STATUS
//   SHOW [FULL] PROCESSLIST | SHOW GRANTS [FOR ...] | SHOW WARNINGS | SHOW ERRORS
//   KILL [HARD|SOFT] [CONNECTION|QUERY] id
//   USE db
//   BEGIN | START TRANSACTION [READ ONLY|...] | COMMIT | ROLLBACK
//   PURGE {BINARY|MASTER} LOGS TO 'file'
//   CUTOVER MOVE name | 'name'      (binrelay's own: a manual move cuts over)
//   {STOP|START} {SLAVE|REPLICA} ['conn'] [IO_THREAD|SQL_THREAD[, ...]]
//       [FOR CHANNEL 'ch'] | {STOP|START} ALL SLAVES   (binrelay's upstream)
//   CHANGE MASTER ['conn'] TO opt = value [, ...] [FOR CHANNEL 'ch']
//       | CHANGE REPLICATION SOURCE TO ...   (value: 'str' | number | word)
// Everything else is Unimplemented (the caller may forward it, see
// forward_policy.h, or answer ER_NOT_SUPPORTED_YET); a recognised statement
// with a syntax error is InvalidArgument (ER_PARSE_ERROR).
//
// Bounded for hostile input: expressions nest at most kMaxExprDepth levels
// (deeper is a syntax error, so neither parsing, evaluation nor destruction
// recurses without limit), tokens are capped (sql_tokens.h), and an
// expression's text is kept only for SELECT items (column names), so
// parsing is linear in the statement's length.
//
// Thread safety: pure functions.
// Lifetime: the returned statement owns all its strings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace binrelay::proxy {

inline constexpr int kMaxExprDepth = 32;

struct AdminExpr {
  enum class Kind { kString, kNumber, kUserVar, kSystemVar, kIdentifier, kFunction };
  Kind kind = Kind::kString;
  // kString/kNumber: the value (unquoted, unescaped); kUserVar/kSystemVar:
  // the lower-cased name without '@'/'@@' and scope; kIdentifier: as written;
  // kFunction: the lower-cased function name.
  std::string value;
  std::string scope;             // kSystemVar: "global", "session" or ""
  std::vector<AdminExpr> args;   // kFunction
  std::string text;              // SELECT items: as written, or the alias
};

struct AdminAssignment {
  bool user_variable = false;  // @name (else a system variable)
  std::string name;            // lower-cased, without '@' / '@@' / scope
  std::string scope;           // system variables: "global", "session" or ""
  AdminExpr value;
};

// One test of a SHOW VARIABLES/STATUS WHERE clause (any may match).
struct VariablePredicate {
  bool on_value = false;  // the Value column (else Variable_name)
  enum class Op { kEquals, kLike, kIn } op = Op::kEquals;
  std::vector<std::string> operands;  // kIn: several
};

struct AdminStatement {
  enum class Kind {
    kSet,
    kSelect,
    kShowVariables,
    kShowStatus,
    kShowMasterStatus,  // also SHOW BINARY LOG STATUS
    kShowBinaryLogs,    // also SHOW MASTER LOGS
    kShowReplicas,      // also SHOW SLAVE HOSTS
    kShowRelayStatus,
    kShowRelayPipelines,  // one row per apply pipeline (proxy/status_fields.h)
    kShowRelaySources,    // one row per failover candidate (blocks: probes them)
    kShowRelayMoves,      // one row per move
    kShowSlaveStatus,   // also SHOW REPLICA STATUS, SHOW ALL SLAVES STATUS
    kShowProcesslist,
    kShowGrants,
    kShowWarnings,      // also SHOW ERRORS: binrelay leaves none
    kKill,
    kUse,
    kTransaction,       // BEGIN / START TRANSACTION / COMMIT / ROLLBACK: no effect
    kPurgeBinaryLogsTo,
    kCutoverMove,
    kStopUpstream,   // STOP SLAVE / STOP REPLICA / STOP ALL SLAVES
    kStartUpstream,  // START SLAVE / START REPLICA / START ALL SLAVES
    kChangeSource,   // CHANGE MASTER TO / CHANGE REPLICATION SOURCE TO
  };
  Kind kind = Kind::kSet;
  // kSet; kChangeSource: its options (name lower-cased, value a kString,
  // kNumber or kIdentifier).
  std::vector<AdminAssignment> assignments;
  std::vector<AdminExpr> items;              // kSelect (text = alias when given)
  // kShowVariables/kShowStatus: the LIKE pattern (if any); kPurgeBinaryLogsTo:
  // the file; kUse: the database; kCutoverMove: the move's name.
  std::string argument;
  bool has_like = false;
  std::vector<VariablePredicate> where;  // kShowVariables/kShowStatus
  bool global_scope = false;             // SHOW GLOBAL ...
  bool full = false;                     // SHOW FULL PROCESSLIST; SHOW ALL SLAVES STATUS
  bool replica_keyword = false;          // SHOW REPLICA STATUS (MySQL 8 column names)
  uint64_t kill_id = 0;                  // kKill
  bool kill_query = false;               // KILL QUERY (else the connection)
  // kStopUpstream/kStartUpstream: the threads named (neither: both);
  // these and kChangeSource: the MariaDB connection or MySQL channel named
  // ("" when none).
  bool io_thread = false;
  bool sql_thread = false;
  std::string connection;
  // True when answering may block (a file scan, a purge): the session runs
  // it off the io thread.
  bool may_block = false;
};

absl::StatusOr<AdminStatement> ParseAdminStatement(std::string_view sql);

// MySQL LIKE: '%' any run, '_' one character, '\' escapes; case-insensitive
// (variable names are).
bool SqlLikeMatch(std::string_view text, std::string_view pattern);

}  // namespace binrelay::proxy
