// RowImageSplitter (row_image.h): the apply path's view of rows events. These
// tests cover MySQL PARTIAL_UPDATE_ROWS (binlog_row_value_options=
// PARTIAL_JSON), whose after images carry JSON diffs instead of documents: the
// splitter must hand the pipeline a full after image holding the patched
// document, the same document `tail` prints, or the target keeps the old one.
#include "protocol/row_image.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "protocol/column_type.h"
#include "protocol/event_type.h"
#include "protocol/json_binary_writer.h"
#include "protocol/row_decoder.h"
#include "tests/protocol/value_test_util.h"

namespace binrelay::protocol {
namespace {

using testutil::Col;

std::string Le(uint64_t v, size_t width) {
  std::string s;
  for (size_t i = 0; i < width; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  return s;
}

// A JSON column value: 4-byte length (meta 4) and the binary document.
std::string JsonValue(std::string_view text) {
  std::string bin;
  EXPECT_TRUE(EncodeJsonTextAsBinary(text, &bin).ok());
  return Le(bin.size(), 4) + bin;
}

// One diff entry (sql/json_diff.cc Json_diff_vector::write_binary): op, path,
// and for REPLACE/INSERT the binary value.
std::string Diff(int op, std::string_view path, std::string_view value_text = "") {
  std::string e(1, static_cast<char>(op));
  e += static_cast<char>(path.size());
  e += path;
  if (op != 2) {
    std::string v;
    EXPECT_TRUE(EncodeJsonTextAsBinary(value_text, &v).ok());
    e += static_cast<char>(v.size());
    e += v;
  }
  return e;
}

// `t` (id INT, j JSON, k JSON): j gets diffs, k is logged whole.
TableDef Table() {
  TableDef t;
  t.db = "db";
  t.table = "t";
  t.columns = {Col(kTypeLong), Col(kTypeJson, 4), Col(kTypeJson, 4)};
  t.columns[0].name = "id";
  t.columns[1].name = "j";
  t.columns[2].name = "k";
  t.primary_key = {0};
  return t;
}

RowsEventView PartialUpdate(std::string_view rows, std::string_view before_present) {
  RowsEventView ev;
  ev.type = kPartialUpdateRowsEvent;
  ev.kind = RowsKind::kUpdate;
  ev.version = 2;
  ev.partial_json = true;
  ev.column_count = 3;
  ev.columns_before = before_present;
  ev.columns_after = "\x07";
  ev.rows = rows;
  return ev;
}

std::vector<std::string> ImageTexts(std::string_view image, const TableDef& t) {
  std::vector<std::string> out;
  std::string scratch;
  absl::Status s = ForEachImageValue(image, t, &scratch, [&](size_t, const ValueView* v) {
    std::string text = "NULL";
    if (v != nullptr && v->kind == ValueKind::kJsonText) {
      text.assign(v->bytes);  // the document itself, unquoted
    } else if (v != nullptr) {
      text.clear();
      AppendValueJson(*v, &text);
    }
    out.push_back(std::move(text));
    return true;
  });
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

TEST(RowImageSplitterTest, PartialJsonAfterImageIsRebuiltWithThePatchedDocument) {
  const TableDef t = Table();
  const std::string before = std::string(1, '\0') + Le(7, 4) +
                             JsonValue(R"({"a": 1, "n": [1, 2], "s": "x"})") +
                             JsonValue(R"({"k": 1})");
  const std::string diffs = Diff(0, "$.a", "2") + Diff(1, "$.n[5]", "1.50") + Diff(2, "$.s") +
                            Diff(1, "$.bb", R"({"x": null})");
  // value_options PARTIAL_JSON_UPDATES, partial bitmap: j only.
  const std::string after = std::string("\x01\x01", 2) + std::string(1, '\0') + Le(7, 4) +
                            Le(diffs.size(), 4) + diffs + JsonValue(R"({"k": 2})");
  // A second row, so per-row state is shown to reset: its j diff patches its
  // own before image.
  const std::string before2 = std::string(1, '\0') + Le(8, 4) + JsonValue("[true]") +
                              JsonValue("null");
  const std::string diffs2 = Diff(0, "$[0]", "false");
  const std::string after2 = std::string("\x01\x01", 2) + std::string(1, '\0') + Le(8, 4) +
                             Le(diffs2.size(), 4) + diffs2 + JsonValue("null");
  const std::string rows = before + after + before2 + after2;
  const RowsEventView ev = PartialUpdate(rows, "\x07");

  RowImageSplitter splitter;
  std::vector<std::vector<std::string>> afters;
  std::vector<std::vector<std::string>> befores;
  absl::Status s = splitter.Split(ev, t, [&](const RawRowImages& r) {
    EXPECT_TRUE(r.before_full);
    EXPECT_TRUE(r.after_full);
    befores.push_back(ImageTexts(r.before, t));
    afters.push_back(ImageTexts(r.after, t));
    return absl::OkStatus();
  });
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(afters.size(), 2u);
  EXPECT_EQ(befores[0][1], R"({"a": 1, "n": [1, 2], "s": "x"})");
  EXPECT_EQ(afters[0][0], "7");
  EXPECT_EQ(afters[0][1], R"({"a": 2, "n": [1, 2, 1.50], "bb": {"x": null}})");
  EXPECT_EQ(afters[0][2], R"({"k": 2})");
  EXPECT_EQ(afters[1][1], "[false]");

  // The same document `tail` prints for this event (row_decoder.h).
  RowDecoder decoder;
  std::vector<std::string> tail_after;
  ASSERT_TRUE(decoder.Decode(ev, t, [&](const DecodedRow& r) {
    tail_after.emplace_back(r.after_json);
    return absl::OkStatus();
  }).ok());
  ASSERT_EQ(tail_after.size(), 2u);
  EXPECT_EQ(tail_after[0],
            R"({"id":7,"j":"{\"a\": 2, \"n\": [1, 2, 1.50], \"bb\": {\"x\": null}}","k":"{\"k\": 2}"})");
}

// binlog_row_image=MINIMAL with PARTIAL_JSON: the document the diff patches
// is not in the binlog. Applying anything would leave the target's column
// wrong, so the splitter refuses, naming the table, column and settings.
TEST(RowImageSplitterTest, PartialJsonWithoutTheBeforeDocumentIsRefusedWithTheSetting) {
  const TableDef t = Table();
  const std::string before = std::string(1, '\0') + Le(7, 4);  // id only
  const std::string diffs = Diff(0, "$.a", "2");
  const std::string after = std::string("\x01\x01", 2) + std::string(1, '\0') + Le(7, 4) +
                            Le(diffs.size(), 4) + diffs + JsonValue(R"({"k": 2})");
  const std::string rows = before + after;
  RowImageSplitter splitter;
  int rows_seen = 0;
  absl::Status s = splitter.Split(PartialUpdate(rows, "\x01"), t, [&](const RawRowImages&) {
    ++rows_seen;
    return absl::OkStatus();
  });
  EXPECT_EQ(rows_seen, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("`db`.`t`"), std::string_view::npos) << s;
  EXPECT_NE(s.message().find("`j`"), std::string_view::npos) << s;
  EXPECT_NE(s.message().find("binlog_row_image=FULL"), std::string_view::npos) << s;
}

// The before documents are per row: a second row whose before image lacks
// the column must not be patched against the first row's document.
TEST(RowImageSplitterTest, BeforeDocumentsDoNotCarryOverToTheNextRow) {
  const TableDef t = Table();
  const std::string diffs = Diff(0, "$.a", "2");
  const std::string after = std::string("\x01\x01", 2) + std::string(1, '\0') + Le(7, 4) +
                            Le(diffs.size(), 4) + diffs + JsonValue(R"({"k": 2})");
  // Row 1: id, j and k present; row 2: the same bitmap, but j is NULL.
  const std::string before1 = std::string(1, '\0') + Le(7, 4) + JsonValue(R"({"a": 1})") +
                              JsonValue(R"({"k": 1})");
  const std::string before2 = std::string(1, '\x02') + Le(7, 4) + JsonValue(R"({"k": 1})");
  const std::string rows = before1 + after + before2 + after;
  RowImageSplitter splitter;
  int rows_seen = 0;
  absl::Status s = splitter.Split(PartialUpdate(rows, "\x07"), t, [&](const RawRowImages&) {
    ++rows_seen;
    return absl::OkStatus();
  });
  EXPECT_EQ(rows_seen, 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("row 1"), std::string_view::npos) << s;
}

// value_options 0: the after image is an ordinary one and passes through
// untouched (no rebuild, same bytes).
TEST(RowImageSplitterTest, PartialUpdateWithoutDiffsKeepsTheLoggedAfterImage) {
  const TableDef t = Table();
  const std::string before = std::string(1, '\0') + Le(7, 4) + JsonValue("[1]") + JsonValue("[2]");
  const std::string image = std::string(1, '\0') + Le(7, 4) + JsonValue("[3]") + JsonValue("[4]");
  const std::string rows = before + std::string(1, '\0') + image;
  RowImageSplitter splitter;
  std::string after;
  ASSERT_TRUE(splitter.Split(PartialUpdate(rows, "\x07"), t, [&](const RawRowImages& r) {
    after.assign(r.after);
    return absl::OkStatus();
  }).ok());
  EXPECT_EQ(after, image);
}

// A WRITE_ROWS whose after-image bitmap has no column set: each row then
// holds no bytes (not even a NULL bitmap). Guards against both row loops
// (the apply path's splitter and tail's decoder) spinning on such an event
// without advancing, calling back without end while memory grows.
TEST(RowImageSplitterTest, RowsEventWithNoPresentColumnIsRefusedNotLoopedOn) {
  const TableDef t = Table();
  RowsEventView ev;
  ev.type = kWriteRowsEvent;
  ev.kind = RowsKind::kWrite;
  ev.version = 2;
  ev.column_count = 3;
  ev.event_offset = 4242;
  ev.columns_after = std::string_view("\x00", 1);
  ev.rows = "junk";  // bytes left that no row consumes
  int rows = 0;
  RowImageSplitter splitter;
  absl::Status s = splitter.Split(ev, t, [&](const RawRowImages&) {
    ++rows;
    return rows < 3 ? absl::OkStatus() : absl::InternalError("looped");
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("offset 4242"), std::string_view::npos) << s;
  EXPECT_NE(s.message().find("`db`.`t`"), std::string_view::npos) << s;
  EXPECT_EQ(rows, 0);

  RowDecoder decoder;
  rows = 0;
  s = decoder.Decode(ev, t, [&](const DecodedRow&) {
    ++rows;
    return rows < 3 ? absl::OkStatus() : absl::InternalError("looped");
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("occupies no bytes"), std::string_view::npos) << s;
  EXPECT_EQ(rows, 0);
}

}  // namespace
}  // namespace binrelay::protocol
