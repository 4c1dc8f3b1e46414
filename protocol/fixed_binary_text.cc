#include "protocol/fixed_binary_text.h"

#include "absl/strings/match.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void AppendHexByte(uint8_t b, std::string* out) {
  out->push_back(kHex[b >> 4]);
  out->push_back(kHex[b & 15]);
}

void AppendDecimalByte(uint8_t b, std::string* out) {
  if (b >= 100) out->push_back(static_cast<char>('0' + b / 100));
  if (b >= 10) out->push_back(static_cast<char>('0' + b / 10 % 10));
  out->push_back(static_cast<char>('0' + b % 10));
}

void AppendInet4(const uint8_t* p, std::string* out) {
  for (int i = 0; i < 4; ++i) {
    if (i) out->push_back('.');
    AppendDecimalByte(p[i], out);
  }
}

// One word in lowercase hex without leading zeros.
void AppendHexWord(uint16_t w, std::string* out) {
  bool started = false;
  for (int shift = 12; shift >= 0; shift -= 4) {
    const int nibble = (w >> shift) & 15;
    if (nibble == 0 && !started && shift != 0) continue;
    started = true;
    out->push_back(kHex[nibble]);
  }
}

void AppendInet6(const uint8_t* p, std::string* out) {
  uint16_t words[8];
  for (int i = 0; i < 8; ++i) words[i] = static_cast<uint16_t>((p[2 * i] << 8) | p[2 * i + 1]);
  // The first longest run of zero words; a later run must be strictly longer.
  int gap_pos = -1, gap_len = 0;
  for (int i = 0; i < 8;) {
    if (words[i] != 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < 8 && words[j] == 0) ++j;
    if (j - i > gap_len) {
      gap_pos = i;
      gap_len = j - i;
    }
    i = j;
  }
  for (int i = 0; i < 8; ++i) {
    if (i == gap_pos) {
      if (i == 0) out->push_back(':');
      out->push_back(':');
      i += gap_len - 1;
    } else if (i == 6 && gap_pos == 0 &&
               (gap_len == 6 || (gap_len == 5 && words[5] == 0xFFFF))) {
      AppendInet4(p + 12, out);  // IPv4-compatible or IPv4-mapped
      return;
    } else {
      AppendHexWord(words[i], out);
      if (i != 7) out->push_back(':');
    }
  }
}

}  // namespace

bool AppendFixedBinaryText(FixedBinaryType type, std::string_view bytes, std::string* out) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  switch (type) {
    case FixedBinaryType::kUuid:
      if (bytes.size() != 16) return false;
      for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out->push_back('-');
        AppendHexByte(p[i], out);
      }
      return true;
    case FixedBinaryType::kInet4:
      if (bytes.size() != 4) return false;
      AppendInet4(p, out);
      return true;
    case FixedBinaryType::kInet6:
      if (bytes.size() != 16) return false;
      AppendInet6(p, out);
      return true;
    case FixedBinaryType::kNone:
      break;
  }
  return false;
}

FixedBinaryType FixedBinaryTypeFromName(std::string_view data_type) {
  if (absl::EqualsIgnoreCase(AV(data_type), "uuid")) return FixedBinaryType::kUuid;
  if (absl::EqualsIgnoreCase(AV(data_type), "inet4")) return FixedBinaryType::kInet4;
  if (absl::EqualsIgnoreCase(AV(data_type), "inet6")) return FixedBinaryType::kInet6;
  return FixedBinaryType::kNone;
}

}  // namespace binrelay::protocol
