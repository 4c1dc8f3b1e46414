// Unit checks of the tests' own JSON reader and base64 decoder: the tail
// integration tests trust them to judge binrelay's output.
#include "tests/harness/json_lite.h"

#include <gtest/gtest.h>

#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

// Guards: numbers losing digits (uint64 max must survive as raw text).
TEST(JsonLiteTest, ObjectWithNumbersKeepsRawTextAndOrder) {
  BR_ASSERT_OK_AND_ASSIGN(
      JsonValue v, ParseJson(R"({"u":18446744073709551615,"d":-1.5e-3,"z":0,"n":null,"t":true})"));
  ASSERT_TRUE(v.is_object());
  ASSERT_EQ(v.object.size(), 5u);
  EXPECT_EQ(v.object[0].first, "u");
  EXPECT_EQ(v.Find("u")->text, "18446744073709551615");
  EXPECT_EQ(v.Find("d")->text, "-1.5e-3");
  EXPECT_EQ(v.Find("z")->text, "0");
  EXPECT_TRUE(v.Find("n")->is_null());
  EXPECT_TRUE(v.Find("t")->boolean);
  EXPECT_EQ(v.Find("missing"), nullptr);
}

// Guards: wrong decoding of \u escapes, including a surrogate pair (U+1F600).
TEST(JsonLiteTest, StringEscapesDecodeToUtf8) {
  BR_ASSERT_OK_AND_ASSIGN(JsonValue v,
                          ParseJson(R"(["a\"\\\/\b\f\n\r\t", "\u00e9\u20ac", "\ud83d\ude00"])"));
  ASSERT_EQ(v.array.size(), 3u);
  EXPECT_EQ(v.array[0].text, "a\"\\/\b\f\n\r\t");
  EXPECT_EQ(v.array[1].text, "\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(v.array[2].text, "\xF0\x9F\x98\x80");
}

// Guards: a lenient reader accepting output that real JSON consumers reject.
TEST(JsonLiteTest, RejectsNonStrictInput) {
  for (const char* bad : {"", "{", "[1,]", "{\"a\":1,}", "01", "-", "1.", "1e", "+1", "'a'",
                          "\"\\ud83d\"", "\"\\ude00\"", "\"\\x\"", "\"a\nb\"", "{\"a\":1}x",
                          "{\"a\":1,\"a\":2}", "nul", "\"\\u12\"", "[1 2]", "NaN"}) {
    EXPECT_FALSE(ParseJson(bad).ok()) << "accepted: " << bad;
  }
}

// Guards: base64 decode errors (padding, alphabet) that would mask bad bytes.
TEST(JsonLiteTest, Base64DecodesPaddingAndRejectsGarbage) {
  EXPECT_EQ(*Base64Decode(""), "");
  EXPECT_EQ(*Base64Decode("YQ=="), "a");
  EXPECT_EQ(*Base64Decode("YWI="), "ab");
  EXPECT_EQ(*Base64Decode("YWJj"), "abc");
  EXPECT_EQ(*Base64Decode("YWIAAA=="), std::string("ab\0\0", 4));
  EXPECT_EQ(*Base64Decode("//8="), "\xFF\xFF");
  for (const char* bad : {"YQ", "YQ=", "Y===", "YQ==YQ==", "YW-j", "YW j", "=YWJ"}) {
    EXPECT_FALSE(Base64Decode(bad).ok()) << "accepted: " << bad;
  }
  EXPECT_EQ(ToHex(std::string("\x00\xAB\x7F", 3)), "00AB7F");
}

}  // namespace
}  // namespace binrelay::testing
