// Packed DECIMAL -> SELECT text. Examples from the decimal2bin comment in
// strings/decimal.cc, the
// zongji mysql84 fixture, and hand-computed layouts (noted per case).
#include "protocol/decimal.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "tests/harness/status_matchers.h"
#include "tests/protocol/value_test_util.h"

namespace binrelay::protocol {
namespace {

using testutil::Hex;

std::string Text(std::string_view hex, int p, int s) {
  std::string out;
  absl::Status st = AppendDecimalText(Hex(hex), p, s, &out);
  EXPECT_TRUE(st.ok()) << st;
  BR_EXPECT_OK(CheckDecimalBinary(Hex(hex), p, s));  // accepts what formats
  return out;
}

TEST(DecimalTest, SizesMatchDig2Bytes) {
  EXPECT_EQ(DecimalBinarySize(14, 4), 7u);
  EXPECT_EQ(DecimalBinarySize(30, 10), 14u);
  EXPECT_EQ(DecimalBinarySize(65, 30), 30u);
  EXPECT_EQ(DecimalBinarySize(10, 0), 5u);
  EXPECT_EQ(DecimalBinarySize(0, 0), 0u);
  EXPECT_EQ(DecimalBinarySize(66, 0), 0u);
  EXPECT_EQ(DecimalBinarySize(10, 11), 0u);
  EXPECT_EQ(DecimalBinarySize(40, 31), 0u);
}

TEST(DecimalTest, ProtocolDocExamples) {
  EXPECT_EQ(Text("810DFB38D204D2", 14, 4), "1234567890.1234");
  EXPECT_EQ(Text("7EF204C72DFB2D", 14, 4), "-1234567890.1234");
}

TEST(DecimalTest, FixtureNegativeWithFullWords) {
  EXPECT_EQ(Text("7fff439eb1ca484078ff439eb1f6", 30, 10), "-12345678901234567.0123456789");
}

// Guards against dropping the integer "0", the sign, or fraction zeros.
TEST(DecimalTest, ZeroIntegerPartAndTrailingZerosAsSelectPrints) {
  EXPECT_EQ(Text("7fcd", 4, 2), "-0.50");        // -(0 . 50): 80 32 inverted
  EXPECT_EQ(Text("8032", 4, 2), "0.50");
  EXPECT_EQ(Text("80" + std::string(58, '0'), 65, 30), "0.000000000000000000000000000000");
  EXPECT_EQ(Text("875bcd1500", 10, 10), "0.1234567890");  // only fraction digits
  EXPECT_EQ(Text("803039", 5, 0), "12345");               // no scale -> no point
  EXPECT_EQ(Text("800000", 5, 0), "0");
  EXPECT_EQ(Text("80000001", 7, 2), "0.01");  // leading zero groups stripped
}

// A group whose value needs more digits than the group holds is corrupt.
TEST(DecimalTest, OutOfRangeDigitGroupIsDataLoss) {
  std::string out;
  EXPECT_EQ(AppendDecimalText(Hex("ff"), 2, 0, &out).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(AppendDecimalText(Hex("bb9aca00"), 9, 0, &out).code(),  // 1e9 in a 9-digit word
            absl::StatusCode::kDataLoss);
  // The apply path's check without formatting refuses the same values.
  EXPECT_EQ(CheckDecimalBinary(Hex("ff"), 2, 0).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(CheckDecimalBinary(Hex("bb9aca00"), 9, 0).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(CheckDecimalBinary(Hex("810DFB38D204"), 14, 4).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DecimalTest, WrongSizeOrMetadataIsInvalidArgument) {
  std::string out;
  EXPECT_EQ(AppendDecimalText(Hex("810DFB38D204"), 14, 4, &out).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AppendDecimalText(Hex("80"), 0, 0, &out).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(out.empty());
}

// decimal2bin (strings/decimal.cc) for digit strings of exactly
// precision - scale and scale digits: the test's own encoder.
std::string Pack(bool negative, const std::string& intg, const std::string& frac) {
  static constexpr int kBytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
  std::string out;
  auto put = [&](std::string_view digits) {
    uint32_t v = 0;
    for (char c : digits) v = v * 10 + static_cast<uint32_t>(c - '0');
    for (int i = kBytes[digits.size()] - 1; i >= 0; --i) out.push_back(static_cast<char>(v >> (8 * i)));
  };
  const size_t lead = intg.size() % 9;
  if (lead) put(std::string_view(intg).substr(0, lead));
  for (size_t at = lead; at < intg.size(); at += 9) put(std::string_view(intg).substr(at, 9));
  size_t at = 0;
  for (; at + 9 <= frac.size(); at += 9) put(std::string_view(frac).substr(at, 9));
  if (at < frac.size()) put(std::string_view(frac).substr(at));
  out[0] = static_cast<char>(out[0] ^ 0x80);
  if (negative) {
    for (char& c : out) c = static_cast<char>(~c);
  }
  return out;
}

// Guards the group-wise formatter against every layout the checks above do
// not spell out: zero groups before and between nonzero ones, partial
// groups on either side, every precision and scale, mostly-zero digits.
TEST(DecimalTest, RandomValuesOfEveryLayoutPrintAsSelectDoes) {
  std::mt19937 rng(20261202);
  int checked = 0;
  for (int precision = 1; precision <= kMaxDecimalPrecision; ++precision) {
    for (int scale = 0; scale <= std::min(precision, kMaxDecimalScale); ++scale) {
      for (int round = 0; round < 20; ++round) {
        const int zero_odds = static_cast<int>(rng() % 4);  // 0: no zeros forced .. 3: mostly zero
        auto digit = [&] {
          return rng() % 4 < static_cast<unsigned>(zero_odds) ? '0' : static_cast<char>('0' + rng() % 10);
        };
        std::string intg, frac;
        for (int i = 0; i < precision - scale; ++i) intg.push_back(digit());
        for (int i = 0; i < scale; ++i) frac.push_back(digit());
        const bool negative = rng() % 2 == 0;
        std::string want_int = intg.substr(std::min(intg.find_first_not_of('0'), intg.size()));
        if (want_int.empty()) want_int = "0";
        const bool zero = (intg + frac).find_first_not_of('0') == std::string::npos;
        const std::string want =
            (negative && !zero ? "-" : "") + want_int + (scale > 0 ? "." + frac : "");
        const std::string packed = Pack(negative, intg, frac);
        std::string out;
        BR_ASSERT_OK(AppendDecimalText(packed, precision, scale, &out));
        ASSERT_EQ(out, want) << "DECIMAL(" << precision << "," << scale << ")";
        BR_ASSERT_OK(CheckDecimalBinary(packed, precision, scale));
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 20 * 1580);  // 1580 (precision, scale) pairs, 20 values each
}

}  // namespace
}  // namespace binrelay::protocol
