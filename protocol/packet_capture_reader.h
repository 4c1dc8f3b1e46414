// PacketCaptureReader: reads a recorded replication stream in the zongji
// `*.packets.bin` layout — records of u32 little-endian length followed by
// that many bytes of packet payload, each payload being the 0x00 OK marker
// followed by one event (https://mariadb.com/kb/en/3-binlog-network-stream/)
// — and yields the same EventViews a
// BinlogFileReader would. An EOF payload (0xFE) ends the stream; an ERR
// payload (0xFF) is returned as an Unavailable error with its message.
//
// Thread safety: none; one reader per thread.
// Lifetime: views point into `data`, which the caller keeps alive.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "protocol/event_framer.h"

namespace binrelay::protocol {

class PacketCaptureReader {
 public:
  explicit PacketCaptureReader(std::string_view data, std::string name = {},
                               EventFramer::Options options = {})
      : data_(data), name_(std::move(name)), framer_(options) {}

  // Same contract as BinlogFileReader::Next; EventView::offset is the offset
  // of the event's first byte inside the capture.
  absl::StatusOr<bool> Next(EventView* out);

  uint64_t position() const { return pos_; }
  uint64_t packets() const { return packets_; }
  const EventFramer& framer() const { return framer_; }
  uint64_t skipped_events() const { return skipped_; }

 private:
  absl::Status Error(absl::Status s) const;

  std::string_view data_;
  std::string name_;
  EventFramer framer_;
  uint64_t pos_ = 0;
  uint64_t packets_ = 0;
  uint64_t skipped_ = 0;
  bool ended_ = false;
};

}  // namespace binrelay::protocol
