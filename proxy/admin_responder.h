// Answers one COM_QUERY of the command phase: parses it
// with admin_parser.h, keeps the session's state (user variables, database,
// skip_replication), and evaluates SELECTs and admin statements through the
// AdminHandler and the ConnectionControl. What binrelay does not answer
// itself is planned for forwarding to the source (forward_policy.h) or
// refused.
//
// Answering rules: unknown system variable → ER_UNKNOWN_SYSTEM_VARIABLE
// (1193, HY000); unset user variable → NULL; a write (INSERT, SET GLOBAL, ...)
// → ER_OPTION_PREVENTS_STATEMENT (1290, HY000: binrelay is read-only); a
// statement outside the supported and forwarded forms → ER_NOT_SUPPORTED_YET
// (1235, 42000); a supported form with a syntax error → ER_PARSE_ERROR (1064,
// 42000); a handler failure → ER_UNKNOWN_ERROR (1105, HY000) with its
// message; PURGE BINARY LOGS TO an unknown file → ER_UNKNOWN_TARGET_BINLOG
// (1373), a purge stopped by a file in use → ER_LOG_IN_USE (1378); KILL of
// an unknown id → ER_NO_SUCH_THREAD (1094); too many user variables →
// ER_OUT_OF_RESOURCES (1041). None of them closes the connection (KILL of
// the connection itself does, as on MariaDB).
//
// Thread safety: none; called for one session at a time (the handler and
// the connection control are thread-safe by their own contracts).
// Lifetime: the reply is owned by the caller.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "proxy/admin_handler.h"
#include "proxy/admin_parser.h"
#include "proxy/connection_control.h"
#include "proxy/dump_request.h"

namespace binrelay::proxy {

inline constexpr uint16_t kErOutOfResources = 1041;
inline constexpr uint16_t kErNoSuchThread = 1094;
inline constexpr uint16_t kErKillDenied = 1095;          // ER_KILL_DENIED_ERROR
inline constexpr uint16_t kErSpecificAccessDenied = 1227;  // ER_SPECIFIC_ACCESS_DENIED_ERROR
inline constexpr uint16_t kErUnknownError = 1105;
inline constexpr uint16_t kErNotSupportedYet = 1235;
inline constexpr uint16_t kErWrongArguments = 1210;  // ER_WRONG_ARGUMENTS
inline constexpr uint16_t kErSlaveMustStop = 1198;   // ER_SLAVE_MUST_STOP
inline constexpr uint16_t kErOptionPreventsStatement = 1290;
inline constexpr uint16_t kErUnknownTargetBinlog = 1373;
inline constexpr uint16_t kErLogInUse = 1378;
inline constexpr uint16_t kErReplicaChannelDoesNotExist = 3074;  // MySQL 8

// A session keeps at most this many user variables, of this many bytes in
// all (names and values): replicas set a handful of short ones, and a
// client must not grow a session without limit.
inline constexpr size_t kMaxUserVariables = 256;
inline constexpr size_t kMaxUserVariableBytes = 64 * 1024;

struct AdminReply {
  enum class Kind { kOk, kError, kResultSet };
  Kind kind = Kind::kOk;
  uint16_t error_code = 0;
  std::string sql_state;
  std::string message;
  ResultSet result;
  bool close_connection = false;  // KILL of the connection itself

  static AdminReply Error(uint16_t code, std::string_view sql_state, std::string message);
};

// What a connection's statements read and change.
struct SessionState {
  uint32_t connection_id = 0;
  std::string user;
  // Logged in as [listen] admin_user: may PURGE, KILL others, CUTOVER MOVE.
  bool admin = false;
  std::string host;      // the client's address
  std::string database;  // USE / COM_INIT_DB; "" is NULL
  bool skip_replication = false;
  UserVariables user_variables;
  size_t user_variable_bytes = 0;
};

struct AdminContext {
  AdminHandler* handler = nullptr;
  ConnectionControl* connections = nullptr;  // null: no KILL or PROCESSLIST
  // What VERSION() and @@version return: the greeting's version without
  // MariaDB's "5.5.5-" prefix, as real servers do.
  std::string version;
  SessionState* session = nullptr;
  bool forwarding = false;  // metadata statements may go to the source
};

struct QueryPlan {
  enum class Kind {
    kReply,     // answered: send `reply`
    kBlocking,  // answer `statement` with AnswerStatement off the io thread
    kForward,   // forward the statement to the source
  };
  Kind kind = Kind::kReply;
  AdminReply reply;
  AdminStatement statement;
};

QueryPlan PlanQuery(std::string_view sql, const AdminContext& context);
AdminReply AnswerStatement(const AdminStatement& statement, const AdminContext& context);
// PlanQuery then AnswerStatement in place (tests; a forward becomes an error).
AdminReply AnswerQuery(std::string_view sql, const AdminContext& context);

}  // namespace binrelay::proxy
