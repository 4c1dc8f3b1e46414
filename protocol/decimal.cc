#include "protocol/decimal.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

constexpr int kDigitsPerWord = 9;
constexpr int kWordBytes = 4;
// Bytes for a partial group of n (0..9) digits (MySQL decimal.cc dig2bytes).
constexpr int kDigitBytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
constexpr uint32_t kPow10[10] = {1,      10,      100,      1000,      10000,
                                 100000, 1000000, 10000000, 100000000, 1000000000};

// "00".."99": two digits per step when writing a group.
constexpr char kTwoDigits[] =
    "0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849"
    "5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

// Writes `v` (< 10^digits) as exactly `digits` digits, zero padded, ending
// just before `end`.
void PutDigits(uint32_t v, int digits, char* end) {
  while (digits >= 2) {
    end -= 2;
    std::memcpy(end, kTwoDigits + 2 * (v % 100), 2);
    v /= 100;
    digits -= 2;
  }
  if (digits == 1) *--end = static_cast<char>('0' + v);
}

// Digits of `v` without leading zeros ("0" for 0).
int DigitCount(uint32_t v) {
  int n = 1;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

}  // namespace

namespace {

constexpr size_t ComputeBinarySize(int precision, int scale) {
  const int intg = precision - scale;
  return static_cast<size_t>(intg / kDigitsPerWord * kWordBytes + kDigitBytes[intg % kDigitsPerWord] +
                             scale / kDigitsPerWord * kWordBytes + kDigitBytes[scale % kDigitsPerWord]);
}

// Every valid (precision, scale), 0 for the rest: looked up for every
// DECIMAL value read or written.
struct SizeTable {
  uint8_t bytes[kMaxDecimalPrecision + 1][kMaxDecimalScale + 1] = {};
  constexpr SizeTable() {
    for (int p = 1; p <= kMaxDecimalPrecision; ++p) {
      for (int s = 0; s <= kMaxDecimalScale && s <= p; ++s) {
        bytes[p][s] = static_cast<uint8_t>(ComputeBinarySize(p, s));
      }
    }
  }
};
constexpr SizeTable kSizes;

}  // namespace

size_t DecimalBinarySize(int precision, int scale) {
  if (precision < 0 || precision > kMaxDecimalPrecision || scale < 0 || scale > kMaxDecimalScale) {
    return 0;
  }
  return kSizes.bytes[precision][scale];
}

namespace {

// The metadata and the value's size, checked before any group is read.
absl::Status CheckLayout(std::string_view packed, int precision, int scale) {
  const size_t size = DecimalBinarySize(precision, scale);
  if (size == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid DECIMAL(", precision, ",", scale, ") metadata"));
  }
  if (packed.size() != size) {
    return absl::InvalidArgumentError(absl::StrCat("DECIMAL(", precision, ",", scale, ") needs ",
                                                   size, " bytes, got ", packed.size()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckDecimalBinary(std::string_view packed, int precision, int scale) {
  BR_RETURN_IF_ERROR(CheckLayout(packed, precision, scale));
  const auto* p = reinterpret_cast<const uint8_t*>(packed.data());
  const uint8_t mask = (p[0] & 0x80) == 0 ? 0xFF : 0x00;
  size_t pos = 0;
  bool ok = true;
  // The same groups AppendDecimalText reads, in the same order.
  auto group = [&](int width, int ndigits) {
    uint32_t v = 0;
    for (int i = 0; i < width; ++i) {
      const uint8_t b = pos + i == 0 ? static_cast<uint8_t>(p[0] ^ 0x80) : p[pos + i];
      v = (v << 8) | static_cast<uint8_t>(b ^ mask);
    }
    pos += width;
    ok = ok && v < kPow10[ndigits];
  };
  const int intg = precision - scale;
  if (intg % kDigitsPerWord) group(kDigitBytes[intg % kDigitsPerWord], intg % kDigitsPerWord);
  for (int i = 0; i < intg / kDigitsPerWord; ++i) group(kWordBytes, kDigitsPerWord);
  for (int i = 0; i < scale / kDigitsPerWord; ++i) group(kWordBytes, kDigitsPerWord);
  if (scale % kDigitsPerWord) group(kDigitBytes[scale % kDigitsPerWord], scale % kDigitsPerWord);
  if (!ok) {
    return absl::DataLossError(absl::StrCat("DECIMAL(", precision, ",", scale,
                                            ") digit group out of range (corrupt value)"));
  }
  return absl::OkStatus();
}

absl::Status AppendDecimalText(std::string_view packed, int precision, int scale,
                               std::string* out) {
  BR_RETURN_IF_ERROR(CheckLayout(packed, precision, scale));
  const auto* p = reinterpret_cast<const uint8_t*>(packed.data());
  const bool negative = (p[0] & 0x80) == 0;
  const uint8_t mask = negative ? 0xFF : 0x00;

  // Every digit group, left to right, and how many digits each holds: at
  // most 65 digits in groups of up to 9, plus one partial group per side.
  constexpr int kMaxGroups = kMaxDecimalPrecision / kDigitsPerWord + 2;
  uint32_t value[kMaxGroups];
  int width[kMaxGroups];
  int groups = 0;
  size_t pos = 0;
  bool in_range = true;
  uint32_t any = 0;  // nonzero when some digit is
  auto read = [&](int bytes, int ndigits) {
    uint32_t v = 0;
    for (int i = 0; i < bytes; ++i) {
      // The sign bit is part of the first group's bytes; flip it back.
      const uint8_t b = pos + i == 0 ? static_cast<uint8_t>(p[0] ^ 0x80) : p[pos + i];
      v = (v << 8) | static_cast<uint8_t>(b ^ mask);
    }
    pos += bytes;
    in_range = in_range && v < kPow10[ndigits];
    any |= v;
    value[groups] = v;
    width[groups++] = ndigits;
  };
  const int intg = precision - scale;
  if (intg % kDigitsPerWord) read(kDigitBytes[intg % kDigitsPerWord], intg % kDigitsPerWord);
  for (int i = 0; i < intg / kDigitsPerWord; ++i) read(kWordBytes, kDigitsPerWord);
  const int int_groups = groups;
  for (int i = 0; i < scale / kDigitsPerWord; ++i) read(kWordBytes, kDigitsPerWord);
  if (scale % kDigitsPerWord) read(kDigitBytes[scale % kDigitsPerWord], scale % kDigitsPerWord);
  if (!in_range) {
    return absl::DataLossError(absl::StrCat("DECIMAL(", precision, ",", scale,
                                            ") digit group out of range (corrupt value)"));
  }

  // Sign, digits, point: at most 1 + 65 + 1 bytes.
  char text[kMaxDecimalPrecision + 2];
  char* at = text;
  // SELECT never shows a negative zero.
  if (negative && any != 0) *at++ = '-';
  int g = 0;
  while (g < int_groups && value[g] == 0) ++g;  // leading zero groups
  if (g == int_groups) {
    *at++ = '0';
  } else {
    const int lead = DigitCount(value[g]);  // the first group, unpadded
    PutDigits(value[g], lead, at + lead);
    at += lead;
    for (++g; g < int_groups; ++g) {
      PutDigits(value[g], width[g], at + width[g]);
      at += width[g];
    }
  }
  if (scale > 0) {
    *at++ = '.';
    for (g = int_groups; g < groups; ++g) {
      PutDigits(value[g], width[g], at + width[g]);
      at += width[g];
    }
  }
  out->append(text, static_cast<size_t>(at - text));
  return absl::OkStatus();
}

}  // namespace binrelay::protocol
