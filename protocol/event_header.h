// The 19-byte v4 binlog event common header (libbinlogevents/src/
// binlog_event.cpp Log_event_header) and EventView, the parsed
// frame of one event: header + whole bytes + body (post-header and payload,
// without the common header and without the CRC32 trailer).
//
// Thread safety: plain values and pure functions.
// Lifetime: EventView holds views into the caller's buffer (file image,
// received packet or decompressed payload); it is valid as long as that
// buffer is. Nothing here allocates.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

namespace binrelay::protocol {

inline constexpr size_t kEventHeaderLen = 19;
inline constexpr size_t kChecksumLen = 4;

// Common-header flags (binlog_event.h LOG_EVENT_*_F).
enum EventFlag : uint16_t {
  kFlagBinlogInUse = 0x0001,
  kFlagForcedRotate = 0x0002,
  kFlagThreadSpecific = 0x0004,
  kFlagSuppressUse = 0x0008,
  kFlagUpdateTableMapVersion = 0x0010,
  kFlagArtificial = 0x0020,
  kFlagRelayLog = 0x0040,
  kFlagIgnorable = 0x0080,
  kFlagNoFilter = 0x0100,
  kFlagMtsIsolate = 0x0200,
  kFlagMariaAcceptOwn = 0x4000,
  kFlagMariaSkipReplication = 0x8000,
};

struct EventHeader {
  uint32_t timestamp = 0;
  uint8_t type = 0;
  uint32_t server_id = 0;
  uint32_t event_size = 0;  // header + body + CRC
  uint32_t log_pos = 0;     // end offset of the event; 0 when artificial/inner
  uint16_t flags = 0;

  bool artificial() const { return (flags & kFlagArtificial) != 0; }
  bool ignorable() const { return (flags & kFlagIgnorable) != 0; }
};

// Parses the first 19 bytes of `bytes`. Fails with OutOfRange if fewer are
// given and DataLoss if event_size < 19 (a header that cannot describe an
// event). Does not check event_size against bytes.size().
absl::StatusOr<EventHeader> ParseEventHeader(std::string_view bytes);

struct EventView {
  EventHeader header;
  std::string_view bytes;  // the whole event, event_size bytes, CRC included
  std::string_view body;   // bytes minus the common header and the CRC
  bool has_checksum = false;
  uint64_t offset = 0;     // where the event starts in its file/stream (0 if unknown)

  uint8_t type() const { return header.type; }
};

// Frames one complete event: `event` must be exactly event_size bytes.
// `has_checksum` says whether the last 4 bytes are a CRC32 (not verified
// here; see checksum.h). `offset` is only used for error messages and
// copied into the view.
absl::StatusOr<EventView> MakeEventView(std::string_view event, bool has_checksum,
                                        uint64_t offset = 0);

}  // namespace binrelay::protocol
