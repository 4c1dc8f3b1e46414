// FORMAT_DESCRIPTION_EVENT (15, libbinlogevents/src/control_events.cpp
// Format_description_event) and the old START_EVENT_V3 (1): what a
// reader must know to frame and parse every later event of the file or
// stream — post-header lengths per type and the checksum algorithm.
//
// Thread safety: FormatDescription is a plain value; functions are pure.
// Lifetime: FormatDescription owns its strings and arrays; it outlives the
// event it was parsed from (readers keep the latest one).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace binrelay::protocol {

enum class ChecksumAlg : uint8_t { kOff = 0, kCrc32 = 1, kUndef = 255 };

struct FormatDescription {
  uint16_t binlog_version = 4;
  std::string server_version;   // NUL padding removed
  uint32_t create_timestamp = 0;
  uint8_t common_header_len = 19;
  // Entry i is the post-header length of event type i+1.
  std::vector<uint8_t> post_header_len;
  // Algorithm for the events that FOLLOW this FDE. The FDE itself carries a
  // CRC whenever checksum_aware is true, even with kOff.
  ChecksumAlg checksum_alg = ChecksumAlg::kOff;
  bool checksum_aware = false;  // server version >= 5.6.1 (MariaDB >= 5.3.0)
  bool is_mariadb = false;
  uint32_t version_product = 0;  // major*65536 + minor*256 + patch

  // 0 for types the array does not cover.
  uint8_t PostHeaderLen(uint8_t type) const {
    return (type >= 1 && type <= post_header_len.size()) ? post_header_len[type - 1] : 0;
  }
  bool events_have_crc() const { return checksum_alg == ChecksumAlg::kCrc32; }
};

// major*65536 + minor*256 + patch from the leading "a.b.c" of a version
// string; missing parts count as 0.
uint32_t VersionProduct(std::string_view server_version);

// Parses a whole FDE event (`event` = event_size bytes, CRC included if the
// server is checksum-aware). Does not verify the CRC (checksum.h does).
absl::StatusOr<FormatDescription> ParseFormatDescription(std::string_view event);

// Parses a START_EVENT_V3 (binlog v3, MySQL 4.0/4.1; its post-header lengths
// are the fixed v3 table). Binlog v1 (13-byte headers, MySQL 3.23) is
// rejected with FailedPrecondition.
absl::StatusOr<FormatDescription> ParseStartEventV3(std::string_view event);

// The FDE of a MySQL 8.0.35 server with CRC32. For framing events when
// no FDE is available (tests, synthesised streams).
FormatDescription Mysql8FormatDescription();

}  // namespace binrelay::protocol
