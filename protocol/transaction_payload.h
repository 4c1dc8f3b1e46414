// TRANSACTION_PAYLOAD (40, MySQL 8.0.20+ binlog_transaction_compression,
// libbinlogevents/src/codecs/binary.cpp Transaction_payload::decode): TLV
// header (no post-header despite the FDE's 40), the compressed
// payload, its zstd decompression into an owned buffer, and an iterator over
// the inner events (no CRC trailers, log_pos 0).
//
// Thread safety: pure functions; an iterator is used by one thread.
// Lifetime: TransactionPayload views point into the event; inner EventViews
// point into the caller's decompression buffer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "protocol/event_header.h"

namespace binrelay::protocol {

inline constexpr uint8_t kPayloadCompressionZstd = 0;
inline constexpr uint8_t kPayloadCompressionNone = 255;

struct TransactionPayload {
  uint64_t compression = kPayloadCompressionZstd;
  uint64_t payload_size = 0;
  uint64_t uncompressed_size = 0;  // 0 when absent (NONE)
  std::string_view payload;
  uint64_t event_offset = 0;
};

absl::StatusOr<TransactionPayload> ParseTransactionPayload(const EventView& ev);

// Decompresses into *out (cleared first); for NONE copies the payload.
// Refuses declared sizes above `max_size` (default 1 GiB) before allocating,
// and output that differs from the declared uncompressed size.
absl::Status DecompressTransactionPayload(const TransactionPayload& tp, std::string* out,
                                          size_t max_size = size_t{1} << 30);

// Iterates the inner events of a decompressed payload. Offsets in the views
// are positions inside the decompressed buffer.
class PayloadEventIterator {
 public:
  PayloadEventIterator(std::string_view decompressed, uint64_t outer_offset)
      : data_(decompressed), outer_offset_(outer_offset) {}
  // Same contract as BinlogFileReader::Next.
  absl::StatusOr<bool> Next(EventView* out);

 private:
  std::string_view data_;
  uint64_t outer_offset_;
  uint64_t pos_ = 0;
};

}  // namespace binrelay::protocol
