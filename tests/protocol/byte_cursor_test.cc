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

// Guards the word-at-a-time scan: any byte value at any offset of a word
// (and of the scalar tail) must end the plain prefix exactly where the
// byte-by-byte definition does, or a quote or control byte escapes unescaped.
TEST(JsonWriterTest, PlainPrefixStopsAtEverySpecialByteAtEveryOffset) {
  auto reference = [](std::string_view s) {
    size_t i = 0;
    while (i < s.size()) {
      auto c = static_cast<uint8_t>(s[i]);
      if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
      ++i;
    }
    return i;
  };
  for (size_t len : {0, 1, 7, 8, 9, 16, 23, 24}) {
    for (size_t at = 0; at < len; ++at) {
      for (int b = 0; b < 256; ++b) {
        for (char fill : {'a', '!', '~', '[', ']'}) {
          std::string s(len, fill);
          s[at] = static_cast<char>(b);
          ASSERT_EQ(PlainJsonPrefix(s), reference(s)) << "len " << len << " at " << at << " byte " << b;
        }
      }
    }
  }
  // Two special bytes: the first one ends the prefix.
  std::string two(16, 'x');
  two[11] = '"';
  two[3] = '\x1f';
  EXPECT_EQ(PlainJsonPrefix(two), 3u);
  EXPECT_EQ(PlainJsonPrefix(std::string(40, ' ')), 40u);
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
