#include "replication/transaction_boundary.h"

#include <gtest/gtest.h>

#include "protocol/event_type.h"
#include "replication/binlog_file_source.h"
#include "replication/stream_consumer.h"
#include "tests/harness/fixtures.h"

namespace binrelay::replication {
namespace {

// Counts transaction ends as a source reports them, and checks the resume
// point never falls inside a GTID group.
class BoundaryChecker : public StreamConsumer {
 public:
  int gtids = 0;
  int ends = 0;
  int restarts = 0;
  bool expect_end_before_next_gtid = false;
  absl::Status OnEvent(const StreamEvent& e) override {
    uint8_t t = e.event.type();
    if (t == protocol::kGtidEvent || t == protocol::kAnonymousGtidEvent ||
        t == protocol::kMariaGtidEvent) {
      // The previous group must have ended before a new one starts.
      EXPECT_FALSE(expect_end_before_next_gtid) << "GTID at " << e.end.ToString()
                                                << " while the previous group is open";
      ++gtids;
      expect_end_before_next_gtid = true;
      EXPECT_FALSE(e.ends_transaction);
    }
    if (e.ends_transaction) {
      ++ends;
      expect_end_before_next_gtid = false;
    }
    return absl::OkStatus();
  }
  void OnStreamRestart(const BinlogPosition&) override { ++restarts; }
};

struct Case {
  const char* file;
  int transactions;  // GTID groups in the file, from the fixture's INDEX entry
};

// Guards the resume point: each GTID group (XID-terminated DML, DDL, MariaDB
// standalone) ends exactly once, so a reconnect never re-sends or skips one.
TEST(TransactionBoundaryTest, EveryGtidGroupEndsExactlyOnce) {
  BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/8.0__32_delete_rows_v2__binlog.000001",
                           "mysql-cdc-rs/5.7__14_user_var__log.bin",
                           "percona-binlog-server/data_80045_gtid__binlog.000001",
                           "zongji/binlog-mariadb118.events.binlog",
                           "mysql-binlog-connector-rust/mysql-bin.000057");
  for (const Case& c : {Case{"mysql-cdc-rs/8.0__32_delete_rows_v2__binlog.000001", 5},
                        Case{"mysql-cdc-rs/5.7__14_user_var__log.bin", 3},
                        Case{"percona-binlog-server/data_80045_gtid__binlog.000001", 4},
                        Case{"zongji/binlog-mariadb118.events.binlog", 11},
                        Case{"mysql-binlog-connector-rust/mysql-bin.000057", 3}}) {
    BoundaryChecker checker;
    absl::Status s = FeedBinlogFile(binrelay::testing::FixturePath(c.file), checker);
    ASSERT_TRUE(s.ok()) << c.file << ": " << s;
    EXPECT_EQ(checker.gtids, c.transactions) << c.file;
    EXPECT_EQ(checker.ends, c.transactions) << c.file;
    EXPECT_EQ(checker.restarts, 0) << c.file;
  }
}

// Without GTIDs (MySQL 5.5), BEGIN..XID delimits transactions.
TEST(TransactionBoundaryTest, BeginXidTransactionsWithoutGtids) {
  BINRELAY_REQUIRE_FIXTURE("mysql-binlog-connector-java/mysql-bin.sakila.gz");
  BoundaryChecker checker;
  ASSERT_TRUE(FeedBinlogFile(
      binrelay::testing::FixturePath("mysql-binlog-connector-java/mysql-bin.sakila.gz"), checker)
                  .ok());
  EXPECT_EQ(checker.gtids, 0);
  // 15 XIDs plus the standalone statements (CREATE, SET, ...): at least 15.
  EXPECT_GE(checker.ends, 15);
}

}  // namespace
}  // namespace binrelay::replication
