#include "protocol/byte_cursor.h"

#include <gtest/gtest.h>

#include "protocol/json_writer.h"

namespace binrelay::protocol {
namespace {

TEST(ByteCursorTest, ReadsLittleAndBigEndian) {
  std::string bytes("\x01\x02\x03\x04\x05\x06\x07\x08", 8);
  ByteCursor c(bytes);
  EXPECT_EQ(c.U16(), 0x0201);
  EXPECT_EQ(c.FixedBE(3), 0x030405u);
  EXPECT_EQ(c.U24(), 0x080706u);
  EXPECT_TRUE(c.ok());
  EXPECT_TRUE(c.empty());
}

// Guards against reading past the end: the cursor must fail, not touch memory.
TEST(ByteCursorTest, ReadPastEndFailsSticky) {
  std::string bytes("\x01\x02", 2);
  ByteCursor c(bytes);
  EXPECT_EQ(c.U32(), 0u);
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.U8(), 0u);
  EXPECT_EQ(c.status("test field").code(), absl::StatusCode::kOutOfRange);
}

TEST(ByteCursorTest, LenencAllWidthsRoundTrip) {
  for (uint64_t v : {0ull, 250ull, 251ull, 65535ull, 65536ull, 16777215ull, 16777216ull,
                     0xFFFFFFFFFFFFFFFFull}) {
    std::string out;
    AppendLenenc(&out, v);
    ByteCursor c(out);
    EXPECT_EQ(c.Lenenc(), v);
    EXPECT_TRUE(c.ok());
    EXPECT_TRUE(c.empty());
  }
}

// A hostile length prefix must fail without allocating or reading.
TEST(ByteCursorTest, HugeLenencStringLengthFails) {
  std::string bytes("\xFE\xFF\xFF\xFF\xFF\xFF\xFF\xFF\x7F" "abc", 12);
  ByteCursor c(bytes);
  EXPECT_TRUE(c.LenencString().empty());
  EXPECT_FALSE(c.ok());
}

TEST(ByteCursorTest, LenencNullOnlyWhereAllowed) {
  std::string bytes("\xFB", 1);
  ByteCursor with_null(bytes);
  bool is_null = false;
  EXPECT_EQ(with_null.Lenenc(&is_null), 0u);
  EXPECT_TRUE(is_null);
  EXPECT_TRUE(with_null.ok());
  ByteCursor without_null(bytes);
  without_null.Lenenc();
  EXPECT_FALSE(without_null.ok());
}

TEST(JsonWriterTest, EscapesControlAndReplacesInvalidUtf8) {
  std::string out;
  AppendJsonString(std::string("a\"\\\n\x01\xF0\x9F\x98\x80\xFF", 10), &out);
  EXPECT_EQ(out, "\"a\\\"\\\\\\n\\u0001\xF0\x9F\x98\x80\xEF\xBF\xBD\"");
}

TEST(JsonWriterTest, Base64Padding) {
  std::string out;
  AppendBase64("", &out);
  EXPECT_EQ(out, "");
  AppendBase64("f", &out);
  EXPECT_EQ(out, "Zg==");
  out.clear();
  AppendBase64("fo", &out);
  EXPECT_EQ(out, "Zm8=");
  out.clear();
  AppendBase64("foobar", &out);
  EXPECT_EQ(out, "Zm9vYmFy");
}

}  // namespace
}  // namespace binrelay::protocol
