#include "protocol/json_writer.h"

#include <cstdint>
#include <cstring>

namespace binrelay::protocol {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t c = b(i);
  size_t n;
  uint32_t min;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  uint32_t cp = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

size_t PlainJsonPrefix(std::string_view s) {
  // Per 8-byte word, `special` is nonzero iff a byte is < 0x20, '"', '\\' or
  // >= 0x80 (Sean Anderson's "Bit Twiddling Hacks": "Determine if a word has
  // a zero byte" and "... a byte less than n"). A borrow can flag bytes after
  // the first special one, never before it: the scalar loop then finds it.
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  const char* p = s.data();
  const size_t n = s.size();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    const uint64_t quote = w ^ (kOnes * '"');
    const uint64_t backslash = w ^ (kOnes * '\\');
    const uint64_t special = (((w - kOnes * 0x20) & ~w) | ((quote - kOnes) & ~quote) |
                              ((backslash - kOnes) & ~backslash) | w) &
                             kHigh;
    if (special != 0) break;
  }
  for (; i < n; ++i) {
    const auto c = static_cast<uint8_t>(p[i]);
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
  }
  return i;
}

void AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    // Copy the longest run of bytes that need no escaping in one go.
    const size_t run = i + PlainJsonPrefix(s.substr(i));
    out->append(s.data() + i, run - i);
    i = run;
    if (i >= s.size()) break;
    uint8_t c = static_cast<uint8_t>(s[i]);
    if (c >= 0x80) {
      size_t n = Utf8SequenceLength(s, i);
      if (n == 0) {
        out->append("\xEF\xBF\xBD");
        ++i;
      } else {
        out->append(s.data() + i, n);
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      default:
        out->append("\\u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 15]);
    }
    ++i;
  }
  out->push_back('"');
}

void AppendBase64(std::string_view bytes, std::string* out) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t n = bytes.size();
  const size_t old = out->size();
  out->resize(old + (n + 2) / 3 * 4);  // written through a pointer: no per-char checks
  char* o = out->data() + old;
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (p[i] << 16) | (p[i + 1] << 8) | p[i + 2];
    o[0] = kAlphabet[v >> 18];
    o[1] = kAlphabet[(v >> 12) & 63];
    o[2] = kAlphabet[(v >> 6) & 63];
    o[3] = kAlphabet[v & 63];
    o += 4;
  }
  if (i < n) {
    uint32_t v = p[i] << 16;
    if (i + 1 < n) v |= p[i + 1] << 8;
    o[0] = kAlphabet[v >> 18];
    o[1] = kAlphabet[(v >> 12) & 63];
    o[2] = i + 1 < n ? kAlphabet[(v >> 6) & 63] : '=';
    o[3] = '=';
  }
}

}  // namespace binrelay::protocol
