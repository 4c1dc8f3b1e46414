// MySQL binary JSON -> MySQL's JSON text. Golden documents come from
// msmp/jsonb.terms (the 4-byte length prefix dropped; the decoded Erlang term
// gives the value) and from the JSON column of zongji/binlog-mysql84's
// WRITE_ROWS at 1139 (INSERT text in the mariadb118 ANNOTATE_ROWS at 1124).
// Opaque and large-container cases are hand-encoded per sql-common/json_binary.cc.
#include "protocol/json_binary.h"

#include <gtest/gtest.h>

#include "tests/protocol/value_test_util.h"

namespace binrelay::protocol {
namespace {

using testutil::Hex;

std::string Text(std::string_view hex) {
  std::string out;
  absl::Status st = AppendJsonBinaryText(Hex(hex), &out);
  EXPECT_TRUE(st.ok()) << st;
  return out;
}

absl::StatusCode Code(std::string_view hex) {
  std::string out;
  return AppendJsonBinaryText(Hex(hex), &out).code();
}

std::string Dbl(double d) {
  std::string out;
  AppendMysqlJsonDouble(d, &out);
  return out;
}

TEST(JsonBinaryTest, FixtureDocumentKeepsStoredKeyOrderAndSeparators) {
  EXPECT_EQ(Text("0004004700200001002100010022000300250003000501000b28000230000a3f006164617272"
                 "626967000000000000f83f03000f000c0d000401000400000178ffffffffffffff7f"),
            R"({"a": 1, "d": 1.5, "arr": ["x", true, null], "big": 9223372036854775807})");
}

TEST(JsonBinaryTest, MsmpTermsScalars) {
  EXPECT_EQ(Text("0401"), "true");
  EXPECT_EQ(Text("0402"), "false");
  EXPECT_EQ(Text("0400"), "null");
  EXPECT_EQ(Text("05ffff"), "-1");
  EXPECT_EQ(Text("060100"), "1");
  EXPECT_EQ(Text("0500 80"), "-32768");
  EXPECT_EQ(Text("07ff7fffff"), "-32769");
  EXPECT_EQ(Text("0900000080 00000000"), "2147483648");
  EXPECT_EQ(Text("09ffffff7f ffffffff"), "-2147483649");
  EXPECT_EQ(Text("0affffffffffffffff"), "18446744073709551615");
  EXPECT_EQ(Text("0b1f85eb51b81e0940"), "3.14");
  EXPECT_EQ(Text("0c0d7363616c617220737472696e67"), R"("scalar string")");
}

TEST(JsonBinaryTest, MsmpTermsContainers) {
  EXPECT_EQ(Text("00 0100 0c00 0b00 0100 050200 61"), R"({"a": 2})");
  EXPECT_EQ(Text("0202000a00050100050200"), "[1, 2]");
  EXPECT_EQ(Text("0000000400"), "{}");
  EXPECT_EQ(Text("0200000400"), "[]");
  EXPECT_EQ(Text("02 0500 1700 0c1300 050a00 040000 040100 040200 03616263"),
            R"(["abc", 10, null, true, false])");
  EXPECT_EQ(Text("00 0200 1c00 1200 0200 1400 0200 0c1600 050a00 6b31 6b32 0576616c7565"),
            R"({"k1": "value", "k2": 10})");
  EXPECT_EQ(Text("02 0300 2500 0c0d00 021200 0c2100 0468657265 0200 0f00 0c0a00 0c0c00 0149 02616d"
                 " 03212121"),
            R"(["here", ["I", "am"], "!!!"])");
  EXPECT_EQ(Text("00 0400 3c00 2000 0100 2100 0100 2200 0200 2400 0200 0c2600 0c2800 0c2a00 022e00"
                 " 61 63 6162 6263 0162 0164 03616263 0200 0e00 0c0a00 0c0c00 0178 0179"),
            R"({"a": "b", "c": "d", "ab": "abc", "bc": ["x", "y"]})");
}

// Large containers use 4-byte counts/offsets and inline int32 values.
TEST(JsonBinaryTest, LargeArrayInlinesInt32) {
  EXPECT_EQ(Text("03 02000000 12000000 07 ffffffff 08 00000080"), "[-1, 2147483648]");
}

// MySQL prints string escapes itself; control characters as \u00xx.
TEST(JsonBinaryTest, StringEscapes) {
  EXPECT_EQ(Text("0c05 22 5c 0a 01 41"), R"("\"\\\n\u0001A")");
}

TEST(JsonBinaryTest, OpaqueDecimalTemporalAndOther) {
  // DECIMAL(4,2) 12.34: precision 4, scale 2, packed 8c 22.
  EXPECT_EQ(Text("0f f6 04 0402 8c22"), "12.34");
  // DATETIME 2015-07-29 12:18:29.5: ((ymd << 17 | hms) << 24) + 500000.
  // ymd = (2015*13+7) << 5 | 29 = 838493, hms = 12<<12 | 18<<6 | 29 = 50333.
  EXPECT_EQ(Text("0f 0c 08 20a1079dc4ba9619"), R"("2015-07-29 12:18:29.500000")");
  EXPECT_EQ(Text("0f 0a 08 0000000000ba9619"), R"("2015-07-29")");
  // TIME -12:18:29: -((12<<12 | 18<<6 | 29) << 24).
  EXPECT_EQ(Text("0f 0b 08 000000633bffffff"), R"("-12:18:29.000000")");
  // BLOB (type 252) bytes 01 02 03.
  EXPECT_EQ(Text("0f fc 03 010203"), R"("base64:type252:AQID")");
  // VAR_STRING is printed as a plain string.
  EXPECT_EQ(Text("0f fd 02 6869"), R"("hi")");
}

TEST(JsonBinaryTest, DoublesPrintLikeMysqlGcvt) {
  EXPECT_EQ(Dbl(1.5), "1.5");
  EXPECT_EQ(Dbl(1.0), "1.0");
  EXPECT_EQ(Dbl(-2.0), "-2.0");
  EXPECT_EQ(Dbl(0.0), "0.0");
  EXPECT_EQ(Dbl(100.0), "100.0");
  EXPECT_EQ(Dbl(0.1), "0.1");
  EXPECT_EQ(Dbl(1e15), "1e15");
  EXPECT_EQ(Dbl(123456789012345.0), "123456789012345.0");
  EXPECT_EQ(Dbl(1e-5), "0.00001");
  EXPECT_EQ(Dbl(1e-15), "0.000000000000001");
  EXPECT_EQ(Dbl(1e-16), "1e-16");
  EXPECT_EQ(Dbl(1.7976931348623157e308), "1.7976931348623157e308");
  EXPECT_EQ(Dbl(-1.25e-300), "-1.25e-300");
}

// Every offset/length/count: pointing outside the document must be DataLoss.
TEST(JsonBinaryTest, HostileOffsetsAndLengthsAreDataLoss) {
  EXPECT_EQ(Code("0c05 4142"), absl::StatusCode::kDataLoss);          // string length
  EXPECT_EQ(Code("0c ffffffffff 41"), absl::StatusCode::kDataLoss);   // 5-byte varlen > 32 bits
  EXPECT_EQ(Code("0c 8080808080 41"), absl::StatusCode::kDataLoss);   // unterminated varlen
  EXPECT_EQ(Code("02 0100 ff00 050100"), absl::StatusCode::kDataLoss);  // size > available
  EXPECT_EQ(Code("02 ff00 0700 050100"), absl::StatusCode::kDataLoss);  // count too large
  EXPECT_EQ(Code("02 0100 0700 0c6000"), absl::StatusCode::kDataLoss);  // value offset
  EXPECT_EQ(Code("00 0100 0b00 4000 0100 050100"), absl::StatusCode::kDataLoss);  // key offset
  EXPECT_EQ(Code("09 01020304"), absl::StatusCode::kDataLoss);       // truncated int64
  EXPECT_EQ(Code("0403"), absl::StatusCode::kDataLoss);              // unknown literal
  EXPECT_EQ(Code("0d00"), absl::StatusCode::kDataLoss);              // unknown type
  EXPECT_EQ(Code("0f 0c 04 00000000"), absl::StatusCode::kDataLoss);  // short temporal
  EXPECT_EQ(Code("02 01"), absl::StatusCode::kDataLoss);             // truncated header
  EXPECT_EQ(Code("0f f6 03 0402 8c"), absl::StatusCode::kDataLoss);  // short opaque DECIMAL
}

// Guards against unbounded recursion on hostile nesting.
TEST(JsonBinaryTest, NestingBeyondMysqlLimitIsDataLoss) {
  // Each level: small array of one element at offset 7 holding the next level.
  auto nested = [](int depth) {
    std::string inner = Hex("0000 0400");  // innermost: empty small array
    for (int i = 1; i < depth; ++i) {
      // count 1, size, one entry: small array (0x02) at offset 7, then it.
      const size_t size = 7 + inner.size();
      std::string level = Hex("0100");
      level += static_cast<char>(size & 0xFF);
      level += static_cast<char>(size >> 8);
      level += Hex("02 0700");
      inner = level + inner;
    }
    return std::string(1, '\x02') + inner;
  };
  std::string out;
  EXPECT_TRUE(AppendJsonBinaryText(nested(50), &out).ok());
  out.clear();
  EXPECT_EQ(AppendJsonBinaryText(nested(150), &out).code(), absl::StatusCode::kDataLoss);
}

// A container whose two entries both point at the container itself: before
// offsets were required to follow the entry tables, this expanded 2^100
// times (each level within the depth limit) and never finished.
TEST(JsonBinaryTest, ContainerThatIsItsOwnChildIsDataLoss) {
  EXPECT_EQ(Code("02 0200 0a00 020000 020000"), absl::StatusCode::kDataLoss);
  // An object key pointing into its own entry table.
  EXPECT_EQ(Code("00 0100 0b00 0000 0100 040100"), absl::StatusCode::kDataLoss);
}

// Forward offsets can still share one child between entries: 40 levels of
// [x, x] where x is the next level is a 400-byte document whose text would
// be 2^40 elements. Guards against exhausting memory on such a document: the
// text must stop at its bound with a clear error.
TEST(JsonBinaryTest, SharedChildrenStopAtTheTextBound) {
  std::string inner = Hex("0000 0400");  // innermost: empty small array
  for (int i = 0; i < 40; ++i) {
    const size_t size = 10 + inner.size();
    std::string level = Hex("0200");
    level += static_cast<char>(size & 0xFF);
    level += static_cast<char>(size >> 8);
    level += Hex("02 0a00 02 0a00");  // both entries: the array at offset 10
    inner = level + inner;
  }
  const std::string doc = std::string(1, '\x02') + inner;
  std::string out;
  absl::Status s = AppendJsonBinaryText(doc, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_LE(out.size(), kMaxJsonTextExpansion * doc.size() + 4096 + 64);
}

// The bound leaves room for the largest honest expansion: a string of
// control characters, each printed as \u00XX.
TEST(JsonBinaryTest, StringOfControlCharactersFitsTheTextBound) {
  // [s]: one small array (size 7 + 2 + 1000) holding a 1000-byte string.
  std::string doc = Hex("02 0100 f103 0c 0700 e807");
  doc.append(1000, '\x01');
  std::string out;
  absl::Status s = AppendJsonBinaryText(doc, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out.size(), 2 + 2 + 6 * 1000u);
}

}  // namespace
}  // namespace binrelay::protocol
