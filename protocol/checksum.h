// CRC32 of binlog events (libbinlogevents/src/binlog_event.cpp
// Log_event_footer::event_checksum_test): zlib/IEEE CRC-32 over every byte of the
// event except the 4-byte little-endian trailer that stores it. The FDE's CRC
// is computed with LOG_EVENT_BINLOG_IN_USE_F cleared, because the server
// flips that flag in place when it closes the file.
//
// Thread safety: pure functions.
// Lifetime: nothing is retained.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"

namespace binrelay::protocol {

uint32_t Crc32(std::string_view data);

// The CRC32 a whole event (trailer included) should carry, with the FDE
// in-use flag rule applied. `event` must be at least 19 + 4 bytes.
uint32_t ComputeEventCrc(std::string_view event);

// True if `event`'s last 4 bytes equal ComputeEventCrc(event). Used to detect
// whether an event written before any FDE (fake ROTATE) carries a CRC.
bool EventCrcMatches(std::string_view event);

// Ok if the trailer matches; otherwise DataLoss
// "CRC32 mismatch in <TYPE> event at offset N: stored X, computed Y".
absl::Status VerifyEventChecksum(std::string_view event, uint64_t offset);

}  // namespace binrelay::protocol
