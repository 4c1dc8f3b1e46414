#include "protocol/artificial_events.h"

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/checksum.h"
#include "protocol/event_header.h"
#include "protocol/event_type.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

constexpr size_t kLogPosOffset = 13;
constexpr size_t kFlagsOffset = 17;
// FDE body: binlog_version(2) + server_version(50), then `created`(4).
constexpr size_t kFdeCreatedOffset = kEventHeaderLen + 2 + 50;

// Starts an event: the header with event_size covering `body_len` and the
// CRC if any; the caller appends the body, then FinishEvent.
void StartEvent(std::string* out, uint8_t type, uint32_t server_id, size_t body_len,
                uint32_t log_pos, uint16_t flags, bool with_crc) {
  size_t size = kEventHeaderLen + body_len + (with_crc ? kChecksumLen : 0);
  out->reserve(size);
  AppendFixed(out, 0, 4);  // timestamp 0: artificial
  out->push_back(static_cast<char>(type));
  AppendFixed(out, server_id, 4);
  AppendFixed(out, size, 4);
  AppendFixed(out, log_pos, 4);
  AppendFixed(out, flags, 2);
}

void FinishEvent(std::string* out, bool with_crc) {
  if (with_crc) AppendFixed(out, Crc32(*out), 4);
}

}  // namespace

void AppendPackedInt(std::string* out, uint64_t v) { AppendLenenc(out, v); }

std::string BuildFakeRotate(uint32_t server_id, std::string_view file, uint64_t position,
                            bool with_crc) {
  std::string e;
  StartEvent(&e, kRotateEvent, server_id, 8 + file.size(), 0, kFlagArtificial, with_crc);
  AppendFixed(&e, position, 8);
  e.append(file);
  FinishEvent(&e, with_crc);
  return e;
}

namespace {

absl::StatusOr<std::string> RewriteFde(std::string_view fde, bool has_crc, bool zero_log_pos) {
  if (fde.size() < kFdeCreatedOffset + 4 + (has_crc ? kChecksumLen : 0)) {
    return absl::DataLossError(
        absl::StrCat("FORMAT_DESCRIPTION event of ", fde.size(), " bytes is too short to rewrite"));
  }
  std::string e(fde);
  std::string zero;
  AppendFixed(&zero, 0, 4);
  if (zero_log_pos) e.replace(kLogPosOffset, 4, zero);
  e.replace(kFdeCreatedOffset, 4, zero);
  e[kFlagsOffset] = static_cast<char>(static_cast<uint8_t>(e[kFlagsOffset]) & ~kFlagBinlogInUse);
  if (has_crc) {
    std::string crc;
    AppendFixed(&crc, Crc32(std::string_view(e).substr(0, e.size() - kChecksumLen)), 4);
    e.replace(e.size() - kChecksumLen, kChecksumLen, crc);
  }
  return e;
}

}  // namespace

absl::StatusOr<std::string> RewriteFdeForMidFileStart(std::string_view fde, bool has_crc) {
  return RewriteFde(fde, has_crc, /*zero_log_pos=*/true);
}

absl::StatusOr<std::string> RewriteFdeWithoutCreated(std::string_view fde, bool has_crc) {
  return RewriteFde(fde, has_crc, /*zero_log_pos=*/false);
}

std::string FdeWithoutInUse(std::string_view fde) {
  std::string e(fde);
  if (e.size() > kFlagsOffset) {
    e[kFlagsOffset] = static_cast<char>(static_cast<uint8_t>(e[kFlagsOffset]) & ~kFlagBinlogInUse);
  }
  return e;
}

std::string BuildHeartbeat(uint32_t server_id, std::string_view file, uint64_t position,
                           bool with_crc) {
  std::string e;
  if (position <= 0xFFFFFFFFu) {
    StartEvent(&e, kHeartbeatEvent, server_id, file.size(), static_cast<uint32_t>(position), 0,
               with_crc);
  } else {
    StartEvent(&e, kHeartbeatEvent, server_id, 8 + file.size(), 0, 0, with_crc);
    AppendFixed(&e, position, 8);
  }
  e.append(file);
  FinishEvent(&e, with_crc);
  return e;
}

std::string BuildHeartbeatV2(uint32_t server_id, std::string_view file, uint64_t position,
                             bool with_crc) {
  std::string body;
  AppendPackedInt(&body, 1);  // log_filename
  AppendPackedInt(&body, file.size());
  body.append(file);
  std::string pos;
  AppendPackedInt(&pos, position);
  AppendPackedInt(&body, 2);  // log_position
  AppendPackedInt(&body, pos.size());
  body.append(pos);
  body.push_back(0);  // end marker
  std::string e;
  uint32_t log_pos = position <= 0xFFFFFFFFu ? static_cast<uint32_t>(position) : 0;
  StartEvent(&e, kHeartbeatEventV2, server_id, body.size(), log_pos, 0, with_crc);
  e.append(body);
  FinishEvent(&e, with_crc);
  return e;
}

std::string BuildFakeGtidList(uint32_t server_id, const std::vector<MariaGtidList::Entry>& gtids,
                              uint64_t position, bool with_crc, uint32_t flags) {
  std::string e;
  uint32_t log_pos = position <= 0xFFFFFFFFu ? static_cast<uint32_t>(position) : 0;
  StartEvent(&e, kGtidListEvent, server_id, 4 + 16 * gtids.size(), log_pos, kFlagArtificial,
             with_crc);
  AppendFixed(&e, (gtids.size() & 0x0FFFFFFF) | flags, 4);  // count in the low 28 bits
  for (const auto& g : gtids) {
    AppendFixed(&e, g.domain_id, 4);
    AppendFixed(&e, g.server_id, 4);
    AppendFixed(&e, g.seq_no, 8);
  }
  FinishEvent(&e, with_crc);
  return e;
}

}  // namespace binrelay::protocol
