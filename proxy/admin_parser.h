// Parser of the SQL a fake primary must understand (protocol.md §4): what
// MariaDB 10.x / MySQL 8.x replication threads and mysqlbinlog /
// mariadb-binlog send before dumping, and binrelay's admin statements.
//
// Accepted forms (keywords case-insensitive, free whitespace, optional ';'):
//   SET @u = expr | @@[global.|session.]v = expr | [GLOBAL|SESSION] v = expr
//       | NAMES cs [COLLATE c]   (comma-separated, '=' or ':=')
//   SELECT expr [[AS] alias], ... [FROM DUAL] [LIMIT n]
//       expr: 'str' | number | @u | @@[scope.]v | IDENT | func(expr, ...)
//   SHOW [GLOBAL|SESSION] VARIABLES LIKE 'name'
//   SHOW MASTER STATUS | SHOW BINARY LOG STATUS | SHOW BINARY LOGS | SHOW MASTER LOGS
//   SHOW SLAVE HOSTS | SHOW REPLICAS | SHOW RELAY STATUS
//   PURGE {BINARY|MASTER} LOGS TO 'file'
// Everything else is Unimplemented (the session answers ER_NOT_SUPPORTED_YET);
// a recognised statement with a syntax error is InvalidArgument (ER_PARSE_ERROR).
//
// A small hand-written tokenizer, not a grammar library: about fifteen forms
// do not justify one (style.md §3, pinloki's Spirit parser).
//
// Thread safety: pure functions.
// Lifetime: the returned statement owns all its strings.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace binrelay::proxy {

struct AdminExpr {
  enum class Kind { kString, kNumber, kUserVar, kSystemVar, kIdentifier, kFunction };
  Kind kind = Kind::kString;
  // kString/kNumber: the value (unquoted, unescaped); kUserVar/kSystemVar:
  // the lower-cased name without '@'/'@@' and scope; kIdentifier: as written;
  // kFunction: the lower-cased function name.
  std::string value;
  std::string scope;             // kSystemVar: "global", "session" or ""
  std::vector<AdminExpr> args;   // kFunction
  std::string text;              // the expression as written (a result column name)
};

struct AdminAssignment {
  bool user_variable = false;  // @name (else a system variable)
  std::string name;            // lower-cased, without '@' / '@@' / scope
  std::string scope;           // system variables: "global", "session" or ""
  AdminExpr value;
};

struct AdminStatement {
  enum class Kind {
    kSet,
    kSelect,
    kShowVariables,
    kShowMasterStatus,  // also SHOW BINARY LOG STATUS
    kShowBinaryLogs,    // also SHOW MASTER LOGS
    kShowReplicas,      // also SHOW SLAVE HOSTS
    kShowRelayStatus,
    kPurgeBinaryLogsTo,
  };
  Kind kind = Kind::kSet;
  std::vector<AdminAssignment> assignments;  // kSet
  std::vector<AdminExpr> items;              // kSelect (text = alias when given)
  std::string argument;  // kShowVariables: the LIKE pattern; kPurgeBinaryLogsTo: the file
};

absl::StatusOr<AdminStatement> ParseAdminStatement(std::string_view sql);

}  // namespace binrelay::proxy
