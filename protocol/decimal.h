// Packed binary DECIMAL (MySQL `decimal2bin` format, NEWDECIMAL type 246) to
// the exact text SELECT prints: "-0.50", "0.000000", "12345.6700".
//
// Layout (strings/decimal.cc decimal2bin / bin2decimal): integer digits
// I = P - S are stored as a leading
// partial group of I % 9 digits then I / 9 big-endian 4-byte words; the
// fraction as S / 9 words then a trailing partial group of S % 9 digits. The
// first byte's top bit is the sign (1 = non-negative); negative values have
// every byte inverted.
//
// Thread safety: stateless functions.
// Lifetime: nothing returned points into the input.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace binrelay::protocol {

inline constexpr int kMaxDecimalPrecision = 65;
inline constexpr int kMaxDecimalScale = 30;

// Bytes used by DECIMAL(precision, scale); 0 when the pair is invalid
// (precision 1..65, scale 0..30, scale <= precision).
size_t DecimalBinarySize(int precision, int scale);

// Appends the text of the packed decimal `packed` (exactly
// DecimalBinarySize(precision, scale) bytes) to `out`. Prints exactly `scale`
// fraction digits, integer part without leading zeros ("0" when it is zero).
// InvalidArgument for a bad precision/scale or size; DataLoss when a digit
// group holds a value that has more digits than the group allows.
// The checks AppendDecimalText makes (size, every digit group in range),
// without formatting: for walking row images whose values are rendered later.
absl::Status CheckDecimalBinary(std::string_view packed, int precision, int scale);

absl::Status AppendDecimalText(std::string_view packed, int precision, int scale,
                               std::string* out);

}  // namespace binrelay::protocol
