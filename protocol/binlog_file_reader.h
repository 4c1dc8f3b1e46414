// BinlogFileReader: walks a binlog or relay-log file image held in memory
// (std::string, mmap) — checks the `\xFEbin` magic, then yields each event
// in order through an EventFramer (FDE tracking, CRC verification, unknown-
// type policy). Truncation and corruption are errors naming the file offset.
// Events with unknown type codes that carry the IGNORABLE flag are skipped
// (counted in skipped_events()).
//
// Thread safety: none; one reader per thread.
// Lifetime: the reader and every EventView it yields point into `data`,
// which the caller keeps alive and unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "protocol/event_framer.h"

namespace binrelay::protocol {

inline constexpr std::string_view kBinlogMagic{"\xFE" "bin", 4};

class BinlogFileReader {
 public:
  // Fails with DataLoss if `data` does not start with the magic. `name` is
  // used only to prefix error messages.
  static absl::StatusOr<BinlogFileReader> Open(std::string_view data, std::string name = {},
                                               EventFramer::Options options = {});

  // Sets *out to the next event and returns true, or returns false at a clean
  // end of file. Errors carry the file name and offset.
  absl::StatusOr<bool> Next(EventView* out);

  uint64_t position() const { return pos_; }  // offset of the next event
  const EventFramer& framer() const { return framer_; }
  uint64_t skipped_events() const { return skipped_; }

 private:
  BinlogFileReader(std::string_view data, std::string name, EventFramer::Options options)
      : data_(data), name_(std::move(name)), framer_(options) {}
  absl::Status Error(absl::Status s) const;

  std::string_view data_;
  std::string name_;
  EventFramer framer_;
  uint64_t pos_ = kBinlogMagic.size();
  uint64_t skipped_ = 0;
};

}  // namespace binrelay::protocol
