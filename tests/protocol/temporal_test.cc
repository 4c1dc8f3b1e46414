// Temporal values -> SELECT text (time_zone='+00:00'). Bytes from the zongji
// fixtures (mysql84 WRITE_ROWS at 1139; mariadb118
// capture_hires WRITE_ROWS at 5423, whose INSERT is in ANNOTATE_ROWS at 5214)
// and layouts hand-computed per mysys/my_time.cc.
#include "protocol/temporal.h"

#include <gtest/gtest.h>

#include <limits>

#include "protocol/column_type.h"
#include "tests/harness/fixtures.h"
#include "tests/protocol/value_test_util.h"

namespace binrelay::protocol {
namespace {

using testutil::Hex;

std::string Text(uint8_t type, uint16_t meta, std::string_view hex) {
  std::string bytes = Hex(hex);
  ByteCursor in(bytes);
  std::string out;
  absl::Status st = DecodeTemporalText(in, type, meta, &out);
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_EQ(in.remaining(), 0u) << "value size misread for type " << int(type);
  // The apply path frames images with TemporalBinarySize: it must agree.
  absl::StatusOr<size_t> size = TemporalBinarySize(type, meta);
  EXPECT_TRUE(size.ok()) << size.status();
  if (size.ok()) {
    EXPECT_EQ(*size, bytes.size()) << "TemporalBinarySize of type " << int(type);
  }
  ByteCursor skip(bytes);
  absl::Status skipped = SkipTemporal(skip, type, meta);
  EXPECT_TRUE(skipped.ok()) << skipped;
  EXPECT_EQ(skip.remaining(), 0u) << "SkipTemporal of type " << int(type);
  return out;
}

absl::StatusCode Code(uint8_t type, uint16_t meta, std::string_view hex) {
  std::string bytes = Hex(hex);
  ByteCursor in(bytes);
  std::string out;
  const absl::StatusCode code = DecodeTemporalText(in, type, meta, &out).code();
  // The apply path checks values with SkipTemporal: it must refuse alike.
  ByteCursor skip(bytes);
  EXPECT_EQ(SkipTemporal(skip, type, meta).ok(), code == absl::StatusCode::kOk)
      << "SkipTemporal disagrees for type " << int(type);
  return code;
}

TEST(TemporalTest, DateIncludingZeroDate) {
  EXPECT_EQ(Text(kTypeDate, 0, "22CE0F"), "2023-01-02");
  EXPECT_EQ(Text(kTypeDate, 0, "cfd00f"), "2024-06-15");
  EXPECT_EQ(Text(kTypeNewDate, 0, "22CE0F"), "2023-01-02");
  EXPECT_EQ(Text(kTypeDate, 0, "000000"), "0000-00-00");
}

TEST(TemporalTest, Datetime2WithFspDigits) {
  EXPECT_EQ(Text(kTypeDatetime2, 0, "99AF043105"), "2023-01-02 03:04:05");
  EXPECT_EQ(Text(kTypeDatetime2, 3, "99b39ec8b81ed2"), "2024-06-15 12:34:56.789");
  EXPECT_EQ(Text(kTypeDatetime2, 6, "99b39ec8b801e240"), "2024-06-15 12:34:56.123456");
  EXPECT_EQ(Text(kTypeDatetime2, 1, "99b39ec8b832"), "2024-06-15 12:34:56.5");
  EXPECT_EQ(Text(kTypeDatetime2, 0, "8000000000"), "0000-00-00 00:00:00");
  EXPECT_EQ(Text(kTypeDatetime2, 0, "fef3ff7efb"), "9999-12-31 23:59:59");
}

// Guards against the unsigned-fraction borrow rule and hours >= 100.
TEST(TemporalTest, Time2NegativeAndLargeHours) {
  EXPECT_EQ(Text(kTypeTime2, 0, "80C8B8"), "12:34:56");
  EXPECT_EQ(Text(kTypeTime2, 0, "7FF000"), "-01:00:00");
  EXPECT_EQ(Text(kTypeTime2, 2, "7FFFFFFF"), "-00:00:00.01");
  EXPECT_EQ(Text(kTypeTime2, 3, "7fef7cec78"), "-01:02:03.500");
  EXPECT_EQ(Text(kTypeTime2, 0, "b46efb"), "838:59:59");
  EXPECT_EQ(Text(kTypeTime2, 6, "4b9105000000"), "-838:59:59.000000");
  EXPECT_EQ(Text(kTypeTime2, 0, "800000"), "00:00:00");
}

TEST(TemporalTest, Timestamp2IsUtcAndZeroIsZeroDatetime) {
  EXPECT_EQ(Text(kTypeTimestamp2, 0, "666d8a70"), "2024-06-15 12:34:56");
  EXPECT_EQ(Text(kTypeTimestamp2, 3, "000000000000"), "0000-00-00 00:00:00.000");
  EXPECT_EQ(Text(kTypeTimestamp2, 6, "7fffffff0f423f"), "2038-01-19 03:14:07.999999");
  EXPECT_EQ(Text(kTypeTimestamp2, 2, "38bb0c0032"), "2000-02-29 00:00:00.50");
}

TEST(TemporalTest, ClassicFormatsHaveNoFraction) {
  EXPECT_EQ(Text(kTypeTimestamp, 0, "708a6d66"), "2024-06-15 12:34:56");
  EXPECT_EQ(Text(kTypeTimestamp, 0, "00000000"), "0000-00-00 00:00:00");
  EXPECT_EQ(Text(kTypeDatetime, 0, "00aaaca268120000"), "2024-06-15 12:34:56");
  EXPECT_EQ(Text(kTypeDatetime, 0, "0000000000000000"), "0000-00-00 00:00:00");
  EXPECT_EQ(Text(kTypeTime, 0, "40e201"), "12:34:56");
  EXPECT_EQ(Text(kTypeTime, 0, "c01dfe"), "-12:34:56");
}

TEST(TemporalTest, MariadbHiresValuesFromFixture) {
  EXPECT_EQ(Text(kTypeDatetime, 3, "00422e00b39095"), "2024-06-15 12:34:56.789");
  EXPECT_EQ(Text(kTypeTime, 3, "00b3ced494"), "-01:02:03.500");
  EXPECT_EQ(Text(kTypeTimestamp, 3, "666d8a700315"), "2024-06-15 12:34:56.789");
}

// Reads the capture_hires row straight from the recorded MariaDB 11.8 binlog:
// guards against mis-sized hires values (the next column would be garbage).
TEST(TemporalTest, MariadbHiresRowFromRecordedBinlog) {
  BINRELAY_REQUIRE_FIXTURE("zongji/binlog-mariadb118.events.binlog");
  std::string file =
      testing::ReadFileOrDie(testing::FixturePath("zongji/binlog-mariadb118.events.binlog"));
  ASSERT_GT(file.size(), 5423u + 19u + 17u + 18u);
  // WRITE_ROWS_V1 at 5423: 19-byte header, table_id(6) flags(2) width(1)
  // present(1), then the row: NULL bitmap (1 byte, 0xf8) and 18 value bytes.
  const size_t row = 5423 + 19 + 6 + 2 + 1 + 1;
  ASSERT_EQ(static_cast<uint8_t>(file[row]), 0xf8);
  ByteCursor in(std::string_view(file).substr(row + 1, 18));
  std::string out;
  ASSERT_TRUE(DecodeTemporalText(in, kTypeDatetime, 3, &out).ok());
  out += '|';
  ASSERT_TRUE(DecodeTemporalText(in, kTypeTime, 3, &out).ok());
  out += '|';
  ASSERT_TRUE(DecodeTemporalText(in, kTypeTimestamp, 3, &out).ok());
  EXPECT_EQ(out, "2024-06-15 12:34:56.789|-01:02:03.500|2024-06-15 12:34:56.789");
  EXPECT_TRUE(in.empty());
}

TEST(TemporalTest, CivilDatesAcrossLeapRules) {
  auto t = CivilFromEpochSeconds(951782400);  // 2000-02-29
  EXPECT_EQ(t.year, 2000u);
  EXPECT_EQ(t.month, 2u);
  EXPECT_EQ(t.day, 29u);
  t = CivilFromEpochSeconds(4102444799);  // 2099-12-31 23:59:59
  EXPECT_EQ(t.year, 2099u);
  EXPECT_EQ(t.day, 31u);
  EXPECT_EQ(t.second, 59u);
}

// Every width: a short value must be OutOfRange, never a read past the end.
TEST(TemporalTest, TruncatedValuesAreOutOfRange) {
  EXPECT_EQ(Code(kTypeDate, 0, "22CE"), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(Code(kTypeTime2, 4, "80C8B800"), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(Code(kTypeTime2, 6, "80C8B80000"),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(Code(kTypeTimestamp2, 6, "666d8a700000"), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(Code(kTypeDatetime, 0, "00aaaca2681200"), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(Code(kTypeDatetime, 3, "00422e00b390"), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(Code(kTypeTimestamp, 0, "708a6d"), absl::StatusCode::kOutOfRange);
}

TEST(TemporalTest, CorruptFractionsAreDataLoss) {
  // DATETIME2(6) fraction 0xffffff is negative as a signed 3-byte value.
  EXPECT_EQ(Code(kTypeDatetime2, 6, "99b39ec8b8ffffff"), absl::StatusCode::kDataLoss);
  // TIMESTAMP2(6) fraction 1000000 µs.
  EXPECT_EQ(Code(kTypeTimestamp2, 6, "666d8a700f4240"), absl::StatusCode::kDataLoss);
}

TEST(TemporalTest, BadFspOrTypeIsInvalidArgument) {
  EXPECT_EQ(Code(kTypeDatetime2, 7, "99AF043105"), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Code(kTypeLong, 0, "00000000"), absl::StatusCode::kInvalidArgument);
}

// Found by json_fuzz: an opaque DATETIME or TIME inside binary JSON whose
// packed value is INT64_MIN was negated as a signed number (undefined
// behaviour). Guards the unsigned negation: the magnitude is 2^63.
TEST(TemporalTest, PackedValueOfInt64MinUnpacksWithoutOverflow) {
  const int64_t min = std::numeric_limits<int64_t>::min();
  TemporalParts d = UnpackDatetimePacked(min);
  EXPECT_TRUE(d.negative);
  EXPECT_EQ(d.micro, 0u);
  EXPECT_EQ(d.year, static_cast<uint32_t>((uint64_t{1} << 63 >> 46) / 13));
  TemporalParts t = UnpackTimePacked(min);
  EXPECT_TRUE(t.negative);
  EXPECT_EQ(t.hour, 0u);  // bit 63 lies above the 10 hour bits
}

}  // namespace
}  // namespace binrelay::protocol
