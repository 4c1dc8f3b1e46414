// OK and EOF packets and classification of a generic response payload
// (https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_response_packets.html).
// ERR packets are in server_error.h.
//
// binrelay's client negotiates neither SESSION_TRACK nor DEPRECATE_EOF, so
// an OK's info is string<EOF> and result sets end with a classic EOF.
//
// Thread safety: pure functions.
// Lifetime: OkPacket::info views the payload it was parsed from.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

namespace binrelay::protocol {

enum class ResponseKind { kOk, kErr, kEof, kOther };

// Classifies a response by its first byte and length: 0x00 with >= 7 bytes is
// OK, 0xFF is ERR, 0xFE with < 9 bytes is EOF (a longer 0xFE payload is a
// text row starting with an 8-byte lenenc, or an auth switch request).
ResponseKind ClassifyResponse(std::string_view payload);

struct OkPacket {
  uint64_t affected_rows = 0;
  uint64_t last_insert_id = 0;
  uint16_t status_flags = 0;
  uint16_t warnings = 0;
  std::string_view info;
};
// Parses an OK payload (header 0x00, or 0xFE when it ends a result set).
absl::StatusOr<OkPacket> ParseOkPacket(std::string_view payload);

struct EofPacket {
  uint16_t warnings = 0;
  uint16_t status_flags = 0;
};
absl::StatusOr<EofPacket> ParseEofPacket(std::string_view payload);

}  // namespace binrelay::protocol
