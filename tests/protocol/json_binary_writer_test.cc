// JSON text to MySQL binary JSON (json_binary_writer.h). The apply path
// rebuilds PARTIAL_UPDATE_ROWS after images with it, so a wrong byte here is a
// wrong document on the target: every test checks that the binary decodes
// (json_binary.h) to exactly the text it was made from, and the layout tests
// check MySQL's own bytes.
#include "protocol/json_binary_writer.h"

#include <gtest/gtest.h>

#include <string>

#include "protocol/byte_cursor.h"
#include "protocol/column_type.h"
#include "protocol/json_binary.h"
#include "tests/harness/fixtures.h"
#include "tests/protocol/value_test_util.h"

namespace binrelay::protocol {
namespace {

using testutil::Col;
using testutil::Hex;

std::string Encode(std::string_view text) {
  std::string bin;
  absl::Status s = EncodeJsonTextAsBinary(text, &bin);
  EXPECT_TRUE(s.ok()) << s << " for " << text;
  return bin;
}

std::string RoundTrip(std::string_view text) {
  std::string back;
  absl::Status s = AppendJsonBinaryText(Encode(text), &back);
  EXPECT_TRUE(s.ok()) << s << " for " << text;
  return back;
}

// The layout of sql-common/json_binary.cc: header (count, size), key
// entries (offset, length), value entries (type, offset or inlined value),
// keys, values.
TEST(JsonBinaryWriterTest, SmallObjectHasMysqlsLayout) {
  // {"a": 1}: 1 member, 12 bytes, key at 11, INT16 1 inlined.
  EXPECT_EQ(Encode(R"({"a": 1})"), Hex("00 0100 0c00 0b00 0100 05 0100 61"));
  // ["x", true]: string out of line at offset 10, literal inlined.
  EXPECT_EQ(Encode(R"(["x", true])"), Hex("02 0200 0c00 0c 0a00 04 0100 0178"));
  // Integers in the smallest type: INT32 is not inlined in a small array.
  EXPECT_EQ(Encode("[70000]"), Hex("02 0100 0b00 07 0700 70110100"));
  EXPECT_EQ(Encode("-32768"), Hex("05 0080"));
  EXPECT_EQ(Encode("9223372036854775808"), Hex("0a 0000000000000080"));
  EXPECT_EQ(Encode("1.5"), Hex("0b 000000000000f83f"));
}

// A document MySQL 8.0.22 wrote (rust_mysql_common/json.binlog.000001,
// WRITE_ROWS at 1059): its text encodes back to the same bytes.
TEST(JsonBinaryWriterTest, RecordedMysqlDocumentEncodesToItsOwnBytes) {
  BINRELAY_REQUIRE_FIXTURE("rust_mysql_common/json.binlog.000001");
  std::string file =
      testing::ReadFileOrDie(testing::FixturePath("rust_mysql_common/json.binlog.000001"));
  ASSERT_GT(file.size(), 1059u + 36 + 4);
  ByteCursor in(std::string_view(file).substr(1059 + 36));
  const uint32_t len = in.U32();
  std::string_view recorded = in.Bytes(len);
  ASSERT_TRUE(in.ok());
  std::string text;
  ASSERT_TRUE(AppendJsonBinaryText(recorded, &text).ok());
  EXPECT_EQ(text, R"({"age": 24, "data": "xxxxxxxxxx", "name": "Joe"})");
  EXPECT_EQ(Encode(text), recorded);
}

TEST(JsonBinaryWriterTest, EveryKindOfValueRoundTrips) {
  for (std::string_view doc : {
           "null", "true", "false", "0", "-1", "32767", "32768", "-32769", "2147483647",
           "2147483648", "-2147483649", "9223372036854775807", "-9223372036854775808",
           "18446744073709551615", "1.0", "-0.0", "0.1", "1e300", "1.7976931348623157e308",
           "2.2250738585072014e-308", R"("")", R"("a\"b\\c\n\u0001")",
           "\"\xC3\xA9\xF0\x9F\x98\x80\"", "[]", "{}", "[[]]", R"({"": {}})",
           R"({"a": 1, "bb": [1, 2.5, "x", null, true, false], "ccc": {"d": -70000}})",
           R"([1, {"k": [true, {"x": 4294967296}]}, "s"])"}) {
    EXPECT_EQ(RoundTrip(doc), doc);
  }
}

// DECIMALs inside JSON print with their scale ("1.50"); a double would
// print "1.5", so such numbers are kept as opaque DECIMALs.
TEST(JsonBinaryWriterTest, DecimalTextKeepsItsDigitsAsOpaqueDecimal) {
  // A DECIMAL of scale 0 past 64 bits (JSON_SET(doc, '$.n', 1234...890))
  // prints without a point: as a double it would print rounded.
  for (std::string_view doc : {"123456789012345678901234567890", "-99999999999999999999",
                               "[18446744073709551616, 1]"}) {
    EXPECT_EQ(RoundTrip(doc), doc);
  }
  for (std::string_view doc : {"1.50", "-1.50", "0.000", "-0.50", "12345678901234567890.123",
                               "99999999999999999999999999999999999.000000000000000000000000000001",
                               R"({"price": 10.10, "qty": 3})"}) {
    EXPECT_EQ(RoundTrip(doc), doc);
  }
  const std::string bin = Encode("1.50");
  ASSERT_FALSE(bin.empty());
  EXPECT_EQ(static_cast<uint8_t>(bin[0]), 0x0F);
  EXPECT_EQ(static_cast<uint8_t>(bin[1]), kTypeNewDecimal);
}

// Past 64 KiB a container needs 4-byte offsets; a 16-bit offset would wrap
// and point into the wrong value.
TEST(JsonBinaryWriterTest, LargeContainersUseFourByteOffsets) {
  std::string doc = "[";
  for (int i = 0; i < 3000; ++i) {
    if (i) doc += ", ";
    doc += "\"" + std::string(30, static_cast<char>('a' + i % 26)) + "\"";
  }
  doc += ", 100000]";
  const std::string bin = Encode(doc);
  EXPECT_EQ(static_cast<uint8_t>(bin[0]), 0x03);  // large array
  EXPECT_EQ(RoundTrip(doc), doc);
  std::string object = "{\"k\": " + doc + ", \"z\": 1}";
  EXPECT_EQ(static_cast<uint8_t>(Encode(object)[0]), 0x01);  // large object
  EXPECT_EQ(RoundTrip(object), object);
}

TEST(JsonBinaryWriterTest, RefusesWhatMysqlCannotStore) {
  std::string deep;
  for (int i = 0; i < 101; ++i) deep += "[";
  for (int i = 0; i < 101; ++i) deep += "]";
  std::string bin;
  EXPECT_EQ(EncodeJsonTextAsBinary(deep, &bin).code(), absl::StatusCode::kInvalidArgument);
  std::string ok_depth(100, '[');
  ok_depth += std::string(100, ']');
  EXPECT_EQ(RoundTrip(ok_depth), ok_depth);
  const std::string long_key = "{\"" + std::string(65536, 'k') + "\": 1}";
  bin.clear();
  EXPECT_EQ(EncodeJsonTextAsBinary(long_key, &bin).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EncodeJsonTextAsBinary("{", &bin).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace binrelay::protocol
