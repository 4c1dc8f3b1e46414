// Packed DECIMAL -> SELECT text. Examples from the decimal2bin comment in
// strings/decimal.cc, the
// zongji mysql84 fixture, and hand-computed layouts (noted per case).
#include "protocol/decimal.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace binrelay::protocol
