// EventFramer: the per-stream state that turns complete event byte ranges
// into EventViews — tracks the latest FORMAT_DESCRIPTION (or START_V3),
// decides whether each event carries a CRC32, verifies it, and refuses event
// types it cannot safely skip. Both file readers (binlog_file_reader.h,
// packet_capture_reader.h) and the network receiver share it, so a relay
// log, a dump stream and a binlog file are framed by the same rules.
//
// CRC presence rules (libbinlogevents Format_description_event; MySQL
// sql/rpl_binlog_sender.cc fake_rotate_event, MariaDB sql/sql_repl.cc):
//  - FDE: has a CRC iff its server version is checksum-aware (>= 5.6.1);
//  - events before any FDE, and fake ROTATE / HEARTBEAT events (they follow
//    the client's @master_binlog_checksum, not the file's FDE): per
//    Options::out_of_band_checksum, by default detected by testing the CRC;
//  - everything else: the latest FDE's algorithm.
// Unknown type codes (neither MySQL 1..42 nor MariaDB 160..172) are accepted
// only with the IGNORABLE flag (0x80), e.g. Aurora's type-100 padding; the
// caller skips them (IsKnownEventType false). Without the flag: Unimplemented.
//
// Thread safety: none; one framer per stream, used by one thread.
// Lifetime: returned views point into the caller's buffer; format() is owned.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "protocol/event_header.h"
#include "protocol/format_description.h"

namespace binrelay::protocol {

class EventFramer {
 public:
  enum class OutOfBandChecksum : uint8_t { kDetect, kCrc32, kOff };
  struct Options {
    OutOfBandChecksum out_of_band_checksum = OutOfBandChecksum::kDetect;
    bool verify_checksums = true;
  };

  EventFramer() = default;
  explicit EventFramer(Options options) : options_(options) {}

  // `event` must be exactly one event (event_size bytes). `offset` is where it
  // starts in its file/stream, used in errors and copied into the view.
  absl::StatusOr<EventView> Frame(std::string_view event, uint64_t offset);

  bool has_format() const { return format_.has_value(); }
  // Only valid when has_format().
  const FormatDescription& format() const { return *format_; }
  // Replaces the current format (e.g. a receiver resuming mid-file).
  void set_format(FormatDescription fd) { format_ = std::move(fd); }
  uint64_t crc_checked() const { return crc_checked_; }

 private:
  absl::StatusOr<bool> HasChecksum(const EventHeader& h, std::string_view event, uint64_t offset);

  Options options_;
  std::optional<FormatDescription> format_;
  bool encrypted_ = false;
  uint64_t crc_checked_ = 0;
};

}  // namespace binrelay::protocol
