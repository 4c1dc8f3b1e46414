#include "protocol/packet_framer.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

uint32_t ChunkLength(const char* p) {
  const auto* u = reinterpret_cast<const uint8_t*>(p);
  return uint32_t{u[0]} | (uint32_t{u[1]} << 8) | (uint32_t{u[2]} << 16);
}

void AppendHeader(std::string* out, size_t len, uint8_t seq) {
  out->push_back(static_cast<char>(len & 0xFF));
  out->push_back(static_cast<char>((len >> 8) & 0xFF));
  out->push_back(static_cast<char>((len >> 16) & 0xFF));
  out->push_back(static_cast<char>(seq));
}

}  // namespace

void AppendFramedPacket(std::string* out, std::string_view payload, uint8_t* seq) {
  size_t chunks = payload.size() / kMaxPacketChunk + 1;
  out->reserve(out->size() + payload.size() + chunks * kPacketHeaderSize);
  while (true) {
    size_t len = std::min(payload.size(), kMaxPacketChunk);
    AppendHeader(out, len, (*seq)++);
    out->append(payload.data(), len);
    payload.remove_prefix(len);
    // A full chunk always needs a successor, even an empty one.
    if (len < kMaxPacketChunk) break;
  }
}

PacketReader::PacketReader(size_t max_payload, size_t min_read_chunk)
    : max_payload_(max_payload), min_read_chunk_(min_read_chunk) {}

size_t PacketReader::PrepareWrite(size_t min_bytes, char** out) {
  begin_ += pending_consume_;
  pending_consume_ = 0;
  size_t live = end_ - begin_;
  if (live == 0) {
    begin_ = end_ = 0;
    // A large packet grew the buffer; an idle connection gives it back.
    if (buf_.size() > 8 * min_read_chunk_ && wanted_ == 0) std::string().swap(buf_);
  }
  size_t want = std::max({min_bytes, min_read_chunk_, wanted_ > live ? wanted_ - live : 0});
  if (buf_.size() - end_ < want) {
    // Compact first: consumed bytes at the front are reusable.
    if (begin_ > 0) {
      std::memmove(buf_.data(), buf_.data() + begin_, live);
      begin_ = 0;
      end_ = live;
    }
    if (buf_.size() - end_ < want) buf_.resize(std::max(end_ + want, buf_.size() * 2));
  }
  *out = buf_.data() + end_;
  return buf_.size() - end_;
}

void PacketReader::CommitWrite(size_t n) { end_ += std::min(n, buf_.size() - end_); }

absl::Status PacketReader::CheckSeq(uint8_t got, uint8_t want, size_t offset) const {
  if (!check_sequence_ || got == want) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat("packet sequence id ", got, " at stream offset ", offset,
                                          " where ", want,
                                          " was expected: packets lost or out of order"));
}

absl::StatusOr<std::optional<Packet>> PacketReader::Next() {
  begin_ += pending_consume_;
  pending_consume_ = 0;
  wanted_ = 0;
  const char* base = buf_.data() + begin_;
  const size_t avail = end_ - begin_;
  if (avail < kPacketHeaderSize) return std::nullopt;

  // Fast path: a single-chunk packet is returned as a view into buf_.
  uint32_t len = ChunkLength(base);
  uint8_t seq = static_cast<uint8_t>(base[3]);
  if (len < kMaxPacketChunk) {
    if (len > max_payload_) {
      return absl::ResourceExhaustedError(
          absl::StrCat("packet of ", len, " bytes exceeds the limit of ", max_payload_));
    }
    if (avail < kPacketHeaderSize + len) {
      wanted_ = kPacketHeaderSize + len;
      return std::nullopt;
    }
    BR_RETURN_IF_ERROR(CheckSeq(seq, next_seq_, begin_));
    next_seq_ = seq + 1;
    pending_consume_ = kPacketHeaderSize + len;
    return Packet{std::string_view(base + kPacketHeaderSize, len), seq, 1};
  }

  // Split payload: wait until every chunk is buffered, then concatenate.
  size_t off = 0, total = 0, chunks = 0;
  uint8_t want_seq = next_seq_;
  while (true) {
    if (avail - off < kPacketHeaderSize) {
      wanted_ = off + kPacketHeaderSize;
      return std::nullopt;
    }
    uint32_t clen = ChunkLength(base + off);
    uint8_t cseq = static_cast<uint8_t>(base[off + 3]);
    BR_RETURN_IF_ERROR(CheckSeq(cseq, want_seq, begin_ + off));
    want_seq = cseq + 1;
    total += clen;
    if (total > max_payload_) {
      return absl::ResourceExhaustedError(absl::StrCat("split packet of at least ", total,
                                              " bytes exceeds the limit of ", max_payload_));
    }
    if (avail - off - kPacketHeaderSize < clen) {
      wanted_ = off + kPacketHeaderSize + clen;
      return std::nullopt;
    }
    off += kPacketHeaderSize + clen;
    ++chunks;
    if (clen < kMaxPacketChunk) break;
  }
  assembled_.clear();
  assembled_.reserve(total);
  for (size_t p = 0; p < off;) {
    uint32_t clen = ChunkLength(base + p);
    assembled_.append(base + p + kPacketHeaderSize, clen);
    p += kPacketHeaderSize + clen;
  }
  next_seq_ = want_seq;
  pending_consume_ = off;
  return Packet{assembled_, seq, chunks};
}

}  // namespace binrelay::protocol
