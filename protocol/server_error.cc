#include "protocol/server_error.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

constexpr char kPayloadUrl[] = "type.binrelay/protocol.ServerError";

// Payload encoding: code (2 bytes LE), SQLSTATE length (1), SQLSTATE, message.
absl::Cord EncodePayload(const ServerError& e) {
  std::string s;
  AppendFixed(&s, e.code, 2);
  s.push_back(static_cast<char>(e.sql_state.size()));
  s += e.sql_state;
  s += e.message;
  return absl::Cord(s);
}

}  // namespace

absl::StatusOr<ServerError> ParseErrPacket(std::string_view payload, bool protocol41) {
  ByteCursor c(payload);
  uint8_t header = c.U8();
  if (!c.ok() || header != 0xFF) {
    return absl::InvalidArgumentError(
        absl::StrCat("not an ERR packet: first byte 0x", absl::Hex(header), " of ",
                     payload.size(), "-byte payload"));
  }
  ServerError e;
  e.code = c.U16();
  if (!c.ok()) return c.status("ERR packet error code");
  if (protocol41 && c.PeekU8() == '#') {
    c.Skip(1);
    e.sql_state = std::string(c.Bytes(5));
    if (!c.ok()) return c.status("ERR packet SQLSTATE");
  }
  e.message = std::string(c.Rest());
  return e;
}

absl::StatusCode StatusCodeForServerError(uint16_t code) {
  namespace se = server_error;
  switch (code) {
    case se::kAccessDenied:
    case se::kDbAccessDenied:
    case se::kSpecificAccessDenied:
    case 1142:  // ER_TABLEACCESS_DENIED_ERROR
    case 1698:  // ER_ACCESS_DENIED_NO_PASSWORD_ERROR
      return absl::StatusCode::kPermissionDenied;
    case se::kServerShutdown:
    case se::kConnectionKilled:
    case se::kMySqlClientInteractionTimeout:
    case 1040:  // ER_CON_COUNT_ERROR (too many connections)
    case 1152:  // ER_ABORTING_CONNECTION
    case 1158:  // ER_NET_READ_ERROR
    case 1159:  // ER_NET_READ_INTERRUPTED
    case 1160:  // ER_NET_ERROR_ON_WRITE
    case 1161:  // ER_NET_WRITE_INTERRUPTED
      return absl::StatusCode::kUnavailable;
    case se::kMasterFatalReadingBinlog:
      return absl::StatusCode::kFailedPrecondition;
    case se::kParseError:
      return absl::StatusCode::kInvalidArgument;
    case se::kNoSuchTable:
    case se::kUnknownSystemVariable:
      return absl::StatusCode::kNotFound;
    default:
      return absl::StatusCode::kUnknown;
  }
}

absl::Status ServerErrorStatus(const ServerError& error, absl::StatusCode code,
                               std::string_view message) {
  absl::Status status(code, AV(message));
  status.SetPayload(kPayloadUrl, EncodePayload(error));
  return status;
}

absl::Status ServerErrorStatus(const ServerError& error, std::string_view peer) {
  std::string msg = absl::StrCat("server ", AV(peer), " returned error ", error.code);
  if (!error.sql_state.empty()) absl::StrAppend(&msg, " (", error.sql_state, ")");
  absl::StrAppend(&msg, ": ", error.message);
  return ServerErrorStatus(error, StatusCodeForServerError(error.code), msg);
}

absl::Status ErrPacketToStatus(std::string_view payload, std::string_view peer) {
  absl::StatusOr<ServerError> e = ParseErrPacket(payload);
  if (!e.ok()) {
    return absl::DataLossError(
        absl::StrCat("malformed ERR packet from ", AV(peer), ": ", e.status().message()));
  }
  return ServerErrorStatus(*e, peer);
}

std::optional<ServerError> GetServerError(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kPayloadUrl);
  if (!payload) return std::nullopt;
  std::string bytes(*payload);
  ByteCursor c(bytes);
  ServerError e;
  e.code = c.U16();
  e.sql_state = std::string(c.Bytes(c.U8()));
  e.message = std::string(c.Rest());
  if (!c.ok()) return std::nullopt;
  return e;
}

}  // namespace binrelay::protocol
