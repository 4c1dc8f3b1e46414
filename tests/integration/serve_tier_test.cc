// A binrelay is a valid source for another binrelay (how binrelay
// scales out: a relay of a relay fans a primary's stream out to more
// consumers). Source → binrelay A → binrelay B: B's preflight, variable
// reads, registration and dump are all answered by A; a MariaDB replica of B
// converges (CHECKSUM TABLE); B's closed files are byte-identical to the
// source's; and `binrelay tail` against B gives the same rows as against
// the source (its column lookups in information_schema are forwarded by B
// to A and by A to the source).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"
#include "tests/harness/binrelay_process.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/replica_fixture.h"
#include "tests/harness/serve_fixture.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/workload.h"

namespace binrelay::testing {
namespace {

using std::chrono::seconds;
using Mode = ReplicaOptions::Mode;

// Guards: binrelay following binrelay stopping at its preflight (A answered
// SHOW GRANTS with 1235), and a tier that changes a byte of the stream.
TEST(ServeTierTest, RelayOfARelayServesReplicasAndTailAsTheSourceDoes) {
  // FULL row metadata: tail then reads column names from the binlog, so it
  // can decode rows written before the workload's ALTERs.
  BR_ASSERT_OK_AND_ASSIGN(auto source, StartServeSource({"--binlog-row-metadata=FULL"}));
  BR_ASSERT_OK_AND_ASSIGN(auto a, ServeProcess::Create(*source));
  BR_ASSERT_OK(a->Start());
  ServeOptions second;
  second.overrides = {absl::StrCat("--source.port=", a->listen_port()),
                      absl::StrCat("--source.user=", kReplUser),
                      "--source.server_id=4002"};
  second.source_password = kReplPassword;
  BR_ASSERT_OK_AND_ASSIGN(auto b, ServeProcess::Create(*source, second));
  BR_ASSERT_OK(b->Start()) << b->StderrTail();

  MixedWorkloadOptions w;
  w.rows = 500;
  w.large_transaction_rows = 5000;
  w.big_row_bytes = 1 << 20;
  w.rotate_between_phases = true;
  BR_ASSERT_OK(RunMixedWorkload(*source, "tier", w));
  BR_ASSERT_OK(source->Execute("FLUSH BINARY LOGS"));
  BR_ASSERT_OK(WaitStoreReached(*b, *source, std::chrono::seconds(120)).status())
      << b->StderrTail();

  // A replica of B converges.
  BR_ASSERT_OK_AND_ASSIGN(
      auto replica, StartReplicaOf({b->listen_port(), kReplUser, kReplPassword},
                                   {.server_id = 31, .mode = Mode::kGtidSlavePos}));
  BR_ASSERT_OK_AND_ASSIGN(std::string gtid, GtidBinlogPos(*source));
  BR_EXPECT_OK(WaitReplicaCaughtUp(*replica, gtid, seconds(120))) << b->StderrTail();
  EXPECT_TRUE(SameChecksums(*source, *replica, {"tier"}));

  // B's closed files are the source's, byte for byte.
  BR_ASSERT_OK_AND_ASSIGN(std::vector<std::string> files, SourceBinlogFiles(*source));
  ASSERT_GE(files.size(), 3u);
  for (size_t i = 0; i + 1 < files.size(); ++i) {
    BR_EXPECT_OK(CompareBinlogCopy(source->DataDir() + "/" + files[i],
                                   b->store_dir() + "/" + files[i], CopyCompare::kExact))
        << files[i];
  }

  // tail against B gives the source's rows, positions included.
  const std::vector<std::string> extra = {"--start", absl::StrCat(files.front(), ":4"),
                                          "--until-end"};
  BR_ASSERT_OK_AND_ASSIGN(
      ProcessResult direct,
      RunBinrelay(TailArgs(*source, kRelayUser, "tier.*", extra),
                  {{"BINRELAY_SOURCE_PASSWORD", kRelayPassword}}, std::chrono::seconds(120)));
  ASSERT_EQ(direct.exit_code, 0) << direct.Describe();
  std::vector<std::string> via_b_args = {"tail", "--source",
                                         absl::StrCat("127.0.0.1:", b->listen_port()), "--user",
                                         kReplUser, "--tables", "tier.*", "--server-id", "4003"};
  via_b_args.insert(via_b_args.end(), extra.begin(), extra.end());
  BR_ASSERT_OK_AND_ASSIGN(ProcessResult via_b,
                          RunBinrelay(via_b_args, {{"BINRELAY_SOURCE_PASSWORD", kReplPassword}},
                                      std::chrono::seconds(120)));
  ASSERT_EQ(via_b.exit_code, 0) << via_b.Describe() << "\n" << b->StderrTail();
  EXPECT_GT(direct.OutLines().size(), 1000u);
  EXPECT_EQ(via_b.out, direct.out);
}

}  // namespace
}  // namespace binrelay::testing
