#include "protocol/fixed_binary_text.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/escaping.h"
#include "protocol/byte_cursor.h"
#include "protocol/column_type.h"
#include "protocol/value.h"

namespace binrelay::protocol {
namespace {

std::string Text(FixedBinaryType type, const std::string& hex) {
  std::string out;
  if (!AppendFixedBinaryText(type, absl::HexStringToBytes(hex), &out)) return "<refused>";
  return out;
}

// UUIDs print as SELECT prints them: 8-4-4-4-12 lowercase, bytes in order.
TEST(FixedBinaryTextTest, UuidIsHyphenatedLowercaseHex) {
  EXPECT_EQ(Text(FixedBinaryType::kUuid, "123E4567E89B12D3A456426614174000"),
            "123e4567-e89b-12d3-a456-426614174000");
  EXPECT_EQ(Text(FixedBinaryType::kUuid, "00000000000000000000000000000000"),
            "00000000-0000-0000-0000-000000000000");
}

TEST(FixedBinaryTextTest, Inet4IsDottedDecimal) {
  EXPECT_EQ(Text(FixedBinaryType::kInet4, "00000000"), "0.0.0.0");
  EXPECT_EQ(Text(FixedBinaryType::kInet4, "0A00FF09"), "10.0.255.9");
  EXPECT_EQ(Text(FixedBinaryType::kInet4, "FFFFFFFF"), "255.255.255.255");
}

// INET6 as plugin/type_inet prints it: the first longest zero run becomes
// "::" even when it is one word (RFC 5952 would not), IPv4-compatible and
// IPv4-mapped addresses end in dotted decimal, ::1 and :: stay hex.
TEST(FixedBinaryTextTest, Inet6FollowsMariaDbsFormatting) {
  EXPECT_EQ(Text(FixedBinaryType::kInet6, "00000000000000000000000000000000"), "::");
  EXPECT_EQ(Text(FixedBinaryType::kInet6, "00000000000000000000000000000001"), "::1");
  EXPECT_EQ(Text(FixedBinaryType::kInet6, "00000000000000000000FFFF01020304"), "::ffff:1.2.3.4");
  EXPECT_EQ(Text(FixedBinaryType::kInet6, "00000000000000000000000001020304"), "::1.2.3.4");
  EXPECT_EQ(Text(FixedBinaryType::kInet6, "00010000000200030004000500060007"), "1::2:3:4:5:6:7");
  EXPECT_EQ(Text(FixedBinaryType::kInet6, "20010DB8000000000001000000000001"), "2001:db8::1:0:0:1");
  EXPECT_EQ(Text(FixedBinaryType::kInet6, "00010000000000000000000000000000"), "1::");
  EXPECT_EQ(Text(FixedBinaryType::kInet6, "FE800000000000000001000200030004"), "fe80::1:2:3:4");
  EXPECT_EQ(Text(FixedBinaryType::kInet6, "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"),
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
  // Two runs of equal length: the first is shortened.
  EXPECT_EQ(Text(FixedBinaryType::kInet6, "00010000000000020003000000000004"), "1::2:3:0:0:4");
  // ffff in word 5 with a non-zero word before it is no mapped address.
  EXPECT_EQ(Text(FixedBinaryType::kInet6, "00000000000000000001FFFF01020304"),
            "::1:ffff:102:304");
}

// A value of the wrong size (a schema that changed since) is refused, so the
// caller falls back to base64 instead of printing part of it.
TEST(FixedBinaryTextTest, WrongSizeIsRefused) {
  EXPECT_EQ(Text(FixedBinaryType::kUuid, "0011"), "<refused>");
  EXPECT_EQ(Text(FixedBinaryType::kInet4, "0011223344"), "<refused>");
  EXPECT_EQ(Text(FixedBinaryType::kInet6, "00112233"), "<refused>");
  EXPECT_EQ(Text(FixedBinaryType::kNone, "00112233"), "<refused>");
}

TEST(FixedBinaryTextTest, TypeNamesFromInformationSchema) {
  EXPECT_EQ(FixedBinaryTypeFromName("uuid"), FixedBinaryType::kUuid);
  EXPECT_EQ(FixedBinaryTypeFromName("INET6"), FixedBinaryType::kInet6);
  EXPECT_EQ(FixedBinaryTypeFromName("inet4"), FixedBinaryType::kInet4);
  EXPECT_EQ(FixedBinaryTypeFromName("binary"), FixedBinaryType::kNone);
  EXPECT_EQ(FixedBinaryTypeFromName(""), FixedBinaryType::kNone);
}

// Through the value path: a BINARY(16) column marked UUID renders as text in
// JSON, the same bytes unmarked as base64 (what a BINARY(16) column is).
TEST(FixedBinaryTextTest, JsonRendersMarkedColumnsAsText) {
  ColumnDef col;
  col.type = kTypeString;
  col.meta = 16;
  col.collation = kBinaryCollation;
  std::string row = std::string(1, '\x10') + absl::HexStringToBytes("123E4567E89B12D3A456426614174000");
  std::string scratch, json;
  ValueView v;
  {
    ByteCursor in(row);
    ASSERT_TRUE(DecodeValue(in, col, &scratch, &v).ok());
    AppendValueJson(v, &json);
    EXPECT_EQ(json, "\"Ej5FZ+ibEtOkVkJmFBdAAA==\"");
  }
  col.fixed_binary = FixedBinaryType::kUuid;
  json.clear();
  ByteCursor in(row);
  ASSERT_TRUE(DecodeValue(in, col, &scratch, &v).ok());
  AppendValueJson(v, &json);
  EXPECT_EQ(json, "\"123e4567-e89b-12d3-a456-426614174000\"");
}

}  // namespace
}  // namespace binrelay::protocol
