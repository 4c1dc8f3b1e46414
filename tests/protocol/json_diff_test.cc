// JSON diffs (PARTIAL_UPDATE_ROWS). The golden diff is the one MySQL 8.0.22
// wrote in rust_mysql_common/json.binlog.000001 (event 39 at 3750: REPLACE
// $.age 26 for id 1, whose document was written by WRITE_ROWS at 1059).
// Multi-operation cases are hand-encoded per sql/json_diff.cc
// Json_diff_vector::read_binary.
#include "protocol/json_diff.h"

#include <gtest/gtest.h>

#include "protocol/column_type.h"
#include "protocol/json_binary.h"
#include "tests/harness/fixtures.h"
#include "tests/protocol/value_test_util.h"

namespace binrelay::protocol {
namespace {

using testutil::Col;
using testutil::Hex;

// Builds one diff entry: op, lenenc path, [lenenc binary value].
std::string Entry(int op, std::string_view path, std::string_view value_hex = "") {
  std::string e(1, static_cast<char>(op));
  e += static_cast<char>(path.size());
  e += path;
  if (op != 2) {
    std::string v = Hex(value_hex);
    e += static_cast<char>(v.size());
    e += v;
  }
  return e;
}

absl::StatusOr<std::string> Apply(std::string_view doc, const std::string& diff_bytes) {
  std::vector<JsonDiff> diffs;
  absl::Status st = ParseJsonDiffs(diff_bytes, &diffs);
  if (!st.ok()) return st;
  std::string out;
  st = ApplyJsonDiffs(doc, diffs, &out);
  if (!st.ok()) return st;
  return out;
}

std::string ApplyOk(std::string_view doc, const std::string& diff_bytes) {
  auto r = Apply(doc, diff_bytes);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : "<error>";
}

TEST(JsonDiffTest, RecordedPartialUpdateAppliesToRecordedDocument) {
  BINRELAY_REQUIRE_FIXTURE("rust_mysql_common/json.binlog.000001");
  std::string file =
      testing::ReadFileOrDie(testing::FixturePath("rust_mysql_common/json.binlog.000001"));
  ASSERT_GT(file.size(), 3850u);
  // WRITE_ROWS_V2 at 1059: header 19 + table_id 6, flags 2, extra 2, width 1,
  // present 1, NULL bitmap 1, id 4 -> JSON column at +36.
  ByteCursor doc_in(std::string_view(file).substr(1059 + 36, 60));
  std::string scratch;
  ValueView doc;
  ASSERT_TRUE(DecodeValue(doc_in, Col(kTypeJson, 4), &scratch, &doc).ok());
  EXPECT_EQ(doc.bytes, R"({"age": 24, "data": "xxxxxxxxxx", "name": "Joe"})");

  // PARTIAL_UPDATE_ROWS at 3750: header 19 + 6 + 2 + 2 + width 1 + two
  // bitmaps 2; before image (NULL bitmap 1 + id 4); after image:
  // value_options 1, partial bitmap 1, NULL bitmap 1 -> JSON diff at +40.
  ByteCursor diff_in(std::string_view(file).substr(3750 + 40, 15));
  std::vector<JsonDiff> diffs;
  ASSERT_TRUE(ReadJsonDiffColumn(diff_in, Col(kTypeJson, 4), &diffs).ok());
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_EQ(diffs[0].op, JsonDiffOp::kReplace);
  EXPECT_EQ(diffs[0].path, "$.age");
  EXPECT_EQ(diff_in.position(), 15u);

  std::string after;
  ASSERT_TRUE(ApplyJsonDiffs(doc.bytes, diffs, &after).ok());
  EXPECT_EQ(after, R"({"age": 26, "data": "xxxxxxxxxx", "name": "Joe"})");

  std::string listing;
  ASSERT_TRUE(AppendJsonDiffsJson(diffs, &listing).ok());
  EXPECT_EQ(listing, R"([{"op": "replace", "path": "$.age", "value": 26}])");
}

// Inserted members must land in MySQL's key order (length, then bytes), or
// the re-printed document differs from what SELECT shows.
TEST(JsonDiffTest, InsertKeepsMysqlKeyOrder) {
  EXPECT_EQ(ApplyOk(R"({"a": 1, "ccc": 3})", Entry(1, "$.bb", "0c0178")),
            R"({"a": 1, "bb": "x", "ccc": 3})");
  EXPECT_EQ(ApplyOk(R"({"b": 1})", Entry(1, "$.a", "0400")), R"({"a": null, "b": 1})");
  EXPECT_EQ(ApplyOk(R"({"a": 1})", Entry(1, R"($."k y")", "0401")), R"({"a": 1, "k y": true})");
}

TEST(JsonDiffTest, ArrayInsertReplaceRemoveByPosition) {
  const std::string doc = R"({"a": [1, 2, 3]})";
  EXPECT_EQ(ApplyOk(doc, Entry(1, "$.a[1]", "050900")), R"({"a": [1, 9, 2, 3]})");
  EXPECT_EQ(ApplyOk(doc, Entry(1, "$.a[10]", "050900")), R"({"a": [1, 2, 3, 9]})");
  EXPECT_EQ(ApplyOk(doc, Entry(0, "$.a[last]", "050900")), R"({"a": [1, 2, 9]})");
  EXPECT_EQ(ApplyOk(doc, Entry(2, "$.a[last-2]")), R"({"a": [2, 3]})");
  EXPECT_EQ(ApplyOk(doc, Entry(2, "$.a[0]") + Entry(2, "$.a[0]")), R"({"a": [3]})");
}

TEST(JsonDiffTest, SeveralOperationsApplyInOrder) {
  const std::string diffs = Entry(0, "$.n", "0b000000000000f83f") +   // 1.5
                            Entry(2, "$.s") +                        //
                            Entry(1, "$.o.k", "0c026869") +           // "hi"
                            Entry(0, "$.t", "0c0622c3a92f0a09");       // escapes kept
  EXPECT_EQ(ApplyOk(R"({"n": 1, "o": {}, "s": "x", "t": 0})", diffs),
            "{\"n\": 1.5, \"o\": {\"k\": \"hi\"}, \"t\": \"\\\"\xC3\xA9/\\n\\t\"}");
  EXPECT_EQ(ApplyOk(R"([1])", Entry(0, "$", "0c0178")), R"("x")");
}

TEST(JsonDiffTest, StringsWithUnicodeEscapesRoundTrip) {
  EXPECT_EQ(ApplyOk(R"({"a": "\u00e9\ud83d\ude00", "b": 1})", Entry(2, "$.b")),
            "{\"a\": \"\xC3\xA9\xF0\x9F\x98\x80\"}");
}

// A diff whose path is missing from the before-image does not belong to it.
TEST(JsonDiffTest, MissingPathsAreDataLoss) {
  auto code = [](std::string_view doc, const std::string& d) { return Apply(doc, d).status().code(); };
  EXPECT_EQ(code(R"({"a": 1})", Entry(0, "$.b", "0400")), absl::StatusCode::kDataLoss);
  EXPECT_EQ(code(R"({"a": 1})", Entry(2, "$.b")), absl::StatusCode::kDataLoss);
  EXPECT_EQ(code(R"({"a": 1})", Entry(1, "$.x.y", "0400")), absl::StatusCode::kDataLoss);
  EXPECT_EQ(code(R"([1])", Entry(2, "$[1]")), absl::StatusCode::kDataLoss);
  EXPECT_EQ(code(R"([1])", Entry(2, "$[last-1]")), absl::StatusCode::kDataLoss);
  EXPECT_EQ(code(R"([1])", Entry(1, "$.k", "0400")), absl::StatusCode::kDataLoss);
  EXPECT_EQ(code(R"([1])", Entry(2, "$")), absl::StatusCode::kDataLoss);
  EXPECT_EQ(code(R"([1])", Entry(0, "$[0]", "0d00")), absl::StatusCode::kDataLoss);  // bad value
}

TEST(JsonDiffTest, BadPathsOrDocumentsAreInvalidArgument) {
  auto code = [](std::string_view doc, const std::string& d) { return Apply(doc, d).status().code(); };
  EXPECT_EQ(code(R"({"a": 1})", Entry(2, "a")), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(R"({"a": 1})", Entry(2, "$.*")), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(R"({"a": 1})", Entry(2, "$[x]")), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(R"({"a": 1})", Entry(2, R"($."a)")), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(R"({"a": 1)", Entry(2, "$.a")), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(R"({"a": 1} x)", Entry(2, "$.a")), absl::StatusCode::kInvalidArgument);
}

// Every length field of the diff list: running past the end is OutOfRange.
TEST(JsonDiffTest, HostileDiffListLengths) {
  std::vector<JsonDiff> diffs;
  EXPECT_EQ(ParseJsonDiffs(Hex("00 09 242e61"), &diffs).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ParseJsonDiffs(Hex("00 03 242e61 05 0401"), &diffs).code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ParseJsonDiffs(Hex("00 03 242e61"), &diffs).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ParseJsonDiffs(Hex("00 fc ffff 24"), &diffs).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ParseJsonDiffs(Hex("03 03 242e61"), &diffs).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ParseJsonDiffs(Hex("02 00"), &diffs).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ParseJsonDiffs(Hex("00 03 242e61 00"), &diffs).code(), absl::StatusCode::kDataLoss);
  const std::string long_prefix = Hex("20000000 0203242e61");
  ByteCursor in(long_prefix);
  EXPECT_EQ(ReadJsonDiffColumn(in, Col(kTypeJson, 4), &diffs).code(),
            absl::StatusCode::kOutOfRange);
  const std::string exact = Hex("05000000 0203242e61");
  ByteCursor ok(exact);
  ASSERT_TRUE(ReadJsonDiffColumn(ok, Col(kTypeJson, 4), &diffs).ok());
  EXPECT_EQ(diffs.size(), 1u);
  EXPECT_EQ(diffs[0].op, JsonDiffOp::kRemove);
}

}  // namespace
}  // namespace binrelay::protocol
