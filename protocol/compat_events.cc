#include "protocol/compat_events.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "protocol/checksum.h"
#include "protocol/event_header.h"
#include "protocol/event_type.h"

namespace binrelay::protocol {
namespace {

constexpr size_t kTypeOffset = 4;
constexpr size_t kFlagsOffset = 17;
// QUERY post-header: thread_id(4) exec_time(4) db_len(1) error_code(2)
// status_vars_len(2).
constexpr size_t kQueryHeaderLen = 13;
constexpr size_t kMinUserVarEvent = kEventHeaderLen + 4 + 1 + 1;          // 25
constexpr size_t kMinQueryEvent = kEventHeaderLen + kQueryHeaderLen + 1 + 1;  // 34
constexpr size_t kGtidPostHeaderLen = 19;
constexpr uint8_t kQTimeZoneCode = 5;  // Q_TIME_ZONE_CODE status variable

void Store(std::string* e, size_t at, uint64_t v, size_t width) {
  for (size_t i = 0; i < width; ++i) (*e)[at + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

// Length without the CRC trailer.
size_t DataLen(const std::string& e, bool with_crc) {
  return with_crc ? (e.size() >= kChecksumLen ? e.size() - kChecksumLen : 0) : e.size();
}

// Flags as MariaDB sets them on a replacement: not thread-specific, and no
// USE of a database.
void RewriteFlags(std::string* e) {
  uint16_t flags = static_cast<uint16_t>(static_cast<uint8_t>((*e)[kFlagsOffset]) |
                                         (static_cast<uint8_t>((*e)[kFlagsOffset + 1]) << 8));
  flags = static_cast<uint16_t>((flags & ~kFlagThreadSpecific) | kFlagSuppressUse);
  Store(e, kFlagsOffset, flags, 2);
}

// An empty QUERY post-header (thread 0, no time, no database, no error)
// with `status_vars_len`; returns where the status variables start.
size_t WriteEmptyQueryHeader(std::string* e, uint16_t status_vars_len) {
  (*e)[kTypeOffset] = static_cast<char>(kQueryEvent);
  Store(e, kEventHeaderLen, 0, 4);       // thread_id
  Store(e, kEventHeaderLen + 4, 0, 4);   // exec_time
  (*e)[kEventHeaderLen + 8] = 0;         // db_len
  Store(e, kEventHeaderLen + 9, 0, 2);   // error_code
  Store(e, kEventHeaderLen + 11, status_vars_len, 2);
  return kEventHeaderLen + kQueryHeaderLen;
}

void FixCrc(std::string* e, size_t data_len, bool with_crc) {
  if (with_crc) Store(e, data_len, Crc32(std::string_view(*e).substr(0, data_len)), 4);
}

}  // namespace

absl::Status RewriteAsDummyEvent(std::string* e, bool with_crc) {
  const size_t data_len = DataLen(*e, with_crc);
  if (data_len < kMinUserVarEvent) {
    return absl::FailedPreconditionError(absl::StrCat(
        "an event of type ", static_cast<int>(static_cast<uint8_t>((*e)[kTypeOffset])), " (",
        e->size(), " bytes) is too small to be replaced by a dummy event for this replica"));
  }
  const uint8_t old_type = static_cast<uint8_t>((*e)[kTypeOffset]);
  RewriteFlags(e);
  if (data_len < kMinQueryEvent) {
    // USER_VAR: name_len(4) name is_null(1) = 1.
    static constexpr char kName[] = "!dummyvar";
    const size_t name_len = data_len - (kMinUserVarEvent - 1);
    (*e)[kTypeOffset] = static_cast<char>(kUserVarEvent);
    Store(e, kEventHeaderLen, name_len, 4);
    std::copy_n(kName, name_len, e->begin() + kEventHeaderLen + 4);
    (*e)[kEventHeaderLen + 4 + name_len] = 1;
  } else {
    size_t at = WriteEmptyQueryHeader(e, 0);
    (*e)[at++] = 0;  // the empty database name's terminator
    char comment[80];
    const int n = std::snprintf(comment, sizeof(comment),
                                "# Dummy event replacing event type %u that slave cannot handle.",
                                static_cast<unsigned>(old_type));
    const size_t len = static_cast<size_t>(std::max(n, 0));
    const size_t room = data_len - (kMinQueryEvent - 1);
    std::copy_n(comment, std::min(room, len), e->begin() + at);
    if (room > len) std::fill_n(e->begin() + at + len, room - len, ' ');
  }
  FixCrc(e, data_len, with_crc);
  return absl::OkStatus();
}

absl::Status RewriteGtidForOldReplica(std::string* e, bool with_crc, bool need_dummy,
                                      bool* drop) {
  *drop = false;
  const size_t data_len = DataLen(*e, with_crc);
  if (data_len < kEventHeaderLen + kGtidPostHeaderLen) {
    return absl::DataLossError(
        absl::StrCat("GTID event of ", e->size(), " bytes is shorter than its post-header"));
  }
  const uint8_t flags2 = static_cast<uint8_t>((*e)[kEventHeaderLen + 12]);
  if ((flags2 & 0x01) != 0) {  // FL_STANDALONE: no COMMIT ends the group
    if (need_dummy) return RewriteAsDummyEvent(e, with_crc);
    *drop = true;
    return absl::OkStatus();
  }
  // A transaction's GTID becomes its BEGIN: 38 bytes, or 40 with a commit id,
  // whose 2 extra bytes become an empty time zone status variable.
  if (data_len != kEventHeaderLen + kGtidPostHeaderLen &&
      data_len != kEventHeaderLen + kGtidPostHeaderLen + 2) {
    return absl::DataLossError(absl::StrCat(
        "GTID event of ", data_len, " bytes (without checksum) cannot be replaced by a BEGIN "
        "of the same length for a replica without GTID support (XA and multi-engine "
        "transactions carry extra bytes)"));
  }
  RewriteFlags(e);
  const bool short_form = data_len == kEventHeaderLen + kGtidPostHeaderLen;
  size_t at = WriteEmptyQueryHeader(e, short_form ? 0 : 2);
  if (!short_form) {
    (*e)[at++] = static_cast<char>(kQTimeZoneCode);
    (*e)[at++] = 0;  // empty time zone name
  }
  (*e)[at++] = 0;  // the empty database name's terminator
  std::copy_n("BEGIN", 5, e->begin() + at);
  FixCrc(e, data_len, with_crc);
  return absl::OkStatus();
}

bool IsPartOfEventGroup(uint8_t type) {
  switch (type) {
    case kMariaGtidEvent:
    case kIntvarEvent:
    case kRandEvent:
    case kUserVarEvent:
    case kTableMapEvent:
    case kAnnotateRowsEvent:
      return true;
    default:
      return false;
  }
}

bool QueryIsCommitOrRollback(std::string_view event, bool with_crc) {
  size_t len = event.size();
  if (with_crc) len = len > kChecksumLen ? len - kChecksumLen : 0;
  if (len < kEventHeaderLen + kQueryHeaderLen || len < 9) return false;
  const std::string_view body = event.substr(0, len);
  return body.substr(len - 7) == std::string_view("\0COMMIT", 7) ||
         body.substr(len - 9) == std::string_view("\0ROLLBACK", 9);
}

}  // namespace binrelay::protocol
