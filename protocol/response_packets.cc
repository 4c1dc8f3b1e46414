#include "protocol/response_packets.h"

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"

namespace binrelay::protocol {

ResponseKind ClassifyResponse(std::string_view payload) {
  if (payload.empty()) return ResponseKind::kOther;
  switch (static_cast<uint8_t>(payload[0])) {
    case 0x00:
      return payload.size() >= 7 ? ResponseKind::kOk : ResponseKind::kOther;
    case 0xFF:
      return ResponseKind::kErr;
    case 0xFE:
      return payload.size() < 9 ? ResponseKind::kEof : ResponseKind::kOther;
    default:
      return ResponseKind::kOther;
  }
}

absl::StatusOr<OkPacket> ParseOkPacket(std::string_view payload) {
  ByteCursor c(payload);
  uint8_t header = c.U8();
  if (c.ok() && header != 0x00 && header != 0xFE) {
    return absl::InvalidArgumentError(
        absl::StrCat("not an OK packet: first byte 0x", absl::Hex(header)));
  }
  OkPacket ok;
  ok.affected_rows = c.Lenenc();
  ok.last_insert_id = c.Lenenc();
  ok.status_flags = c.U16();
  ok.warnings = c.U16();
  if (!c.ok()) return c.status("OK packet");
  ok.info = c.Rest();
  return ok;
}

absl::StatusOr<EofPacket> ParseEofPacket(std::string_view payload) {
  ByteCursor c(payload);
  uint8_t header = c.U8();
  if (c.ok() && (header != 0xFE || payload.size() >= 9)) {
    return absl::InvalidArgumentError(absl::StrCat("not an EOF packet: first byte 0x",
                                                   absl::Hex(header), ", ", payload.size(),
                                                   " bytes"));
  }
  EofPacket eof;
  eof.warnings = c.U16();
  eof.status_flags = c.U16();
  if (!c.ok()) return c.status("EOF packet");
  return eof;
}

}  // namespace binrelay::protocol
