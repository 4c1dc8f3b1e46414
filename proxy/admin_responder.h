// Answers one COM_QUERY of the command phase (protocol.md §4.4): parses it
// with admin_parser.h, records SET @user variables in the session, and
// evaluates SELECTs and admin statements through the AdminHandler.
//
// Answering rules: unknown system variable → ER_UNKNOWN_SYSTEM_VARIABLE
// (1193, HY000); unset user variable → NULL; a statement outside the
// supported forms → ER_NOT_SUPPORTED_YET (1235, 42000); a supported form with
// a syntax error → ER_PARSE_ERROR (1064, 42000); a handler failure →
// ER_UNKNOWN_ERROR (1105, HY000) with its message; PURGE BINARY LOGS TO an
// unknown file → ER_UNKNOWN_TARGET_BINLOG (1373), a purge stopped by a file in
// use (FailedPrecondition) → ER_LOG_IN_USE (1378). None of them closes the
// connection.
//
// Thread safety: none; called by one session at a time (the handler is
// thread-safe by its own contract).
// Lifetime: the reply is owned by the caller.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "proxy/admin_handler.h"
#include "proxy/dump_request.h"

namespace binrelay::proxy {

inline constexpr uint16_t kErUnknownError = 1105;
inline constexpr uint16_t kErNotSupportedYet = 1235;
inline constexpr uint16_t kErUnknownTargetBinlog = 1373;
inline constexpr uint16_t kErLogInUse = 1378;

struct AdminReply {
  enum class Kind { kOk, kError, kResultSet };
  Kind kind = Kind::kOk;
  uint16_t error_code = 0;
  std::string sql_state;
  std::string message;
  ResultSet result;

  static AdminReply Error(uint16_t code, std::string_view sql_state, std::string message);
};

struct AdminContext {
  AdminHandler* handler = nullptr;
  // What VERSION() and @@version return: the greeting's version without
  // MariaDB's "5.5.5-" prefix, as real servers do.
  std::string version;
  // User variables of this connection, lower-cased names without '@'.
  UserVariables* user_variables = nullptr;
};

AdminReply AnswerQuery(std::string_view sql, const AdminContext& context);

}  // namespace binrelay::proxy
