// MovePreflight and CreateTargetTable between two real MariaDB 10.11
// servers: every problem named at once with its fix, absent target tables
// created identical to the source's.
#include "apply/move_session.h"
#include "apply/move_preflight.h"
#include "apply/secondary_indexes.h"

#include <gtest/gtest.h>


#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "apply/table_shape.h"
#include "replication/connection_sql_source.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/shared_sandbox.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::apply {
namespace {

using testing::ServerSandbox;

constexpr char kUser[] = "mover";
constexpr char kPassword[] = "mover-pw";

class MovePreflightTest : public testing::SourceTargetSandboxTest<MovePreflightTest> {
 public:
  static constexpr testing::SandboxAccount kAccount{kUser, kPassword};
};

// Guards: a move starting on a table it cannot copy in ranges (no primary
// key, a FLOAT key), one missing on the source, or over a target table
// that holds rows or differs (the copy's INSERT IGNORE would keep the
// target's rows); and problems reported one per run instead of together.
TEST_F(MovePreflightTest, EveryProblemIsNamedAtOnceWithItsFix) {
  BR_ASSERT_OK(source_->Execute("CREATE DATABASE mp"));
  BR_ASSERT_OK(source_->Execute("CREATE TABLE mp.nokey (v INT)"));
  BR_ASSERT_OK(source_->Execute("CREATE TABLE mp.fkey (f FLOAT PRIMARY KEY)"));
  BR_ASSERT_OK(source_->Execute("CREATE TABLE mp.full (id INT PRIMARY KEY, v INT)"));
  BR_ASSERT_OK(source_->Execute("CREATE TABLE mp.other (id INT PRIMARY KEY, v INT)"));
  BR_ASSERT_OK(target_->Execute("CREATE DATABASE mp"));
  BR_ASSERT_OK(target_->Execute("CREATE TABLE mp.full (id INT PRIMARY KEY, v INT)"));
  BR_ASSERT_OK(target_->Execute("INSERT INTO mp.full VALUES (1, 1)"));
  BR_ASSERT_OK(target_->Execute("CREATE TABLE mp.other (id INT PRIMARY KEY, v BIGINT)"));
  replication::ConnectionSqlSource src(apply::InMoveSession(source_->ClientOptions(kUser, kPassword)));
  replication::ConnectionSqlSource dst(apply::InMoveSession(target_->ClientOptions(kUser, kPassword)));
  auto plan = MovePreflight(src, dst,
                            {{"mp", "nokey", "mp"},
                             {"mp", "fkey", "mp"},
                             {"mp", "missing", "mp"},
                             {"mp", "full", "mp"},
                             {"mp", "other", "mp"}});
  ASSERT_FALSE(plan.ok());
  const std::string m(plan.status().message());
  for (const char* want :
       {"mp.nokey has no primary key", "ADD PRIMARY KEY", "`f` is float", "mp.missing does not exist",
        "mp.full already holds rows; a move copies into an empty table", "mp.other"}) {
    EXPECT_NE(m.find(want), std::string::npos) << "missing '" << want << "' in: " << m;
  }
}

// Guards: a target table created unlike the source's (a different
// database, lost indexes or character sets), and a foreign key to a table
// the target lacks failing the creation.
TEST_F(MovePreflightTest, AbsentTargetTablesAreCreatedIdentical) {
  BR_ASSERT_OK(source_->Execute("CREATE DATABASE mc CHARACTER SET latin1"));
  BR_ASSERT_OK(source_->Execute("CREATE TABLE mc.parent (id INT PRIMARY KEY)"));
  BR_ASSERT_OK(source_->Execute(
      "CREATE TABLE mc.t (id BIGINT UNSIGNED PRIMARY KEY, name VARCHAR(20) CHARACTER SET utf8mb4 "
      "COLLATE utf8mb4_bin, p INT, UNIQUE KEY (name), KEY (p), "
      "FOREIGN KEY (p) REFERENCES mc.parent (id)) ENGINE=InnoDB"));
  replication::ConnectionSqlSource src(apply::InMoveSession(source_->ClientOptions(kUser, kPassword)));
  replication::ConnectionSqlSource dst(apply::InMoveSession(target_->ClientOptions(kUser, kPassword)));
  const MoveTableName name{"mc", "t", "mc_moved"};
  auto plan = MovePreflight(src, dst, {name});
  BR_ASSERT_OK(plan.status());
  ASSERT_EQ(plan->tables.size(), 1u);
  EXPECT_TRUE(plan->tables[0].create_on_target);
  // Deferring indexes changes nothing here: the table has a foreign key.
  BR_ASSERT_OK(CreateTargetTable(src, dst, name, /*defer_indexes=*/true));
  auto from = LoadTableShape(src, "mc", "t");
  auto to = LoadTableShape(dst, "mc_moved", "t");
  BR_ASSERT_OK(from.status());
  BR_ASSERT_OK(to.status());
  BR_EXPECT_OK(CheckTargetShape(*from, *to, "created table"));
  EXPECT_EQ(to->unique_keys.size(), 1u);
  // Now present, empty and identical: accepted, not created again.
  auto again = MovePreflight(src, dst, {name});
  BR_ASSERT_OK(again.status());
  EXPECT_FALSE(again->tables[0].create_on_target);
}

// Guards: plain secondary indexes created with the table when the move
// builds them after the copy, a UNIQUE key deferred with them (the copy
// would then accept duplicates), and the indexes added later differing
// from the source's (the final table must be the source's, index for
// index).
TEST_F(MovePreflightTest, PlainIndexesAreAddedAfterTheCopyAndTheTableEndsIdentical) {
  BR_ASSERT_OK(source_->Execute("CREATE DATABASE mi"));
  BR_ASSERT_OK(source_->Execute(
      "CREATE TABLE mi.t (id INT PRIMARY KEY, a INT, b VARCHAR(20), c INT, UNIQUE KEY ua (a), "
      "KEY `b x` (b(10), c) COMMENT 'two\nlines', KEY c (c) USING BTREE) ENGINE=InnoDB"));
  BR_ASSERT_OK(source_->Execute("INSERT INTO mi.t VALUES (1, 1, 'x', 1), (2, 2, 'y', 1)"));
  replication::ConnectionSqlSource src(apply::InMoveSession(source_->ClientOptions(kUser, kPassword)));
  replication::ConnectionSqlSource dst(apply::InMoveSession(target_->ClientOptions(kUser, kPassword)));
  const MoveTableName name{"mi", "t", "mi"};
  BR_ASSERT_OK(CreateTargetTable(src, dst, name, /*defer_indexes=*/true));
  auto keys = [](ServerSandbox* s) {
    auto rows = s->Query("SELECT GROUP_CONCAT(DISTINCT INDEX_NAME ORDER BY INDEX_NAME) FROM "
                         "information_schema.STATISTICS WHERE TABLE_SCHEMA = 'mi'");
    return rows.ok() && !rows->empty() ? (*rows)[0][0].value_or("") : std::string("?");
  };
  EXPECT_EQ(keys(target_), "PRIMARY,ua");
  BR_ASSERT_OK(target_->Execute("INSERT INTO mi.t VALUES (1, 1, 'x', 1), (2, 2, 'y', 1)"));
  auto ddl = ShowCreateTable(src, "mi", "t");
  BR_ASSERT_OK(ddl.status());
  auto added = AddMissingIndexes(dst, "`mi`.`t`", DeferrableIndexes(*ddl));
  BR_ASSERT_OK(added.status());
  EXPECT_EQ(added->size(), 2u);
  auto again = AddMissingIndexes(dst, "`mi`.`t`", DeferrableIndexes(*ddl));
  BR_ASSERT_OK(again.status());
  EXPECT_TRUE(again->empty()) << "a resumed move must not add them twice";
  auto final_ddl = ShowCreateTable(dst, "mi", "t");
  BR_ASSERT_OK(final_ddl.status());
  EXPECT_EQ(*final_ddl, *ddl);
}

// Guards: MySQL building a deferred index in its 1 MiB default sort buffer
// (innodb_ddl_buffer_size, MySQL 8.0.27+): the builder's session must hold
// kIndexSortBytes when it adds the index. On MariaDB, which has no such
// variable, the test above shows the build still succeeds.
TEST(MovePreflightOnMySqlTest, DeferredIndexesAreSortedInALargerBufferOnMySql) {
  BINRELAY_REQUIRE_FLAVOUR("mysql-9.7");
  testing::ServerSandboxOptions o;
  o.flavour = "mysql-9.7";
  BR_ASSERT_OK_AND_ASSIGN(std::unique_ptr<ServerSandbox> server, ServerSandbox::Start(o));
  BR_ASSERT_OK(server->CreateUser(kUser, kPassword, MovePreflightTest::kAccount.grants));
  BR_ASSERT_OK(server->Execute("CREATE DATABASE ms"));
  BR_ASSERT_OK(server->Execute("CREATE TABLE ms.t (id INT PRIMARY KEY, k INT)"));
  BR_ASSERT_OK(server->Execute("INSERT INTO ms.t VALUES (1, 2), (2, 1)"));
  replication::ConnectionSqlSource dst(apply::InMoveSession(server->ClientOptions(kUser, kPassword)));
  auto buffer = [&] {
    auto rows = dst.Query("SELECT @@SESSION.innodb_ddl_buffer_size");
    return rows.ok() && !rows->empty() ? (*rows)[0][0].value_or("") : std::string("?");
  };
  EXPECT_EQ(buffer(), "1048576");  // the server's default, before
  auto added = AddMissingIndexes(dst, "`ms`.`t`", {{"k", "KEY `k` (`k`)"}});
  BR_ASSERT_OK(added.status());
  EXPECT_EQ(*added, std::vector<std::string>{"k"});
  EXPECT_EQ(buffer(), absl::StrCat(kIndexSortBytes));
}

// Guards: the retention warning missing when the source would purge
// binlogs before the move is done (or shown as an error).
TEST_F(MovePreflightTest, ShortSourceRetentionIsAWarningNotAnError) {
  BR_ASSERT_OK(source_->Execute("CREATE DATABASE mr"));
  BR_ASSERT_OK(source_->Execute("CREATE TABLE mr.t (id INT PRIMARY KEY, v VARCHAR(100))"));
  BR_ASSERT_OK(source_->Execute(
      "INSERT INTO mr.t SELECT seq, REPEAT('x', 100) FROM mr.seq_1_to_20000"));
  BR_ASSERT_OK(source_->Execute("ANALYZE TABLE mr.t"));
  BR_ASSERT_OK(source_->Execute("SET GLOBAL binlog_expire_logs_seconds = 60"));
  replication::ConnectionSqlSource src(apply::InMoveSession(source_->ClientOptions(kUser, kPassword)));
  replication::ConnectionSqlSource dst(apply::InMoveSession(target_->ClientOptions(kUser, kPassword)));
  // 1 byte per second: the estimate far exceeds a minute.
  auto plan = MovePreflight(src, dst, {{"mr", "t", "mr"}}, 1);
  BR_ASSERT_OK(source_->Execute("SET GLOBAL binlog_expire_logs_seconds = 0"));
  BR_ASSERT_OK(plan.status());
  ASSERT_EQ(plan->warnings.size(), 1u);
  EXPECT_NE(plan->warnings[0].find("keeps binlogs for 60 seconds"), std::string::npos)
      << plan->warnings[0];
  auto relaxed = MovePreflight(src, dst, {{"mr", "t", "mr"}});
  BR_ASSERT_OK(relaxed.status());
  EXPECT_TRUE(relaxed->warnings.empty()) << "no retention configured: nothing to warn about";
}


// Guards: a move starting with a store that cannot hold the binlog the
// source writes while it runs (it would fill the disk mid-copy), a small
// move on a lightly written source reported as a problem, and a rate that
// does not follow the source's writes.
TEST_F(MovePreflightTest, StoreTooSmallForTheSourcesWriteRateIsAProblem) {
  BR_ASSERT_OK(source_->Execute("CREATE DATABASE ms"));
  BR_ASSERT_OK(source_->Execute("CREATE TABLE ms.t (id INT PRIMARY KEY, v TEXT)"));
  replication::ConnectionSqlSource src(apply::InMoveSession(source_->ClientOptions(kUser, kPassword)));
  const std::string dir = ::testing::TempDir();
  // A 1 GiB move (about three minutes at 20 MiB/s) fits beside what this
  // test server writes.
  uint64_t quiet_rate = 0;
  BR_ASSERT_OK_AND_ASSIGN(auto quiet, StoreSpaceProblem(src, dir, uint64_t{1} << 30, 20 << 20,
                                                        absl::Milliseconds(500), &quiet_rate));
  EXPECT_FALSE(quiet.has_value()) << *quiet;
  // 8 MiB of binlog written: the source's rate (its average since it
  // started) grows, and a move estimated at years needs more than any disk.
  for (int i = 0; i < 4; ++i) {
    BR_ASSERT_OK(source_->Execute(absl::StrCat(
        "REPLACE INTO ms.t SELECT seq, REPEAT('x', 2000) FROM ms.seq_", 1000 * i + 1, "_to_",
        1000 * (i + 1))));
  }
  uint64_t rate = 0;
  auto busy = StoreSpaceProblem(src, dir, uint64_t{1} << 50, 20 << 20, absl::Seconds(1), &rate);
  BR_ASSERT_OK(busy.status());
  EXPECT_GT(rate, quiet_rate);
  ASSERT_TRUE(busy->has_value());
  EXPECT_TRUE(absl::StrContains(**busy, "MiB free")) << **busy;
  EXPECT_TRUE(absl::StrContains(**busy, dir)) << **busy;
  EXPECT_TRUE(absl::StrContains(**busy, "average since it started and its rate now")) << **busy;
}

}  // namespace
}  // namespace binrelay::apply
