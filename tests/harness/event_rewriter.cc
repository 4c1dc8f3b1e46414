#include "tests/harness/event_rewriter.h"

#include <zlib.h>

namespace binrelay::testing {

void EventTypeRewriter::Feed(const char* data, size_t n, std::string* out) {
  pending_.append(data, n);
  size_t at = 0;
  while (pending_.size() - at >= 4) {
    const auto* h = reinterpret_cast<const unsigned char*>(pending_.data() + at);
    const size_t len = h[0] | (h[1] << 8) | (h[2] << 16);
    if (pending_.size() - at < 4 + len) break;
    std::string packet = pending_.substr(at, 4 + len);
    Rewrite(packet);
    out->append(packet);
    at += 4 + len;
  }
  pending_.erase(0, at);
}

void EventTypeRewriter::Rewrite(std::string& packet) {
  // 4 header bytes, the OK byte 0x00, then the event: a 19-byte header whose
  // size field (bytes 9..12) is the event's whole length, CRC32 last.
  constexpr size_t kEvent = 5;
  if (packet.size() < kEvent + 19 + 4 || packet[4] != '\0') return;
  const auto* e = reinterpret_cast<unsigned char*>(packet.data() + kEvent);
  const uint32_t size = e[9] | (e[10] << 8) | (e[11] << 16) | (static_cast<uint32_t>(e[12]) << 24);
  if (size != packet.size() - kEvent || packet.find(marker_, kEvent) == std::string::npos) return;
  packet[kEvent + 4] = static_cast<char>(new_type_);
  const uLong crc = crc32(0L, e, size - 4);
  for (int i = 0; i < 4; ++i) packet[kEvent + size - 4 + i] = static_cast<char>((crc >> (8 * i)) & 0xFF);
  rewritten_->fetch_add(1);
}

}  // namespace binrelay::testing
