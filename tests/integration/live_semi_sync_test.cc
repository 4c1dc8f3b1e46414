// Semi-synchronous replication with each release's own mechanism (MariaDB's
// built-in one, MySQL's rpl_semi_sync_source plugin), binrelay the only
// semi-sync replica: a commit returns on the source only once binrelay has
// the transaction in its store. Proven by kill -9 of binrelay right after
// commits return, and finding each of those transactions in the store.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/harness/binrelay_process.h"
#include "tests/harness/serve_fixture.h"
#include "tests/harness/server_flavour.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

class LiveSemiSyncTest : public ::testing::TestWithParam<std::string> {};

// Guards: an ACK sent before the transaction is in the store (a crash of
// binrelay then loses a commit the source reported done), or semi-sync not
// engaging at all on a release (MySQL's plugin names its switch
// rpl_semi_sync_source_enabled; binrelay looked only for the _master_ one
// and streamed without acknowledgements).
TEST_P(LiveSemiSyncTest, EveryCommitThatReturnedIsInTheStoreAfterKill9) {
  BINRELAY_REQUIRE_FLAVOUR(GetParam());
  const bool mysql = GetParam().rfind("mysql", 0) == 0;
  // Until binrelay is there, a short timeout (the source's setup commits
  // fall back at once); then 60 s: a commit returning before binrelay stored
  // it would need binrelay's ACK, not the timeout.
  const SemiSyncSource semi(mysql);
  const std::string& p = semi.prefix;
  BR_ASSERT_OK_AND_ASSIGN(auto source, StartServeSource(semi.server_args, GetParam()));
  BR_ASSERT_OK(source->Execute("CREATE DATABASE semi"));
  BR_ASSERT_OK(source->Execute("CREATE TABLE semi.t (id INT PRIMARY KEY, marker VARCHAR(64))"));
  ServeOptions o;
  o.overrides = {"--source.semi_sync=on"};
  BR_ASSERT_OK_AND_ASSIGN(auto serve, ServeProcess::Create(*source, o));
  BR_ASSERT_OK(serve->Start());
  const std::string& status = semi.status_prefix;
  ASSERT_TRUE(WaitGlobalStatus(*source, status + "_clients", 1, seconds(30)))
      << "binrelay did not register as a semi-sync replica: " << serve->StderrTail();
  ASSERT_TRUE(WaitGlobalStatus(*source, status + "_status", 1, seconds(30)));
  BR_ASSERT_OK(source->Execute(absl::StrCat("SET GLOBAL ", p, "_timeout = 60000")));
  const int64_t no_tx_before = GlobalStatus(*source, status + "_no_tx");

  for (int round = 1; round <= 4; ++round) {
    // A few commits, each returning only after binrelay's ACK; then kill -9
    // binrelay at once and read its store as it was left.
    for (int k = 1; k <= 5; ++k) {
      const int id = round * 100 + k;
      BR_ASSERT_OK(source->Execute(absl::StrCat("INSERT INTO semi.t VALUES (", id,
                                                ", 'acked-", id, "')")));
    }
    serve->Kill();
    BR_ASSERT_OK_AND_ASSIGN(std::vector<std::string> files, SourceBinlogFiles(*source));
    std::vector<std::string> args = {"tail", "--tables", "semi.t"};
    for (const std::string& f : files) {
      args.push_back("--file");
      args.push_back(serve->store_dir() + "/" + f);
    }
    BR_ASSERT_OK_AND_ASSIGN(ProcessResult r, RunBinrelay(args, {}, seconds(60)));
    for (int k = 1; k <= 5; ++k) {
      const std::string marker = absl::StrCat("\"acked-", round * 100 + k, "\"");
      EXPECT_TRUE(absl::StrContains(r.out, marker))
          << GetParam() << ": round " << round << ": committed row " << marker
          << " is not in binrelay's store after kill -9: " << r.Describe();
    }
    BR_ASSERT_OK(serve->Start());
    // Back as the semi-sync replica before the next round commits.
    ASSERT_TRUE(WaitGlobalStatus(*source, status + "_clients", 1, seconds(30)));
    ASSERT_TRUE(WaitGlobalStatus(*source, status + "_status", 1, seconds(60)))
        << serve->StderrTail();
  }
  // Every commit was acknowledged by binrelay (the source never fell back).
  EXPECT_EQ(GlobalStatus(*source, status + "_no_tx"), no_tx_before);
  EXPECT_GE(GlobalStatus(*source, status + "_yes_tx"), 20);
  // The source's shutdown would wait the full timeout for an ACK of its last
  // events once binrelay is gone.
  serve->Kill();
  BR_ASSERT_OK(source->Execute(absl::StrCat("SET GLOBAL ", p, "_timeout = 100")));
}

INSTANTIATE_TEST_SUITE_P(Flavours, LiveSemiSyncTest, ::testing::ValuesIn(ServerFlavour::All()),
                         FlavourTestName<::testing::TestParamInfo<std::string>>);

}  // namespace
}  // namespace binrelay::testing
