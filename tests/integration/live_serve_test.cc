// `binrelay serve` live against every release users run: the store is the
// source's binlog byte for byte through rotations, SIGTERM and kill -9
// restarts while the source takes writes, and the source's PURGE.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/harness/json_lite.h"
#include "tests/harness/serve_fixture.h"
#include "tests/harness/server_flavour.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/workload.h"

namespace binrelay::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class LiveServeTest : public ::testing::TestWithParam<std::string> {};

// The source's closed binlog files (all but the last), by name.
std::map<std::string, std::string> ClosedFiles(ServerSandbox& source) {
  std::map<std::string, std::string> out;
  auto files = SourceBinlogFiles(source);
  EXPECT_TRUE(files.ok()) << files.status();
  if (!files.ok()) return out;
  for (size_t i = 0; i + 1 < files->size(); ++i) {
    out[(*files)[i]] = ReadWholeFile(source.DataDir() + "/" + (*files)[i]);
  }
  return out;
}

// Guards: a store that differs from the source by one byte anywhere, that
// repeats or loses a transaction across a SIGTERM or kill -9 restart, or that
// needs files the source has purged. Every release's binlog (MariaDB 11.4+'s
// end_log_pos 0, MySQL's compressed transactions) must be stored as it is.
TEST_P(LiveServeTest, StoreIsTheSourcesBinlogThroughRestartsKill9AndPurge) {
  BINRELAY_REQUIRE_FLAVOUR(GetParam());
  std::vector<std::string> args;
  // Compressed transactions are what MySQL users turn on; store them too.
  if (GetParam().rfind("mysql", 0) == 0) args.push_back("--binlog-transaction-compression=ON");
  BR_ASSERT_OK_AND_ASSIGN(auto source, StartServeSource(args, GetParam()));
  BR_ASSERT_OK_AND_ASSIGN(auto serve, ServeProcess::Create(*source));
  BR_ASSERT_OK(serve->Start());

  MixedWorkloadOptions mix;
  mix.rows = 400;
  mix.large_transaction_rows = 5000;
  mix.big_row_bytes = 2u << 20;
  mix.rotate_between_phases = true;
  BR_ASSERT_OK(RunMixedWorkload(*source, "mix", mix));

  // Restarts while the source commits: SIGTERM, then kill -9 twice.
  SteadyWorkloadOptions steady_options;
  steady_options.rotate_every = 40;
  BR_ASSERT_OK_AND_ASSIGN(auto steady, SteadyWorkload::Start(*source, "steady", steady_options));
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(milliseconds(700));
    if (round == 0) {
      BR_ASSERT_OK(serve->Stop()) << serve->StderrTail();
    } else {
      serve->Kill();
    }
    std::this_thread::sleep_for(milliseconds(300));
    BR_ASSERT_OK(serve->Start()) << serve->StderrTail();
  }
  std::this_thread::sleep_for(milliseconds(500));
  BR_ASSERT_OK(steady->Stop());
  ASSERT_GT(steady->transactions(), 20);
  BR_ASSERT_OK(source->Execute("FLUSH BINARY LOGS"));
  BR_ASSERT_OK_AND_ASSIGN(SourceEnd end, WaitStoreReached(*serve, *source, seconds(60)));

  // The source purges everything binrelay has: the store keeps it.
  std::map<std::string, std::string> closed = ClosedFiles(*source);
  ASSERT_GE(closed.size(), 5u);
  // MariaDB keeps a file until InnoDB has checkpointed its transactions
  // (its BINLOG_CHECKPOINT): purge until only the current file is left.
  std::vector<std::string> left;
  for (int i = 0; i < 100; ++i) {
    BR_ASSERT_OK(source->Execute(absl::StrCat("PURGE BINARY LOGS TO '", end.file, "'")));
    BR_ASSERT_OK_AND_ASSIGN(left, SourceBinlogFiles(*source));
    if (left.size() == 1) break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_EQ(left.size(), 1u) << "the source did not purge";
  // A restart after the purge resumes at its own end, needing nothing purged.
  serve->Kill();
  BR_ASSERT_OK(serve->Start());
  BR_ASSERT_OK(source->Execute("CREATE DATABASE after_purge"));
  BR_ASSERT_OK(source->Execute("CREATE TABLE after_purge.t (id INT PRIMARY KEY)"));
  BR_ASSERT_OK(source->Execute("INSERT INTO after_purge.t VALUES (1), (2)"));
  BR_ASSERT_OK_AND_ASSIGN(end, WaitStoreReached(*serve, *source, seconds(60)));

  for (const auto& [name, bytes] : closed) {
    BR_EXPECT_OK(CompareBinlogBytes(bytes, serve->store_dir() + "/" + name, name,
                                    CopyCompare::kExact));
  }
  BR_EXPECT_OK(CompareBinlogCopy(source->DataDir() + "/" + end.file,
                                 serve->store_dir() + "/" + end.file,
                                 CopyCompare::kPrefix));
  BR_ASSERT_OK_AND_ASSIGN(JsonValue status, StatusJson(serve->http_port()));
  ASSERT_NE(status.Find("upstream_state"), nullptr);
  EXPECT_EQ(status.Find("upstream_state")->text, "streaming") << serve->StderrTail();
  EXPECT_EQ(serve->starts(), 5);
}

INSTANTIATE_TEST_SUITE_P(Flavours, LiveServeTest, ::testing::ValuesIn(ServerFlavour::All()),
                         FlavourTestName<::testing::TestParamInfo<std::string>>);

}  // namespace
}  // namespace binrelay::testing
