#include "protocol/decimal.h"

#include <cstdint>

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

// Writes `v` as exactly `digits` decimal digits (zero padded) at `dst`.
void PutDigits(uint32_t v, int digits, char* dst) {
  for (int i = digits - 1; i >= 0; --i) {
    dst[i] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
}

}  // namespace

size_t DecimalBinarySize(int precision, int scale) {
  if (precision < 1 || precision > kMaxDecimalPrecision || scale < 0 ||
      scale > kMaxDecimalScale || scale > precision) {
    return 0;
  }
  int intg = precision - scale;
  return static_cast<size_t>(intg / kDigitsPerWord * kWordBytes + kDigitBytes[intg % kDigitsPerWord] +
                             scale / kDigitsPerWord * kWordBytes + kDigitBytes[scale % kDigitsPerWord]);
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
  // The sign bit is part of the first group's bytes; flip it back to a digit bit.
  uint8_t first = static_cast<uint8_t>(p[0] ^ 0x80);

  // All digits, left to right, integer then fraction; at most 65 + sign + point.
  char digits[kMaxDecimalPrecision + 2];
  int n = 0;
  size_t pos = 0;
  // Reads one big-endian group (sign mask undone) and appends its digits.
  auto read = [&](int width, int ndigits) -> bool {
    uint32_t v = 0;
    for (int i = 0; i < width; ++i) {
      uint8_t b = (pos + i == 0) ? first : p[pos + i];
      v = (v << 8) | static_cast<uint8_t>(b ^ mask);
    }
    pos += width;
    if (v >= kPow10[ndigits]) return false;
    PutDigits(v, ndigits, digits + n);
    n += ndigits;
    return true;
  };

  const int intg = precision - scale;
  bool ok = true;
  if (intg % kDigitsPerWord) ok &= read(kDigitBytes[intg % kDigitsPerWord], intg % kDigitsPerWord);
  for (int i = 0; i < intg / kDigitsPerWord; ++i) ok &= read(kWordBytes, kDigitsPerWord);
  const int int_digits = n;
  for (int i = 0; i < scale / kDigitsPerWord; ++i) ok &= read(kWordBytes, kDigitsPerWord);
  if (scale % kDigitsPerWord) ok &= read(kDigitBytes[scale % kDigitsPerWord], scale % kDigitsPerWord);
  if (!ok) {
    return absl::DataLossError(absl::StrCat("DECIMAL(", precision, ",", scale,
                                            ") digit group out of range (corrupt value)"));
  }

  int lead = 0;
  while (lead < int_digits && digits[lead] == '0') ++lead;
  bool all_zero = lead == int_digits;
  for (int i = int_digits; i < n && all_zero; ++i) all_zero = digits[i] == '0';

  // SELECT never shows a negative zero.
  if (negative && !all_zero) out->push_back('-');
  if (lead == int_digits) {
    out->push_back('0');
  } else {
    out->append(digits + lead, int_digits - lead);
  }
  if (scale > 0) {
    out->push_back('.');
    out->append(digits + int_digits, n - int_digits);
  }
  return absl::OkStatus();
}

}  // namespace binrelay::protocol
