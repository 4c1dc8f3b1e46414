// Unit tests of ordered keys: byte order equals the primary key's order,
// and a value read from a row image and from a SELECT's text encode alike.

#include "apply/ordered_key.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "protocol/column_type.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::apply {
namespace {

protocol::ColumnDef Col(uint8_t type, uint16_t meta = 0, bool is_unsigned = false) {
  protocol::ColumnDef c;
  c.type = type;
  c.meta = meta;
  c.is_unsigned = is_unsigned;
  c.name = "k";
  return c;
}

std::string FromText(const protocol::ColumnDef& col, std::string_view text) {
  std::string out;
  absl::Status s = AppendOrderedComponentFromText(col, text, &out);
  EXPECT_TRUE(s.ok()) << text << ": " << s;
  return out;
}

// Asserts that `texts`, given in ascending order of the column's values,
// encode to strictly ascending bytes.
void ExpectAscending(const protocol::ColumnDef& col, const std::vector<std::string>& texts) {
  for (size_t i = 1; i < texts.size(); ++i) {
    EXPECT_LT(FromText(col, texts[i - 1]), FromText(col, texts[i]))
        << texts[i - 1] << " should sort before " << texts[i];
  }
}

// Guards: two's-complement bytes putting negative keys above positive ones
// (a chunk bound would then cover the wrong rows).
TEST(OrderedKeyTest, IntegersSortNumerically) {
  ExpectAscending(Col(protocol::kTypeLongLong),
                  {"-9223372036854775808", "-5", "-1", "0", "1", "256", "9223372036854775807"});
  ExpectAscending(Col(protocol::kTypeLongLong, 0, true),
                  {"0", "1", "9223372036854775808", "18446744073709551615"});
}

// Guards: DECIMAL compared by its text ("10.00" < "9.00") or with negative
// values in the wrong direction.
TEST(OrderedKeyTest, DecimalsSortNumericallyWhateverTheirLength) {
  const protocol::ColumnDef col = Col(protocol::kTypeNewDecimal, (10 << 8) | 2);
  ExpectAscending(col, {"-99999999.99", "-10.00", "-9.50", "-0.01", "0.00", "0.01", "9.00",
                        "10.00", "99999999.99"});
  EXPECT_EQ(FromText(col, "-0.00"), FromText(col, "0.00"));
  EXPECT_EQ(FromText(col, "007.5"), FromText(col, "7.50"));
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const int64_t a = static_cast<int64_t>(rng() % 2000000) - 1000000;
    const int64_t b = static_cast<int64_t>(rng() % 2000000) - 1000000;
    auto text = [](int64_t cents) {
      return absl::StrFormat("%s%d.%02d", cents < 0 ? "-" : "", std::abs(cents) / 100,
                             std::abs(cents) % 100);
    };
    EXPECT_EQ(a < b, FromText(col, text(a)) < FromText(col, text(b))) << text(a) << " " << text(b);
  }
  std::string out;
  EXPECT_FALSE(AppendOrderedComponentFromText(col, "123456789.00", &out).ok());
}

// Guards: TIME compared as text ("-01:00:00" above "-00:59:59", "100:00:00"
// below "99:00:00").
TEST(OrderedKeyTest, TimesSortByDuration) {
  ExpectAscending(Col(protocol::kTypeTime2, 6),
                  {"-838:59:59.000000", "-01:00:00.000000", "-00:59:59.999999",
                   "00:00:00.000000", "00:00:00.500000", "99:00:00.000000", "100:00:00.000000"});
}

// Guards: strings that are prefixes of others, or hold 0x00 bytes, sorting
// wrongly or running into the next component of a composite key.
TEST(OrderedKeyTest, StringsSortByBytesAndDelimitThemselves) {
  const protocol::ColumnDef col = Col(protocol::kTypeVarchar, 100);
  ExpectAscending(col, {std::string(""), std::string("a"), std::string("a\0", 2),
                        std::string("a\0b", 3), std::string("ab"), std::string("b"),
                        std::string("\xff")});
  // ("a", "z") < ("ab", "a"): the first component decides.
  EXPECT_LT(FromText(col, "a") + FromText(col, "z"), FromText(col, "ab") + FromText(col, "a"));
  protocol::ColumnDef binary = Col(protocol::kTypeString, 8);
  binary.collation = 63;
  EXPECT_EQ(FromText(binary, std::string("ab\0\0", 4)), FromText(binary, "ab"))
      << "BINARY(n) is logged without its trailing zero bytes";
}

// Guards: doubles compared by their bits (negative ones reversed), and -0.0
// apart from 0.0.
TEST(OrderedKeyTest, DoublesSortNumerically) {
  ExpectAscending(Col(protocol::kTypeDouble),
                  {"-1e300", "-2.5", "-1", "-1e-300", "0", "1e-300", "1", "2.5", "1e300"});
  EXPECT_EQ(FromText(Col(protocol::kTypeDouble), "-0"), FromText(Col(protocol::kTypeDouble), "0"));
}

// Guards: fixed-width temporal text losing its order (it must stay fixed
// width: 4-digit years, the column's fractional digits).
TEST(OrderedKeyTest, DatetimesSortInTimeOrder) {
  ExpectAscending(Col(protocol::kTypeDatetime2, 3),
                  {"0000-00-00 00:00:00.000", "1000-01-01 00:00:00.000", "2024-02-29 23:59:59.999",
                   "2024-03-01 00:00:00.000", "9999-12-31 23:59:59.999"});
}

// Guards: a key read from a row image and the same key from a SELECT's text
// encoding differently (a change would then be compared against the wrong
// chunk bound).
TEST(OrderedKeyTest, ImageValuesAndSelectTextEncodeAlike) {
  struct Case {
    protocol::ColumnDef col;
    protocol::ValueView v;
    std::string text;
  };
  std::vector<Case> cases;
  {
    Case c{Col(protocol::kTypeLong), {}, "-42"};
    c.v.kind = protocol::ValueKind::kSigned;
    c.v.i = -42;
    cases.push_back(c);
  }
  {
    Case c{Col(protocol::kTypeLong, 0, true), {}, "4000000000"};
    c.v.kind = protocol::ValueKind::kUnsigned;
    c.v.u = 4000000000u;
    cases.push_back(c);
  }
  {
    Case c{Col(protocol::kTypeNewDecimal, (6 << 8) | 3), {}, "-1.250"};
    c.v.kind = protocol::ValueKind::kFormatted;
    c.v.bytes = "-1.250";
    cases.push_back(c);
  }
  {
    Case c{Col(protocol::kTypeVarchar, 10), {}, "key"};
    c.v.kind = protocol::ValueKind::kText;
    c.v.bytes = "key";
    cases.push_back(c);
  }
  {
    Case c{Col(protocol::kTypeDouble), {}, "0.1"};
    c.v.kind = protocol::ValueKind::kDouble;
    c.v.d = 0.1;
    cases.push_back(c);
  }
  for (const Case& c : cases) {
    std::string from_image;
    BR_ASSERT_OK(AppendOrderedComponent(c.col, c.v, &from_image));
    EXPECT_EQ(from_image, FromText(c.col, c.text)) << c.text;
  }
}

}  // namespace
}  // namespace binrelay::apply
