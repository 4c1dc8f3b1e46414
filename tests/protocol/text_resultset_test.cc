#include "protocol/text_resultset.h"

#include <gtest/gtest.h>

#include "absl/strings/escaping.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::protocol {
namespace {

// Guards every Column Definition 41 field on real bytes: the "Database"
// column of SHOW DATABASES from MySQL 8.0.32 (zeek caching_sha2_password.pcap,
// connection 1, seq 2).
TEST(TextResultsetTest, ParsesCapturedColumnDefinition) {
  std::string payload = absl::HexStringToBytes(
      "036465660008534348454d41544108736368656d6174610844617461626173650844617461626173650cff"
      "0000010000fd8110000000");
  BR_ASSERT_OK_AND_ASSIGN(ColumnDefinition d, ParseColumnDefinition(payload));
  EXPECT_EQ(d.schema, "");
  EXPECT_EQ(d.table, "SCHEMATA");
  EXPECT_EQ(d.org_table, "schemata");
  EXPECT_EQ(d.name, "Database");
  EXPECT_EQ(d.org_name, "Database");
  EXPECT_EQ(d.collation, 255);
  EXPECT_EQ(d.length, 256u);
  EXPECT_EQ(d.type, 0xFD);
  EXPECT_EQ(d.flags, 0x1081);
  EXPECT_EQ(d.decimals, 0);
}

// Guards hostile lengths: each truncation of the definition fails cleanly.
TEST(TextResultsetTest, TruncatedColumnDefinitionFails) {
  std::string payload = absl::HexStringToBytes(
      "036465660008534348454d41544108736368656d6174610844617461626173650844617461626173650cff"
      "0000010000fd8110000000");
  for (size_t n = 0; n + 2 < payload.size(); ++n) {
    auto d = ParseColumnDefinition(std::string_view(payload).substr(0, n));
    EXPECT_FALSE(d.ok()) << n;
  }
  // A fixed-field length below 10 is corruption.
  std::string short_fixed = absl::HexStringToBytes("036465660000000161000500000000000000");
  EXPECT_EQ(ParseColumnDefinition(short_fixed).status().code(), absl::StatusCode::kDataLoss);
}

// Guards NULL (0xFB) vs empty string and lenenc values in a text row.
TEST(TextResultsetTest, ParsesTextRowWithNullsAndEmptyStrings) {
  std::string payload = std::string("\x01" "a" "\xfb" "\x00", 4) + std::string("\xfc\x03\x00xyz", 6);
  std::vector<std::optional<std::string>> row;
  BR_ASSERT_OK(ParseTextRow(payload, 4, &row));
  ASSERT_EQ(row.size(), 4u);
  EXPECT_EQ(row[0], "a");
  EXPECT_EQ(row[1], std::nullopt);
  EXPECT_EQ(row[2], "");
  EXPECT_EQ(row[3], "xyz");
}

// Guards hostile row lengths: a value longer than the packet, and leftovers.
TEST(TextResultsetTest, RowLengthsAreChecked) {
  std::vector<std::optional<std::string>> row;
  absl::Status s = ParseTextRow("\x05" "ab", 1, &row);
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("column 0"), std::string::npos) << s;
  EXPECT_EQ(ParseTextRow(std::string("\xfe\xff\xff\xff\xff\xff\xff\xff\x7f", 9), 1, &row).code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ParseTextRow("\x01" "a" "\x01" "b", 1, &row).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ParseTextRow("\x01" "a", 2, &row).code(), absl::StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace binrelay::protocol
