// FindSwitchPoint against real servers of every release: the file of a
// server's binlog a store continues from, read through SHOW BINARY LOGS and
// SHOW BINLOG EVENTS as each release prints them.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>
#include <string>

#include "absl/strings/str_cat.h"
#include "replication/connection_sql_source.h"
#include "replication/switch_point.h"
#include "tests/harness/serve_fixture.h"
#include "tests/harness/server_flavour.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

// The server's whole GTID state, typed as the store keeps it.
absl::StatusOr<replication::SourceGtids> StateOf(ServerSandbox& sb) {
  const bool mysql = sb.Flavour().mysql;
  BR_ASSIGN_OR_RETURN(SqlRows rows, sb.Query(mysql ? "SELECT @@GLOBAL.gtid_executed"
                                                   : "SELECT @@GLOBAL.gtid_binlog_state"));
  std::string text = rows.at(0).at(0).value_or("");
  text.erase(std::remove(text.begin(), text.end(), '\n'), text.end());
  return replication::SourceGtids::Parse(
      mysql ? replication::GtidFlavour::kMysql : replication::GtidFlavour::kMariaDb, text);
}

// Guards: a switch continuing in a file that opens after the store's end
// (transactions lost between) or misreading a release's Gtid_list /
// Previous_gtids text (a refused switch, or the wrong file).
class SwitchPointLiveTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SwitchPointLiveTest, ContinuesInTheNewestFileTheStoreHasPassed) {
  BINRELAY_REQUIRE_FLAVOUR(GetParam());
  BR_ASSERT_OK_AND_ASSIGN(auto server, StartServeSource({}, GetParam()));
  BR_ASSERT_OK(server->Execute("CREATE DATABASE app"));
  BR_ASSERT_OK(server->Execute("CREATE TABLE app.t (id INT PRIMARY KEY)"));
  BR_ASSERT_OK(server->Execute("INSERT INTO app.t VALUES (1)"));
  BR_ASSERT_OK_AND_ASSIGN(replication::SourceGtids first_part, StateOf(*server));
  BR_ASSERT_OK(server->Execute("FLUSH BINARY LOGS"));  // file 2 opens after (1)
  BR_ASSERT_OK(server->Execute("INSERT INTO app.t VALUES (2)"));
  BR_ASSERT_OK_AND_ASSIGN(replication::SourceGtids middle, StateOf(*server));
  BR_ASSERT_OK(server->Execute("INSERT INTO app.t VALUES (3)"));
  BR_ASSERT_OK_AND_ASSIGN(replication::SourceGtids second_part, StateOf(*server));
  BR_ASSERT_OK(server->Execute("FLUSH BINARY LOGS"));  // file 3 opens after (3)
  BR_ASSERT_OK(server->Execute("INSERT INTO app.t VALUES (4)"));
  BR_ASSERT_OK_AND_ASSIGN(std::vector<std::string> files, SourceBinlogFiles(*server));
  ASSERT_EQ(files.size(), 3u);

  replication::ConnectionSqlSource sql(server->ClientOptions(kRelayUser, kRelayPassword));
  // A store that ends inside file 2's transactions continues from file 2's
  // start; one that ends where file 2 ends, from file 3; one that ended
  // before file 2 opened, from file 1.
  BR_ASSERT_OK_AND_ASSIGN(replication::SwitchPoint p,
                          replication::FindSwitchPoint(sql, middle));
  EXPECT_EQ(p.file, files[1]);
  EXPECT_EQ(p.first_gtids, first_part);
  BR_ASSERT_OK_AND_ASSIGN(p, replication::FindSwitchPoint(sql, second_part));
  EXPECT_EQ(p.file, files[2]);
  EXPECT_EQ(p.first_gtids, second_part);
  BR_ASSERT_OK_AND_ASSIGN(replication::SourceGtids before_all,
                          replication::SourceGtids::Parse(first_part.flavour(), ""));
  BR_ASSERT_OK_AND_ASSIGN(p, replication::FindSwitchPoint(sql, before_all));
  EXPECT_EQ(p.file, files[0]);

  // Purged on the server: the store's end lies before its oldest file.
  // (MariaDB keeps a file until its binlog checkpoint has passed it, which
  // happens a moment after the rotation: purge until it is gone.)
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (true) {
    BR_ASSERT_OK(server->Execute(absl::StrCat("PURGE BINARY LOGS TO '", files[2], "'")));
    BR_ASSERT_OK_AND_ASSIGN(std::vector<std::string> left, SourceBinlogFiles(*server));
    if (left.front() == files[2]) break;
    ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "still holds " << left.front();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  auto purged = replication::FindSwitchPoint(sql, middle);
  EXPECT_TRUE(absl::IsNotFound(purged.status())) << purged.status();
}

INSTANTIATE_TEST_SUITE_P(Flavours, SwitchPointLiveTest, ::testing::ValuesIn(ServerFlavour::All()),
                         FlavourTestName<::testing::TestParamInfo<std::string>>);

}  // namespace
}  // namespace binrelay::testing
