// ERR packets (https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_err_packet.html)
// and their translation into absl::Status.
//
// A server error becomes a Status whose message names the peer, the numeric
// code, the SQLSTATE and the server's text, and which carries the parsed
// ServerError as a status payload so callers can branch on the code
// (GetServerError) without parsing messages.
//
// Thread safety: pure functions.
// Lifetime: everything returned is owned by the caller.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace binrelay::protocol {

// Error codes binrelay reacts to.
namespace server_error {
inline constexpr uint16_t kAccessDenied = 1045;         // ER_ACCESS_DENIED_ERROR, 28000
inline constexpr uint16_t kDbAccessDenied = 1044;       // ER_DBACCESS_DENIED_ERROR
inline constexpr uint16_t kBadFieldError = 1054;        // ER_BAD_FIELD_ERROR, 42S22
inline constexpr uint16_t kUnknownCommand = 1047;       // ER_UNKNOWN_COM_ERROR
inline constexpr uint16_t kServerShutdown = 1053;       // ER_SERVER_SHUTDOWN
inline constexpr uint16_t kParseError = 1064;           // ER_PARSE_ERROR
inline constexpr uint16_t kUnknownError = 1105;         // ER_UNKNOWN_ERROR
inline constexpr uint16_t kNoSuchTable = 1146;          // ER_NO_SUCH_TABLE
inline constexpr uint16_t kNetPacketTooLarge = 1153;    // ER_NET_PACKET_TOO_LARGE
inline constexpr uint16_t kUnknownSystemVariable = 1193;
inline constexpr uint16_t kSpecificAccessDenied = 1227;
inline constexpr uint16_t kMasterFatalReadingBinlog = 1236;
inline constexpr uint16_t kQueryInterrupted = 1317;     // ER_QUERY_INTERRUPTED
inline constexpr uint16_t kConnectionKilled = 1927;     // MariaDB ER_CONNECTION_KILLED
inline constexpr uint16_t kSlaveSameId = 4052;          // MariaDB ER_SLAVE_SAME_ID
inline constexpr uint16_t kMySqlClientInteractionTimeout = 4031;  // MySQL 8.0.24+ idle disconnect
}  // namespace server_error

struct ServerError {
  uint16_t code = 0;
  std::string sql_state;  // 5 characters, empty if the server sent none
  std::string message;
};

// Parses an ERR payload (first byte 0xFF). `protocol41` says whether the
// '#'+SQLSTATE marker may be present (it is optional even then: MySQL omits
// it for errors sent before the handshake completes).
absl::StatusOr<ServerError> ParseErrPacket(std::string_view payload, bool protocol41 = true);

// The absl code binrelay uses for a server error code: PermissionDenied for
// access errors, Unavailable for a killed connection or shutting-down server,
// FailedPrecondition for fatal dump errors (1236), InvalidArgument for SQL
// parse errors, NotFound for unknown tables/variables, Unknown otherwise.
absl::StatusCode StatusCodeForServerError(uint16_t code);

// "server <peer> returned error <code> (<sqlstate>): <message>", carrying the
// ServerError as payload.
absl::Status ServerErrorStatus(const ServerError& error, std::string_view peer);
// As above with a caller-chosen code and message (still carrying the payload).
absl::Status ServerErrorStatus(const ServerError& error, absl::StatusCode code,
                               std::string_view message);

// Parses an ERR payload and returns its Status; a malformed ERR is DataLoss.
absl::Status ErrPacketToStatus(std::string_view payload, std::string_view peer);

// The server error carried by `status`, if it came from an ERR packet.
std::optional<ServerError> GetServerError(const absl::Status& status);

}  // namespace binrelay::protocol
