// binrelay as a semi-synchronous replica ([source] semi_sync = on): a
// MariaDB source with rpl_semi_sync_master_wait_point = AFTER_SYNC and
// binrelay as its only semi-sync replica must get an ACK for every
// transaction (yes_tx grows, no_tx stays 0), each only once the
// transaction is in binrelay's store; without binrelay it falls back after
// its timeout, and recovers when binrelay returns.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/serve_fixture.h"
#include "tests/harness/sql_conn.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

TEST(SemiSyncTest, BinrelayAcksStoredTransactionsAndTheSourceFallsBackWithoutIt) {
  BR_ASSERT_OK_AND_ASSIGN(
      auto source, StartServeSource({"--rpl-semi-sync-master-enabled=ON",
                                     "--rpl-semi-sync-master-wait-point=AFTER_SYNC",
                                     // A source starts semi-synchronous with no replica:
                                     // its first commit waits out the timeout, then it
                                     // falls back until binrelay connects.
                                     "--rpl-semi-sync-master-timeout=500"}));
  BR_ASSERT_OK(source->Execute("CREATE DATABASE semi"));
  BR_ASSERT_OK(source->Execute("CREATE TABLE semi.t (id INT PRIMARY KEY, v VARCHAR(100))"));
  ServeOptions o;
  o.overrides = {"--source.semi_sync=on"};
  BR_ASSERT_OK_AND_ASSIGN(auto serve, ServeProcess::Create(*source, o));
  BR_ASSERT_OK(serve->Start());
  ASSERT_TRUE(WaitGlobalStatus(*source, "Rpl_semi_sync_master_clients", 1, seconds(30)))
      << serve->StderrTail();
  ASSERT_TRUE(WaitGlobalStatus(*source, "Rpl_semi_sync_master_status", 1, seconds(30)))
      << serve->StderrTail();
  // 60 s while binrelay runs, so a slow ACK (a sanitizer build, a busy
  // disk) is not a fallback; 3 s for the kill below.
  BR_ASSERT_OK(source->Execute("SET GLOBAL rpl_semi_sync_master_timeout = 60000"));

  BR_ASSERT_OK_AND_ASSIGN(auto conn, SqlConn::Open(*source));
  const int64_t yes0 = GlobalStatus(*source, "Rpl_semi_sync_master_yes_tx");
  const int64_t no0 = GlobalStatus(*source, "Rpl_semi_sync_master_no_tx");
  for (int id = 1; id <= 200; ++id) {
    BR_ASSERT_OK(conn->Exec(absl::StrCat("INSERT INTO semi.t VALUES (", id, ", 'acked')")));
    if (id % 50 == 0) {
      // Committed means stored: the store's copy already reaches the
      // source's end, with no waiting.
      auto end = source->Query("SHOW MASTER STATUS");
      ASSERT_TRUE(end.ok() && !end->empty());
      struct stat st {};
      ASSERT_EQ(::stat((serve->store_dir() + "/" + *(*end)[0][0]).c_str(), &st), 0);
      EXPECT_GE(static_cast<uint64_t>(st.st_size), std::stoull(*(*end)[0][1]))
          << "a transaction committed before binrelay stored it";
    }
  }
  EXPECT_GE(GlobalStatus(*source, "Rpl_semi_sync_master_yes_tx") - yes0, 200);
  EXPECT_EQ(GlobalStatus(*source, "Rpl_semi_sync_master_no_tx") - no0, 0);

  // Without its only semi-sync replica the source waits out its timeout,
  // then commits without an ACK.
  BR_ASSERT_OK(source->Execute("SET GLOBAL rpl_semi_sync_master_timeout = 3000"));
  serve->Kill();
  const auto t0 = Clock::now();
  BR_ASSERT_OK(conn->Exec("INSERT INTO semi.t VALUES (1000, 'no ack')"));
  EXPECT_GE(Clock::now() - t0, milliseconds(2500)) << "the source did not wait for an ACK";
  EXPECT_EQ(GlobalStatus(*source, "Rpl_semi_sync_master_no_tx") - no0, 1);
  EXPECT_EQ(GlobalStatus(*source, "Rpl_semi_sync_master_status"), 0);

  // binrelay returns: it catches up and the source is semi-synchronous again.
  BR_ASSERT_OK(serve->Start());
  BR_ASSERT_OK(WaitStoreReached(*serve, *source, seconds(60))) << serve->StderrTail();
  ASSERT_TRUE(WaitGlobalStatus(*source, "Rpl_semi_sync_master_clients", 1, seconds(30)));
  // The source switches back on only when an ACK reaches its latest commit
  // (try_switch_on in sql/semisync_master.cc); commits issued before that
  // keep moving the mark ahead of the ACKs and are not waited for.
  ASSERT_TRUE(WaitGlobalStatus(*source, "Rpl_semi_sync_master_status", 1, seconds(30)))
      << serve->StderrTail();
  BR_ASSERT_OK(source->Execute("SET GLOBAL rpl_semi_sync_master_timeout = 60000"));
  const int64_t yes1 = GlobalStatus(*source, "Rpl_semi_sync_master_yes_tx");
  for (int id = 1001; id <= 1050; ++id) {
    BR_ASSERT_OK(conn->Exec(absl::StrCat("INSERT INTO semi.t VALUES (", id, ", 'acked again')")));
  }
  EXPECT_EQ(GlobalStatus(*source, "Rpl_semi_sync_master_status"), 1);
  EXPECT_GE(GlobalStatus(*source, "Rpl_semi_sync_master_yes_tx") - yes1, 49);
  BR_ASSERT_OK(WaitStoreReached(*serve, *source, seconds(60)));
  BR_ASSERT_OK_AND_ASSIGN(std::vector<std::string> files, SourceBinlogFiles(*source));
  for (size_t i = 0; i + 1 < files.size(); ++i) {
    BR_EXPECT_OK(CompareBinlogCopy(source->DataDir() + "/" + files[i],
                                   serve->store_dir() + "/" + files[i], CopyCompare::kExact));
  }
  BR_EXPECT_OK(CompareBinlogCopy(source->DataDir() + "/" + files.back(),
                                 serve->store_dir() + "/" + files.back(), CopyCompare::kPrefix));
  BR_EXPECT_OK(serve->Stop());
}

}  // namespace
}  // namespace binrelay::testing
