// `binrelay tail --tables`: rows events of unsubscribed tables are skipped
// before row decoding (counted in the exit summary), and never printed.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/harness/binrelay_process.h"
#include "tests/harness/json_lite.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/shared_sandbox.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

constexpr char kUser[] = "relay";
constexpr char kPassword[] = "filter-pw";

struct Summary {
  int rows = -1, transactions = -1, decoded = -1, skipped = -1;
};

// The exit summary line; fails the test unless there is exactly one.
Summary ParseSummary(const ProcessResult& r) {
  static const std::regex re(
      R"(done: (\d+) rows in (\d+) transactions; rows events decoded (\d+), skipped (\d+))");
  Summary s;
  int found = 0;
  for (const std::string& line : r.ErrLines()) {
    std::smatch m;
    if (std::regex_search(line, m, re)) {
      ++found;
      s = {std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3]), std::stoi(m[4])};
    }
  }
  EXPECT_EQ(found, 1) << "summary lines on stderr; " << r.Describe();
  return s;
}

// "db.table" -> number of stdout lines.
std::map<std::string, int> LinesPerTable(const std::vector<JsonValue>& lines) {
  std::map<std::string, int> out;
  for (const JsonValue& l : lines) {
    const JsonValue* db = l.Find("db");
    const JsonValue* table = l.Find("table");
    ++out[absl::StrCat(db ? db->text : "?", ".", table ? table->text : "?")];
  }
  return out;
}

class TailFilterTest : public SharedSandboxTest<TailFilterTest> {
 public:
  static constexpr SandboxAccount kAccount{kUser, kPassword, kReplicationGrants};

 protected:
  static void CreateTable(const std::string& name) {
    BR_ASSERT_OK(sandbox_->Execute(
        absl::StrCat("CREATE TABLE ", name, " (id INT PRIMARY KEY, v VARCHAR(20))")));
  }
  // `count` autocommit single-row statements: exactly `count` rows events.
  static void Write(const std::string& table, int count, int first_id) {
    for (int i = 0; i < count; ++i) {
      BR_ASSERT_OK(sandbox_->Execute(absl::StrCat("INSERT INTO ", table, " VALUES (",
                                                  first_id + i, ", 'x')")));
    }
  }

  ProcessResult Tail(const std::string& tables, const std::string& start) {
    auto r = RunBinrelay(
        TailArgs(*sandbox_, kUser, tables,
                 {"--start", start, "--until-end", "--log-level", "info"}),
        {{"BINRELAY_SOURCE_PASSWORD", kPassword}}, std::chrono::seconds(60));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : ProcessResult{};
  }
};

// Guards: unsubscribed rows events being decoded (wasted work, and a decode
// error in a table nobody asked for) or leaking into the output.
TEST_F(TailFilterTest, ExactTableSubscriptionDecodesOnlyThatTable) {
  BR_ASSERT_OK(sandbox_->Execute("CREATE DATABASE fa"));
  CreateTable("fa.sub");
  CreateTable("fa.unsub");
  BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(*sandbox_));
  constexpr int kSub = 5, kUnsub = 7;
  // Interleaved, so skipping must work between subscribed events too.
  Write("fa.unsub", 3, 1);
  Write("fa.sub", 2, 1);
  Write("fa.unsub", 4, 100);
  Write("fa.sub", 3, 100);

  ProcessResult r = Tail("fa.sub", start);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  BR_ASSERT_OK_AND_ASSIGN(std::vector<JsonValue> lines, ParseJsonLines(r.out));
  std::map<std::string, int> want = {{"fa.sub", kSub}};
  EXPECT_EQ(LinesPerTable(lines), want);
  Summary s = ParseSummary(r);
  EXPECT_EQ(s.decoded, kSub) << r.Describe();
  EXPECT_EQ(s.skipped, kUnsub) << r.Describe();
  EXPECT_EQ(s.rows, kSub);
}

// Guards: `db.*` matching tables of other databases, or missing some of its
// own; other databases' events are skipped, not decoded.
TEST_F(TailFilterTest, DatabaseWildcardSubscriptionTakesEveryTableOfThatDatabaseOnly) {
  BR_ASSERT_OK(sandbox_->Execute("CREATE DATABASE fb"));
  BR_ASSERT_OK(sandbox_->Execute("CREATE DATABASE fbx"));
  CreateTable("fb.one");
  CreateTable("fb.two");
  // Same table name in a database whose name extends "fb".
  CreateTable("fbx.one");
  BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(*sandbox_));
  Write("fb.one", 4, 1);
  Write("fbx.one", 6, 1);
  Write("fb.two", 2, 1);
  Write("fbx.one", 1, 50);

  ProcessResult r = Tail("fb.*", start);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  BR_ASSERT_OK_AND_ASSIGN(std::vector<JsonValue> lines, ParseJsonLines(r.out));
  std::map<std::string, int> want = {{"fb.one", 4}, {"fb.two", 2}};
  EXPECT_EQ(LinesPerTable(lines), want);
  Summary s = ParseSummary(r);
  EXPECT_EQ(s.decoded, 6) << r.Describe();
  EXPECT_EQ(s.skipped, 7) << r.Describe();
}

}  // namespace
}  // namespace binrelay::testing
