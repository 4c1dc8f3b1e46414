#include "protocol/format_description.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/event_header.h"
#include "protocol/event_type.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

constexpr size_t kServerVersionLen = 50;
constexpr size_t kChecksumTrailerLen = 1 + 4;  // algorithm byte + CRC32

// Checksum support arrived in MySQL 5.6.1 and MariaDB 5.3.0
// (checksum_version_split_mysql / _mariadb in log_event.cc).
constexpr uint32_t kMysqlChecksumSplit = (5u << 16) | (6u << 8) | 1u;
constexpr uint32_t kMariaChecksumSplit = (5u << 16) | (3u << 8) | 0u;

std::string TrimNul(std::string_view s) {
  size_t end = s.find('\0');
  return std::string(s.substr(0, end));
}

}  // namespace

uint32_t VersionProduct(std::string_view v) {
  uint32_t parts[3] = {0, 0, 0};
  size_t i = 0;
  for (int part = 0; part < 3 && i < v.size(); ++part) {
    uint32_t n = 0;
    size_t start = i;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9' && i - start < 4) n = n * 10 + (v[i++] - '0');
    if (i == start) break;
    parts[part] = n > 255 ? 255 : n;
    if (i < v.size() && v[i] == '.') ++i; else break;
  }
  return (parts[0] << 16) | (parts[1] << 8) | parts[2];
}

absl::StatusOr<FormatDescription> ParseFormatDescription(std::string_view event) {
  BR_ASSIGN_OR_RETURN(EventHeader h, ParseEventHeader(event));
  if (h.type != kFormatDescriptionEvent) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected FORMAT_DESCRIPTION, got ", AV(EventTypeName(h.type))));
  }
  if (h.event_size != event.size()) {
    return absl::DataLossError(absl::StrCat("FORMAT_DESCRIPTION event_size ", h.event_size,
                                            " but ", event.size(), " bytes given"));
  }
  ByteCursor c(event.substr(kEventHeaderLen));
  FormatDescription fd;
  fd.binlog_version = c.U16();
  fd.server_version = TrimNul(c.Bytes(kServerVersionLen));
  fd.create_timestamp = c.U32();
  fd.common_header_len = c.U8();
  BR_RETURN_IF_ERROR(Annotate(c.status("FORMAT_DESCRIPTION fixed part"), "FORMAT_DESCRIPTION"));
  if (fd.binlog_version != 4) {
    return absl::FailedPreconditionError(absl::StrCat(
        "FORMAT_DESCRIPTION declares binlog version ", fd.binlog_version, "; only 4 is supported"));
  }
  if (fd.common_header_len != kEventHeaderLen) {
    return absl::FailedPreconditionError(
        absl::StrCat("FORMAT_DESCRIPTION declares a ", fd.common_header_len,
                     "-byte common header; only 19 is supported"));
  }
  fd.is_mariadb = fd.server_version.find("MariaDB") != std::string::npos ||
                  fd.server_version.find("-maria-") != std::string::npos;
  fd.version_product = VersionProduct(fd.server_version);
  fd.checksum_aware =
      fd.version_product >= (fd.is_mariadb ? kMariaChecksumSplit : kMysqlChecksumSplit);
  std::string_view rest = c.Rest();
  if (fd.checksum_aware) {
    if (rest.size() < kChecksumTrailerLen) {
      return absl::DataLossError(absl::StrCat("FORMAT_DESCRIPTION of ", AV(fd.server_version),
                                              " lacks the checksum trailer (", rest.size(),
                                              " bytes after the fixed part)"));
    }
    const uint8_t alg = static_cast<uint8_t>(rest[rest.size() - kChecksumTrailerLen]);
    if (alg == 0 || alg == 255) {
      fd.checksum_alg = ChecksumAlg::kOff;
    } else if (alg == 1) {
      fd.checksum_alg = ChecksumAlg::kCrc32;
    } else {
      return absl::DataLossError(
          absl::StrCat("FORMAT_DESCRIPTION declares unknown checksum algorithm ", alg));
    }
    rest.remove_suffix(kChecksumTrailerLen);
  }
  fd.post_header_len.assign(rest.begin(), rest.end());
  return fd;
}

absl::StatusOr<FormatDescription> ParseStartEventV3(std::string_view event) {
  if (event.size() >= 4 + 1 + 4 + 4 + 2 && event.size() < kEventHeaderLen) {
    return absl::FailedPreconditionError("binlog v1 (13-byte headers, MySQL 3.23) is not supported");
  }
  BR_ASSIGN_OR_RETURN(EventHeader h, ParseEventHeader(event));
  if (h.type != kStartEventV3) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected START_V3, got ", AV(EventTypeName(h.type))));
  }
  ByteCursor c(event.substr(kEventHeaderLen, h.event_size - kEventHeaderLen));
  FormatDescription fd;
  fd.binlog_version = c.U16();
  fd.server_version = TrimNul(c.Bytes(kServerVersionLen));
  fd.create_timestamp = c.U32();
  BR_RETURN_IF_ERROR(Annotate(c.status("START_V3 body"), "START_V3"));
  if (fd.binlog_version != 3) {
    return absl::FailedPreconditionError(absl::StrCat(
        "START_V3 declares binlog version ", fd.binlog_version, "; only 3 (and 4 via FDE) is supported"));
  }
  fd.version_product = VersionProduct(fd.server_version);
  // Binlog v3 post-header lengths (types 1..14): START 56, QUERY 11 (no
  // status vars), ROTATE 8, LOAD/CREATE_FILE/NEW_LOAD 18, APPEND_BLOCK,
  // EXEC_LOAD, DELETE_FILE 4; the rest 0.
  fd.post_header_len = {56, 11, 0, 8, 0, 18, 0, 18, 4, 4, 4, 18, 0, 0};
  return fd;
}

FormatDescription Mysql8FormatDescription() {
  FormatDescription fd;
  fd.server_version = "8.0.35";
  fd.version_product = VersionProduct(fd.server_version);
  fd.checksum_aware = true;
  fd.checksum_alg = ChecksumAlg::kCrc32;
  fd.post_header_len = {0, 13, 0, 8, 0,  0,  0,  0,  4,  0,  4, 0,  0, 0,
                        98, 0, 4, 26, 8, 0, 0, 0, 8, 8, 8, 2, 0,  0,
                        0,  10, 10, 10, 42, 42, 0, 18, 52, 0, 10, 40, 0};
  return fd;
}

}  // namespace binrelay::protocol
