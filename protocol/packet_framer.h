// Packet framing of the client/server protocol
// (https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_packets.html):
// a 4-byte header (3-byte little-endian length, 1-byte sequence id) before each
// payload; logical payloads of >= 0xFFFFFF bytes are split into 0xFFFFFF-byte
// chunks, ending with a shorter (possibly empty) chunk.
//
// Everything here works on buffers, not sockets, so it is unit-testable:
// AppendFramedPacket() frames outgoing payloads; PacketReader takes raw stream
// bytes as they arrive and yields whole logical payloads.
//
// Thread safety: none; a PacketReader belongs to one connection.
// Lifetime: a payload view returned by PacketReader::Next() stays valid until
// the next call to Next() or PrepareWrite() on the same reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace binrelay::protocol {

inline constexpr size_t kPacketHeaderSize = 4;
inline constexpr size_t kMaxPacketChunk = 0xFFFFFF;

// Appends `payload` to *out as one or more packets; the first has sequence id
// *seq, and *seq is left at the id the next packet of the exchange must use.
// A payload that is an exact multiple of 0xFFFFFF (including none at all for
// an empty payload is NOT added: an empty payload is one empty packet) ends
// with an empty packet, as the receiver needs a chunk shorter than 0xFFFFFF.
void AppendFramedPacket(std::string* out, std::string_view payload, uint8_t* seq);

struct Packet {
  std::string_view payload;  // reassembled logical payload
  uint8_t first_seq = 0;     // sequence id of its first chunk
  size_t chunks = 1;         // number of physical packets it arrived in
};

class PacketReader {
 public:
  // `max_payload` bounds a reassembled payload so a hostile length cannot
  // make the reader buffer without limit. `min_read_chunk` is the least room
  // PrepareWrite offers: large for a replication stream (fewer reads), small
  // for the many mostly idle connections of a server.
  explicit PacketReader(size_t max_payload = size_t{0x40000000} + 1,
                        size_t min_read_chunk = 64 * 1024);

  // Returns a writable region of at least `min_bytes` bytes (more when a
  // partially received packet is known to need more) at the end of the
  // buffered data. May move buffered bytes: invalidates the last payload.
  size_t PrepareWrite(size_t min_bytes, char** out);
  // Marks `n` bytes of the region from PrepareWrite() as received.
  void CommitWrite(size_t n);

  // The next complete logical packet, or nullopt when more bytes are needed.
  // A sequence id out of order is DataLoss; a payload over the limit is
  // ResourceExhausted (refused from its length, before it is buffered).
  absl::StatusOr<std::optional<Packet>> Next();

  // Sequence id the next packet (read or written) of this exchange must carry.
  uint8_t next_seq() const { return next_seq_; }
  void set_next_seq(uint8_t seq) { next_seq_ = seq; }
  // MariaDB primaries may reset sequence ids mid-stream under semi-sync
  // (net.pkt_nr_can_be_reset in MariaDB sql/semisync_master.cc); the dump
  // session can turn the check off.
  void set_check_sequence(bool check) { check_sequence_ = check; }

  size_t buffered() const { return end_ - begin_ - pending_consume_; }
  // Bytes of the buffer (its capacity), for tests of memory per connection.
  size_t capacity() const { return buf_.size(); }
  // Removes and returns the bytes received after the last returned packet
  // (a TLS ClientHello that arrived with the SSLRequest belongs to TLS).
  std::string TakeBuffered() {
    std::string rest = buf_.substr(begin_ + pending_consume_, buffered());
    begin_ = end_ = pending_consume_ = wanted_ = 0;
    return rest;
  }

 private:
  absl::Status CheckSeq(uint8_t got, uint8_t want, size_t offset) const;

  std::string buf_;
  size_t begin_ = 0;  // first unconsumed byte
  size_t end_ = 0;    // one past the last received byte
  size_t pending_consume_ = 0;  // bytes of the last returned packet
  size_t wanted_ = 0;  // total bytes (from begin_) the pending packet needs, if known
  std::string assembled_;  // reused for multi-chunk payloads
  size_t max_payload_;
  size_t min_read_chunk_;
  uint8_t next_seq_ = 0;
  bool check_sequence_ = true;
};

}  // namespace binrelay::protocol
