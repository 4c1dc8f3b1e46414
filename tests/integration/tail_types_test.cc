// `binrelay tail` against a real MariaDB 10.11: every column type with edge
// values, through INSERT, UPDATE and DELETE, compared value by value with what
// SELECT prints (time_zone '+00:00') for the same rows.
#include <gtest/gtest.h>

#include <iostream>

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/harness/binrelay_process.h"
#include "tests/harness/json_lite.h"
#include "tests/harness/every_type_table.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/shared_sandbox.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

constexpr char kUser[] = "relay";
constexpr char kPassword[] = "types-pw";

class TailTypesTest : public SharedSandboxTest<TailTypesTest> {
 public:
  static constexpr SandboxAccount kAccount{kUser, kPassword, kReplicationGrants};

 protected:
  // SELECT of every column (hex expressions for the binary ones), by id.
  std::map<int, std::vector<std::optional<std::string>>> Snapshot() {
    std::vector<std::string> exprs = {"id"};
    for (const Column& c : Columns()) exprs.push_back(c.select.empty() ? c.name : c.select);
    auto rows = RowsById(*sandbox_, absl::StrCat("SELECT ", absl::StrJoin(exprs, ", "),
                                                 " FROM itest.types ORDER BY id"));
    EXPECT_TRUE(rows.ok()) << rows.status();
    return rows.ok() ? *std::move(rows)
                     : std::map<int, std::vector<std::optional<std::string>>>{};
  }
};

// Compares a before/after image with a snapshot row; every column present,
// nothing else present.
void ExpectImage(const JsonValue* image, const std::vector<std::optional<std::string>>& want,
                 int id, const std::string& what) {
  ASSERT_NE(image, nullptr) << what << ": image missing";
  ASSERT_TRUE(image->is_object()) << what << ": image is not an object";
  const std::vector<Column> cols = Columns();
  EXPECT_EQ(image->object.size(), cols.size() + 1) << what << ": column count";
  const JsonValue* jid = image->Find("id");
  ASSERT_NE(jid, nullptr) << what;
  EXPECT_EQ(jid->text, std::to_string(id)) << what;
  for (size_t i = 0; i < cols.size(); ++i) {
    const JsonValue* v = image->Find(cols[i].name);
    if (v == nullptr) {
      ADD_FAILURE() << what << " id " << id << ": column " << cols[i].name << " missing";
      continue;
    }
    std::string diff = CompareWithSelect(cols[i], *v, want[i]);
    EXPECT_EQ(diff, "") << what << " id " << id << " column " << cols[i].name << " ("
                        << cols[i].type << ")";
  }
}

// Guards: any type decoded wrong (sign, width, fraction, padding, charset,
// metadata length), misnamed columns, or before/after images swapped.
TEST_F(TailTypesTest, EveryColumnTypeRoundTripsThroughInsertUpdateDelete) {
  const std::vector<Column> cols = Columns();
  ASSERT_EQ(kMins.size(), cols.size());
  ASSERT_EQ(kMaxes.size(), cols.size());
  ASSERT_EQ(kMisc.size(), cols.size());
  ASSERT_EQ(kOther.size(), cols.size());
  std::vector<std::string> nulls(cols.size(), "NULL");

  // One session for setup, writes and snapshots: zero dates need sql_mode '',
  // temporal text is compared in UTC, text in utf8mb4.
  BR_ASSERT_OK(sandbox_->Execute("SET NAMES utf8mb4"));
  BR_ASSERT_OK(sandbox_->Execute("SET time_zone = '+00:00'"));
  BR_ASSERT_OK(sandbox_->Execute("SET sql_mode = ''"));
  BR_ASSERT_OK(sandbox_->Execute("CREATE DATABASE itest CHARACTER SET utf8mb4"));
  BR_ASSERT_OK(sandbox_->Execute(EveryTypeTableDdl("itest.types")));
  BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(*sandbox_));
  const std::string binlog_file = start.substr(0, start.find(':'));

  BR_ASSERT_OK(sandbox_->Execute(absl::StrCat(
      "INSERT INTO itest.types VALUES ", RowValues(1, kMins), ", ", RowValues(2, kMaxes), ", ",
      RowValues(3, kMisc), ", ", RowValues(4, nulls))));
  auto after_insert = Snapshot();
  ASSERT_EQ(after_insert.size(), 4u);
  const std::vector<std::pair<int, const std::vector<std::string>*>> updates = {
      {1, &kOther}, {2, &kMisc}, {3, &nulls}, {4, &kMaxes}};
  for (const auto& [id, values] : updates) {
    BR_ASSERT_OK(sandbox_->Execute(
        absl::StrCat("UPDATE itest.types SET ", SetClause(*values), " WHERE id = ", id)));
  }
  auto after_update = Snapshot();
  ASSERT_EQ(after_update.size(), 4u);
  BR_ASSERT_OK(sandbox_->Execute("DELETE FROM itest.types WHERE id IN (1, 2)"));
  BR_ASSERT_OK(sandbox_->Execute("DELETE FROM itest.types"));

  BR_ASSERT_OK_AND_ASSIGN(
      ProcessResult r,
      RunBinrelay(TailArgs(*sandbox_, kUser, "itest.types", {"--start", start, "--until-end"}),
                  {{"BINRELAY_SOURCE_PASSWORD", kPassword}}, std::chrono::seconds(60)));
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  BR_ASSERT_OK_AND_ASSIGN(std::vector<JsonValue> lines, ParseJsonLines(r.out));
  ASSERT_EQ(lines.size(), 12u) << r.out.substr(0, 2000);
  if (std::getenv("BINRELAY_TEST_DUMP_OUTPUT")) std::cerr << r.out.substr(0, 20000) << r.err;

  const std::regex gtid_re("^0-1-[0-9]+$");
  uint64_t last_pos = 0;
  for (size_t n = 0; n < lines.size(); ++n) {
    const JsonValue& line = lines[n];
    const std::string where = absl::StrCat("line ", n + 1);
    const char* want_op = n < 4 ? "insert" : n < 8 ? "update" : "delete";
    ASSERT_NE(line.Find("op"), nullptr) << where;
    EXPECT_EQ(line.Find("op")->text, want_op) << where;
    ASSERT_NE(line.Find("db"), nullptr) << where;
    EXPECT_EQ(line.Find("db")->text, "itest") << where;
    ASSERT_NE(line.Find("table"), nullptr) << where;
    EXPECT_EQ(line.Find("table")->text, "types") << where;
    ASSERT_NE(line.Find("file"), nullptr) << where;
    EXPECT_EQ(line.Find("file")->text, binlog_file) << where;
    ASSERT_NE(line.Find("pos"), nullptr) << where;
    ASSERT_TRUE(line.Find("pos")->is_number()) << where;
    uint64_t pos = std::strtoull(line.Find("pos")->text.c_str(), nullptr, 10);
    EXPECT_GT(pos, 0u) << where;
    EXPECT_GE(pos, last_pos) << where << ": positions must not go backwards";
    last_pos = pos;
    ASSERT_NE(line.Find("gtid"), nullptr) << where;
    EXPECT_TRUE(line.Find("gtid")->is_string() &&
                std::regex_match(line.Find("gtid")->text, gtid_re))
        << where << ": gtid " << line.Find("gtid")->text;
    ASSERT_NE(line.Find("ts"), nullptr) << where;
    EXPECT_TRUE(line.Find("ts")->is_number() &&
                std::strtoull(line.Find("ts")->text.c_str(), nullptr, 10) > 0)
        << where;
    EXPECT_EQ(line.Find("image"), nullptr) << where << ": FULL image must not be partial";

    const JsonValue* before = line.Find("before");
    const JsonValue* after = line.Find("after");
    ASSERT_NE(before, nullptr) << where;
    ASSERT_NE(after, nullptr) << where;
    const JsonValue* image = std::string(want_op) == "delete" ? before : after;
    ASSERT_TRUE(image->is_object()) << where;
    ASSERT_NE(image->Find("id"), nullptr) << where;
    int id = std::atoi(image->Find("id")->text.c_str());
    ASSERT_TRUE(id >= 1 && id <= 4) << where;
    if (n < 4) {
      EXPECT_TRUE(before->is_null()) << where;
      ExpectImage(after, after_insert[id], id, where + " insert after");
    } else if (n < 8) {
      ExpectImage(before, after_insert[id], id, where + " update before");
      ExpectImage(after, after_update[id], id, where + " update after");
    } else {
      EXPECT_TRUE(after->is_null()) << where;
      ExpectImage(before, after_update[id], id, where + " delete before");
    }
  }
  // Each statement is its own transaction: its lines follow the previous ones.
  EXPECT_LT(std::strtoull(lines[3].Find("pos")->text.c_str(), nullptr, 10),
            std::strtoull(lines[4].Find("pos")->text.c_str(), nullptr, 10));
}

// Guards: the snapshot side of the comparison silently mangling binary data
// (the harness Query must be binary-safe for the HEX cross-check to mean much).
TEST_F(TailTypesTest, SnapshotQueryIsBinarySafe) {
  BR_ASSERT_OK_AND_ASSIGN(SqlRows rows, sandbox_->Query("SELECT X'610062', HEX(X'610062')"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(*rows[0][0], std::string("a\0b", 3));
  EXPECT_EQ(*rows[0][1], "610062");
}

}  // namespace
}  // namespace binrelay::testing
