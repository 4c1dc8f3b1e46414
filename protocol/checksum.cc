#include "protocol/checksum.h"

#include <zlib.h>

#include "absl/strings/str_cat.h"
#include "protocol/crc32_fast.h"
#include "absl/strings/str_format.h"
#include "protocol/event_header.h"
#include "protocol/event_type.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

uint32_t Extend(uint32_t crc, std::string_view data) { return Crc32Extend(crc, data); }

uint32_t StoredCrc(std::string_view event) {
  const auto* p = reinterpret_cast<const uint8_t*>(event.data() + event.size() - kChecksumLen);
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

}  // namespace

uint32_t Crc32(std::string_view data) { return Extend(static_cast<uint32_t>(crc32(0, nullptr, 0)), data); }

uint32_t ComputeEventCrc(std::string_view event) {
  std::string_view covered = event.substr(0, event.size() - kChecksumLen);
  if (static_cast<uint8_t>(event[4]) != kFormatDescriptionEvent) return Crc32(covered);
  // Flags are at bytes 17..18 (LE); the in-use bit is bit 0 of byte 17.
  uint32_t crc = Extend(static_cast<uint32_t>(crc32(0, nullptr, 0)), covered.substr(0, 17));
  const char flags_lo = static_cast<char>(static_cast<uint8_t>(covered[17]) & ~kFlagBinlogInUse);
  crc = Extend(crc, std::string_view(&flags_lo, 1));
  return Extend(crc, covered.substr(18));
}

bool EventCrcMatches(std::string_view event) {
  if (event.size() < kEventHeaderLen + kChecksumLen) return false;
  return StoredCrc(event) == ComputeEventCrc(event);
}

absl::Status VerifyEventChecksum(std::string_view event, uint64_t offset) {
  if (event.size() < kEventHeaderLen + kChecksumLen) {
    return absl::DataLossError(absl::StrCat("event at offset ", offset, " is ", event.size(),
                                            " bytes, too short to carry a CRC32"));
  }
  const uint32_t stored = StoredCrc(event);
  const uint32_t computed = ComputeEventCrc(event);
  if (stored == computed) return absl::OkStatus();
  return absl::DataLossError(absl::StrFormat(
      "CRC32 mismatch in %s event at offset %d: stored 0x%08x, computed 0x%08x",
      std::string(EventTypeName(static_cast<uint8_t>(event[4]))), offset, stored, computed));
}

}  // namespace binrelay::protocol
