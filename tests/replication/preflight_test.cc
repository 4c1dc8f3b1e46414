#include "replication/preflight.h"

#include <gtest/gtest.h>

#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace binrelay::replication {
namespace {

// Answers statements from a table; unknown variables fail like the server
// does (error 1193).
class FakeSource : public SqlSource {
 public:
  std::map<std::string, std::vector<SqlRow>> answers;
  absl::StatusOr<std::vector<SqlRow>> Query(std::string_view sql) override {
    auto it = answers.find(std::string(sql));
    if (it != answers.end()) return it->second;
    if (absl::StartsWith(std::string(sql), "SELECT @@GLOBAL.")) {
      return absl::NotFoundError("server returned error 1193 (HY000): Unknown system variable");
    }
    return absl::NotFoundError(absl::StrCat("server returned error 1064 for ", std::string(sql)));
  }
  std::string Peer() const override { return "db1:3306"; }

  void Var(const std::string& name, const std::string& value) {
    answers["SELECT @@GLOBAL." + name] = {{value}};
  }
};

FakeSource GoodMariaDb() {
  FakeSource s;
  s.answers["SELECT VERSION()"] = {{"10.11.6-MariaDB-log"}};
  s.Var("server_id", "1");
  s.Var("log_bin", "1");
  s.Var("binlog_format", "ROW");
  s.Var("binlog_row_image", "FULL");
  s.Var("binlog_checksum", "CRC32");
  s.answers["SHOW GRANTS"] = {{"GRANT REPLICATION SLAVE ON *.* TO `br`@`%`"}};
  s.answers["SHOW SLAVE HOSTS"] = {{"7", "replica7", "3306", "1"}};
  return s;
}

TEST(PreflightTest, AcceptsWellConfiguredMariaDb) {
  FakeSource s = GoodMariaDb();
  auto info = RunPreflight(s, {.replica_server_id = 100});
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(info->is_mariadb);
  EXPECT_TRUE(info->checksum_crc32);
  EXPECT_TRUE(info->warnings.empty());
}

// The message must name the setting and the fix, not just "failed".
TEST(PreflightTest, StatementFormatIsRefusedWithTheFix) {
  FakeSource s = GoodMariaDb();
  s.Var("binlog_format", "MIXED");
  auto info = RunPreflight(s, {.replica_server_id = 100});
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(info.status().message(), "binlog_format=MIXED"));
  EXPECT_TRUE(absl::StrContains(info.status().message(), "db1:3306"));
}

TEST(PreflightTest, BinlogOffIsRefused) {
  FakeSource s = GoodMariaDb();
  s.Var("log_bin", "0");
  EXPECT_EQ(RunPreflight(s, {.replica_server_id = 100}).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(PreflightTest, MinimalImageWarnsForTailButFailsForApply) {
  FakeSource s = GoodMariaDb();
  s.Var("binlog_row_image", "MINIMAL");
  auto tail = RunPreflight(s, {.replica_server_id = 100});
  ASSERT_TRUE(tail.ok());
  ASSERT_EQ(tail->warnings.size(), 1u);
  auto apply = RunPreflight(s, {.replica_server_id = 100, .require_full_row_image = true});
  EXPECT_TRUE(absl::StrContains(apply.status().message(), "binlog_row_image=MINIMAL"));
}

// Two replicas with one server_id kick each other off the source forever.
TEST(PreflightTest, ServerIdUsedByAnotherReplicaIsRefused) {
  FakeSource s = GoodMariaDb();
  auto info = RunPreflight(s, {.replica_server_id = 7});
  ASSERT_FALSE(info.ok());
  EXPECT_TRUE(absl::StrContains(info.status().message(), "replica7"));
  EXPECT_FALSE(RunPreflight(s, {.replica_server_id = 1}).ok());  // the source's own id
}

// A binrelay restarted (or killed) before the source noticed the old dump
// must not refuse to start: the id is its own previous registration.
TEST(PreflightTest, ServerIdStillRegisteredByABinrelayIsAccepted) {
  FakeSource s = GoodMariaDb();
  for (auto& row : s.answers["SHOW SLAVE HOSTS"]) {
    if (row.size() >= 2 && row[0] == std::optional<std::string>("7")) row[1] = "binrelay";
  }
  EXPECT_TRUE(RunPreflight(s, {.replica_server_id = 7}).ok());
}

TEST(PreflightTest, MissingReplicationPrivilegeIsRefused) {
  FakeSource s = GoodMariaDb();
  s.answers["SHOW GRANTS"] = {{"GRANT SELECT ON *.* TO `br`@`%`"}};
  auto info = RunPreflight(s, {.replica_server_id = 100});
  ASSERT_FALSE(info.ok());
  EXPECT_TRUE(absl::StrContains(info.status().message(), "REPLICATION SLAVE"));
}

TEST(PreflightTest, MysqlPartialJsonAndCompressionAreReported) {
  FakeSource s = GoodMariaDb();
  s.answers["SELECT VERSION()"] = {{"8.0.36"}};
  s.Var("binlog_row_value_options", "PARTIAL_JSON");
  s.Var("binlog_transaction_compression", "ON");
  s.Var("gtid_mode", "ON");
  auto info = RunPreflight(s, {.replica_server_id = 100});
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_FALSE(info->is_mariadb);
  EXPECT_EQ(info->gtid_mode, "ON");
  EXPECT_EQ(info->warnings.size(), 2u);
}

}  // namespace
}  // namespace binrelay::replication
