// Where `binrelay tail` starts and stops: --start gtid:, earliest, current,
// across binlog rotations, and column names after live DDL.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/harness/binrelay_process.h"
#include "tests/harness/json_lite.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

using std::chrono::seconds;

constexpr char kUser[] = "starter";
constexpr char kPassword[] = "start-pw";

EnvVars Env() { return {{"BINRELAY_SOURCE_PASSWORD", kPassword}}; }

class TailStartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BR_ASSERT_OK_AND_ASSIGN(sb_, ServerSandbox::Start());
    BR_ASSERT_OK(sb_->CreateUser(kUser, kPassword, "REPLICATION SLAVE, BINLOG MONITOR, SELECT"));
    BR_ASSERT_OK(sb_->Execute("CREATE DATABASE s"));
    BR_ASSERT_OK(sb_->Execute("CREATE TABLE s.t (id INT PRIMARY KEY, v VARCHAR(10))"));
  }

  void Insert(int id) {
    BR_ASSERT_OK(sb_->Execute(absl::StrCat("INSERT INTO s.t VALUES (", id, ", 'v", id, "')")));
  }

  // Runs tail --until-end with `extra` and returns the inserted ids, in order.
  std::vector<int> TailIds(const std::vector<std::string>& extra, std::set<std::string>* files) {
    std::vector<std::string> args = TailArgs(*sb_, kUser, "s.t", extra);
    args.push_back("--until-end");
    auto r = RunBinrelay(args, Env(), std::chrono::seconds(60));
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return {};
    EXPECT_EQ(r->exit_code, 0) << r->Describe();
    auto lines = ParseJsonLines(r->out);
    EXPECT_TRUE(lines.ok()) << lines.status();
    std::vector<int> ids;
    for (const JsonValue& line : *lines) {
      const JsonValue* after = line.Find("after");
      if (after == nullptr || !after->is_object()) continue;
      ids.push_back(std::stoi(after->Find("id")->text));
      if (files) files->insert(line.Find("file")->text);
    }
    return ids;
  }

  std::unique_ptr<ServerSandbox> sb_;
};

// Guards: a GTID start re-sending or skipping transactions around the given
// position (MariaDB @slave_connect_state semantics: start after it).
TEST_F(TailStartTest, GtidStartDeliversOnlyLaterTransactions) {
  Insert(1);
  Insert(2);
  BR_ASSERT_OK_AND_ASSIGN(SqlRows pos, sb_->Query("SELECT @@gtid_binlog_pos"));
  ASSERT_EQ(pos.size(), 1u);
  Insert(3);
  Insert(4);
  EXPECT_EQ(TailIds({"--start", "gtid:" + pos[0][0].value_or("")}, nullptr),
            (std::vector<int>{3, 4}));
}

// Guards: a reconnect right after a GTID start resuming from the start of
// the binlog file (the source skipped to the GTID without telling us where)
// and re-sending every transaction before the GTID.
TEST_F(TailStartTest, GtidStartSurvivesAKillBeforeTheFirstTransaction) {
  for (int id = 1; id <= 5; ++id) Insert(id);
  BR_ASSERT_OK_AND_ASSIGN(SqlRows pos, sb_->Query("SELECT @@gtid_binlog_pos"));
  BR_ASSERT_OK_AND_ASSIGN(
      auto tail,
      BackgroundBinrelay::Start(TailArgs(*sb_, kUser, "s.t",
                                         {"--start", "gtid:" + pos[0][0].value_or(""),
                                          "--heartbeat", "1"}),
                                Env()));
  // Wait until the dump runs, then kill it before anything is delivered.
  int killed = 0;
  for (int i = 0; i < 300 && killed == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto rows = sb_->Query(
        "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND = 'Binlog Dump'");
    if (!rows.ok()) continue;
    for (const auto& r : *rows) killed += sb_->Execute(absl::StrCat("KILL ", *r[0])).ok();
  }
  ASSERT_GT(killed, 0) << "the dump thread never showed up";
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // let it reconnect
  Insert(6);
  ASSERT_GE(tail->WaitForStdoutLines(1, seconds(30)), 1u) << tail->StderrSoFar();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // room for a wrong extra line
  tail->Signal(SIGTERM);
  ProcessResult r = tail->Wait(seconds(30));
  BR_ASSERT_OK_AND_ASSIGN(std::vector<JsonValue> lines, ParseJsonLines(r.out));
  ASSERT_EQ(lines.size(), 1u) << r.out << r.Describe();
  EXPECT_EQ(lines[0].Find("after")->Find("id")->text, "6");
}

// Guards: rows in older binlog files being missed when starting at the first
// file, and ROTATEs between files losing or repeating events.
TEST_F(TailStartTest, EarliestReadsEveryFileAcrossRotations) {
  Insert(1);
  BR_ASSERT_OK(sb_->Execute("FLUSH BINARY LOGS"));
  Insert(2);
  BR_ASSERT_OK(sb_->Execute("FLUSH BINARY LOGS"));
  Insert(3);
  std::set<std::string> files;
  EXPECT_EQ(TailIds({"--start", "earliest"}, &files), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(files.size(), 3u);
}

// Guards: --start current --until-end hanging or printing old rows.
TEST_F(TailStartTest, CurrentWithUntilEndPrintsNothingAndExits) {
  Insert(1);
  EXPECT_TRUE(TailIds({"--start", "current"}, nullptr).empty());
}

// Guards: stale column names after ALTER TABLE while following: the schema
// cache must be refreshed by the DDL event, not keep the old names.
TEST_F(TailStartTest, ColumnNamesFollowLiveAlterTable) {
  BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(*sb_));
  BR_ASSERT_OK_AND_ASSIGN(
      auto tail, BackgroundBinrelay::Start(TailArgs(*sb_, kUser, "s.t", {"--start", start}),
                                           Env()));
  Insert(1);
  ASSERT_GE(tail->WaitForStdoutLines(1, seconds(30)), 1u) << tail->StderrSoFar();
  BR_ASSERT_OK(sb_->Execute("ALTER TABLE s.t ADD COLUMN added INT UNSIGNED NOT NULL DEFAULT 7"));
  BR_ASSERT_OK(sb_->Execute("INSERT INTO s.t VALUES (2, 'v2', 4294967295)"));
  ASSERT_GE(tail->WaitForStdoutLines(2, seconds(30)), 2u) << tail->StderrSoFar();
  tail->Signal(SIGTERM);
  ProcessResult r = tail->Wait(seconds(30));
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  BR_ASSERT_OK_AND_ASSIGN(std::vector<JsonValue> lines, ParseJsonLines(r.out));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].Find("after")->Find("added"), nullptr);
  const JsonValue* added = lines[1].Find("after")->Find("added");
  ASSERT_NE(added, nullptr) << r.out;
  EXPECT_EQ(added->text, "4294967295");  // unsigned, from the refreshed schema
}

}  // namespace
}  // namespace binrelay::testing
