// Collation -> charset mapping and conversion of column bytes to UTF-8/JSON.
// Byte sequences are hand-encoded from the Unicode code points named.
#include "protocol/charset.h"

#include <gtest/gtest.h>

#include "tests/protocol/value_test_util.h"

namespace binrelay::protocol {
namespace {

using testutil::Hex;

std::string Utf8(std::string_view hex, Charset cs) {
  std::string out;
  AppendUtf8(Hex(hex), cs, &out);
  return out;
}

TEST(CharsetTest, CollationIdsMapToCharsets) {
  EXPECT_EQ(CharsetForCollation(8), Charset::kLatin1);
  EXPECT_EQ(CharsetForCollation(47), Charset::kLatin1);
  EXPECT_EQ(CharsetForCollation(11), Charset::kAscii);
  EXPECT_EQ(CharsetForCollation(35), Charset::kUcs2);
  EXPECT_EQ(CharsetForCollation(139), Charset::kUcs2);
  EXPECT_EQ(CharsetForCollation(54), Charset::kUtf16);
  EXPECT_EQ(CharsetForCollation(101), Charset::kUtf16);
  EXPECT_EQ(CharsetForCollation(56), Charset::kUtf16le);
  EXPECT_EQ(CharsetForCollation(60), Charset::kUtf32);
  EXPECT_EQ(CharsetForCollation(160), Charset::kUtf32);
  EXPECT_EQ(CharsetForCollation(63), Charset::kBinary);
  EXPECT_EQ(CharsetForCollation(33), Charset::kUtf8);
  EXPECT_EQ(CharsetForCollation(45), Charset::kUtf8);
  EXPECT_EQ(CharsetForCollation(255), Charset::kUtf8);
  EXPECT_EQ(CharsetForCollation(0), Charset::kUtf8);  // unknown
  // MariaDB: NO PAD twins (+1024) and UCA-14.0 ids seen in the mariadb118 fixture.
  EXPECT_EQ(CharsetForCollation(1032), Charset::kLatin1);
  EXPECT_EQ(CharsetForCollation(1059), Charset::kUcs2);
  EXPECT_EQ(CharsetForCollation(2304), Charset::kUtf8);
  EXPECT_EQ(CharsetForCollation(2560), Charset::kUcs2);
  EXPECT_EQ(CharsetForCollation(2816), Charset::kUtf16);
  EXPECT_EQ(CharsetForCollation(3072), Charset::kUtf32);
}

// MySQL's latin1 is cp1252, plus C1 controls in cp1252's five holes.
TEST(CharsetTest, Latin1IsMysqlCp1252) {
  EXPECT_EQ(Utf8("80 9f e9 ff", Charset::kLatin1), "\xE2\x82\xAC\xC5\xB8\xC3\xA9\xC3\xBF");
  EXPECT_EQ(Utf8("81 8d 8f 90 9d", Charset::kLatin1), "\xC2\x81\xC2\x8D\xC2\x8F\xC2\x90\xC2\x9D");
  EXPECT_EQ(Utf8("a0", Charset::kLatin1), "\xC2\xA0");
}

TEST(CharsetTest, WideCharsetsIncludingSurrogatePairs) {
  const std::string grin = "\xF0\x9F\x98\x80";  // U+1F600
  EXPECT_EQ(Utf8("00 68 00 e9", Charset::kUcs2), "h\xC3\xA9");
  EXPECT_EQ(Utf8("d83d de00 0041", Charset::kUtf16), grin + "A");
  EXPECT_EQ(Utf8("3dd8 00de 4100", Charset::kUtf16le), grin + "A");
  EXPECT_EQ(Utf8("0001f600 00000041", Charset::kUtf32), grin + "A");
}

// Invalid input must become U+FFFD so the output stays valid UTF-8.
TEST(CharsetTest, UndecodableInputBecomesReplacementChar) {
  const std::string rep = "\xEF\xBF\xBD";
  EXPECT_EQ(Utf8("61 80", Charset::kAscii), "a" + rep);
  EXPECT_EQ(Utf8("d83d 0041", Charset::kUtf16), rep + "A");  // lone high surrogate
  EXPECT_EQ(Utf8("de00", Charset::kUtf16), rep);             // lone low surrogate
  EXPECT_EQ(Utf8("0041 00", Charset::kUcs2), "A" + rep);     // odd trailing byte
  EXPECT_EQ(Utf8("00110000", Charset::kUtf32), rep);         // > U+10FFFF
  EXPECT_EQ(Utf8("61 c3 28", Charset::kUtf8), "a" + rep + "(");
  EXPECT_EQ(Utf8("ed a0 80", Charset::kUtf8), rep + rep + rep);  // encoded surrogate
  EXPECT_EQ(Utf8("c3 a9", Charset::kUtf8), "\xC3\xA9");
}

TEST(CharsetTest, JsonEscapingOnTheConversionPath) {
  std::string out;
  AppendTextJson(Hex("22 5c 0a 01 e9"), Charset::kLatin1, &out);
  EXPECT_EQ(out, "\"\\\"\\\\\\n\\u0001\xC3\xA9\"");
  out.clear();
  AppendTextJson(Hex("0022 0009"), Charset::kUcs2, &out);
  EXPECT_EQ(out, "\"\\\"\\t\"");
  out.clear();
  AppendTextJson(Hex("61 ff"), Charset::kUtf8, &out);
  EXPECT_EQ(out, "\"a\xEF\xBF\xBD\"");
}

}  // namespace
}  // namespace binrelay::protocol

namespace binrelay::protocol {
namespace {

// information_schema's charset names map to an id of that charset: MariaDB
// 10.10+ lists its uca1400 collations without a charset in COLLATIONS, so
// the schema cache falls back to these (a 0 there read text as binary).
// MariaDB's extra UCA collations (croatian, myanmar, thai_520_w2) of the
// wide charsets: read as UTF-8 they printed NULs and U+FFFD (found live).
TEST(CharsetTest, MariaDbExtraUcaCollationsOfWideCharsets) {
  EXPECT_EQ(CharsetForCollation(576), Charset::kUtf8);   // utf8mb3_croatian_ci
  EXPECT_EQ(CharsetForCollation(610), Charset::kUtf8);   // utf8mb4_thai_520_w2
  EXPECT_EQ(CharsetForCollation(640), Charset::kUcs2);   // ucs2_croatian_ci
  EXPECT_EQ(CharsetForCollation(642), Charset::kUcs2);   // ucs2_thai_520_w2
  EXPECT_EQ(CharsetForCollation(673), Charset::kUtf16);  // utf16_myanmar_ci
  EXPECT_EQ(CharsetForCollation(738), Charset::kUtf32);  // utf32_thai_520_w2
  EXPECT_EQ(CharsetForCollation(1024 + 641), Charset::kUcs2);  // its NO PAD twin
}

TEST(CharsetTest, DefaultCollationForCharsetNames) {
  EXPECT_EQ(CharsetForCollation(DefaultCollationForCharset("utf8mb4")), Charset::kUtf8);
  EXPECT_EQ(CharsetForCollation(DefaultCollationForCharset("utf8mb3")), Charset::kUtf8);
  EXPECT_EQ(CharsetForCollation(DefaultCollationForCharset("latin1")), Charset::kLatin1);
  EXPECT_EQ(CharsetForCollation(DefaultCollationForCharset("ucs2")), Charset::kUcs2);
  EXPECT_EQ(CharsetForCollation(DefaultCollationForCharset("utf16")), Charset::kUtf16);
  EXPECT_EQ(CharsetForCollation(DefaultCollationForCharset("utf16le")), Charset::kUtf16le);
  EXPECT_EQ(CharsetForCollation(DefaultCollationForCharset("utf32")), Charset::kUtf32);
  EXPECT_EQ(CharsetForCollation(DefaultCollationForCharset("binary")), Charset::kBinary);
  EXPECT_EQ(DefaultCollationForCharset("no-such-charset"), 0u);
}

}  // namespace
}  // namespace binrelay::protocol

namespace binrelay::protocol {
namespace {

std::string Collated(std::string_view bytes, uint32_t collation) {
  std::string out;
  AppendCollationUtf8(bytes, collation, &out);
  return out;
}

// The legacy charsets both servers keep: single-byte ones by the servers'
// own tables (a byte they do not define is '?', as SELECT shows it),
// multi-byte ones through iconv (an invalid sequence is U+FFFD). Before,
// every one of them was read as UTF-8 and printed U+FFFD for each byte.
TEST(CharsetTest, LegacyCharsetsDecodeAsTheServerDoes) {
  EXPECT_EQ(CharsetForCollation(51), Charset::kLegacy);  // cp1251_general_ci
  EXPECT_EQ(Collated("\xCF\xF0\xE8\xE2\xE5\xF2", 51), "Привет");
  EXPECT_EQ(Collated("\xCF\xF0\xE8\xE2\xE5\xF2", 1024 + 51), "Привет");  // MariaDB NO PAD
  EXPECT_EQ(Collated("\xF0\xD2\xC9\xD7\xC5\xD4", 7), "Привет");           // koi8r
  EXPECT_EQ(Collated("\x80\x81", 37), "Čü");                               // keybcs2
  EXPECT_EQ(Collated("[\\]{|}", 10), "ÄÖÅäöå");                            // swe7
  EXPECT_EQ(Collated("\x81", 26), "?");  // cp1250: 0x81 undefined
  EXPECT_EQ(Collated("\x93\xFA\x96\x7B", 13), "日本");                     // sjis
  EXPECT_EQ(Collated("\xC6\xFC\xCB\xDC", 12), "日本");                     // ujis
  EXPECT_EQ(Collated("\xA4\xA4\xA4\xE5", 1), "中文");                      // big5
  EXPECT_EQ(Collated("\xD6\xD0\xCE\xC4", 28), "中文");                     // gbk
  EXPECT_EQ(Collated("\xC7\xD1\xB1\xB9", 19), "한국");                     // euckr
  EXPECT_EQ(Collated("a\x93", 13), "a\xEF\xBF\xBD");  // a lead byte cut short
  EXPECT_EQ(Collated("\x80x", 13), "\xEF\xBF\xBDx");  // not a lead byte
}

TEST(CharsetTest, LegacyTextIsJsonEscapedAfterConversion) {
  std::string out;
  AppendCollationTextJson("\"\xCF\\\n", 51, &out);
  EXPECT_EQ(out, "\"\\\"П\\\\\\n\"");
}

}  // namespace
}  // namespace binrelay::protocol
