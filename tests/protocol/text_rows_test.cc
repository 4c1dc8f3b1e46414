#include "protocol/text_rows.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/harness/status_matchers.h"

namespace binrelay::protocol {
namespace {

std::string Lenenc(std::string_view v) {
  std::string out(1, static_cast<char>(v.size()));  // values under 251 bytes here
  out.append(v);
  return out;
}

// Guards the copy's reading of a range: values, NULLs (0xFB) and empty
// strings of several rows come back where they were, each its own bytes.
TEST(TextRowsTest, RowsOfValuesNullsAndEmptyStringsReadBack) {
  TextRows rows;
  rows.Reset(3);
  BR_ASSERT_OK(rows.AppendRow(Lenenc("1") + "\xFB" + Lenenc("")));
  BR_ASSERT_OK(rows.AppendRow(Lenenc("22") + Lenenc(std::string(200, 'x')) + Lenenc("a|b")));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows.columns(), 3u);
  EXPECT_EQ(rows.Get(0, 0), "1");
  EXPECT_FALSE(rows.Get(0, 1).has_value());
  ASSERT_TRUE(rows.Get(0, 2).has_value());
  EXPECT_EQ(*rows.Get(0, 2), "");
  EXPECT_EQ(rows.Get(1, 0), "22");
  EXPECT_EQ(rows.Get(1, 1), std::string(200, 'x'));
  EXPECT_EQ(rows.Get(1, 2), "a|b");
}

// Guards hostile rows: a truncated row or one with bytes after its last
// value is DataLoss and leaves the rows read before it intact, not half a
// row that would shift every later value.
TEST(TextRowsTest, MalformedRowFailsAndLeavesEarlierRows) {
  TextRows rows;
  rows.Reset(2);
  BR_ASSERT_OK(rows.AppendRow(Lenenc("a") + Lenenc("b")));
  EXPECT_FALSE(rows.AppendRow(Lenenc("c")).ok());                      // one value short
  EXPECT_FALSE(rows.AppendRow(Lenenc("c") + Lenenc("d") + "z").ok());  // a byte too many
  EXPECT_FALSE(rows.AppendRow(Lenenc("c") + "\x05" "d").ok());          // length past the end
  ASSERT_EQ(rows.size(), 1u);
  BR_ASSERT_OK(rows.AppendRow(Lenenc("e") + Lenenc("f")));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows.Get(0, 1), "b");
  EXPECT_EQ(rows.Get(1, 0), "e");
  EXPECT_EQ(rows.Get(1, 1), "f");
}

// Guards the conversion from owned rows (SqlSource's default): a row of the
// wrong width is refused, not padded with NULLs.
TEST(TextRowsTest, AppendValuesRefusesARowOfTheWrongWidth) {
  TextRows rows;
  rows.Reset(2);
  BR_ASSERT_OK(rows.AppendValues({std::string("x"), std::nullopt}));
  EXPECT_FALSE(rows.AppendValues({std::string("y")}).ok());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows.Get(0, 0), "x");
  EXPECT_FALSE(rows.Get(0, 1).has_value());
}

}  // namespace
}  // namespace binrelay::protocol
