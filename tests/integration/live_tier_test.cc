// Tiers and mixed releases, live: a binrelay following a binrelay on every
// release (B logs in to A as MySQL clients log in to mysqld on a MySQL
// source), and the upgrade path, a MariaDB 11.8 replica following a MariaDB
// 10.11 source through binrelay (replicas newer than their source).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/harness/binrelay_process.h"
#include "tests/harness/replica_fixture.h"
#include "tests/harness/serve_fixture.h"
#include "tests/harness/server_flavour.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/workload.h"

namespace binrelay::testing {
namespace {

using std::chrono::seconds;
using Mode = ReplicaOptions::Mode;

class LiveTierTest : public ::testing::TestWithParam<std::string> {};

// Guards: a second tier that cannot log in to the first (caching_sha2 on a
// MySQL source), that changes a byte of the stream, or whose replica (of
// the same release) diverges.
TEST_P(LiveTierTest, RelayOfARelayKeepsTheSourcesFilesAndServesItsReplica) {
  BINRELAY_REQUIRE_FLAVOUR(GetParam());
  BR_ASSERT_OK_AND_ASSIGN(auto source, StartServeSource({}, GetParam()));
  BR_ASSERT_OK_AND_ASSIGN(auto a, ServeProcess::Create(*source));
  BR_ASSERT_OK(a->Start());
  ServeOptions second;
  second.overrides = {absl::StrCat("--source.port=", a->listen_port()),
                      absl::StrCat("--source.user=", kReplUser), "--source.server_id=4002"};
  second.source_password = kReplPassword;
  BR_ASSERT_OK_AND_ASSIGN(auto b, ServeProcess::Create(*source, second));
  BR_ASSERT_OK(b->Start()) << b->StderrTail();

  const MixedWorkloadOptions w = CompactMix(300);
  BR_ASSERT_OK(RunMixedWorkload(*source, "tier", w));
  BR_ASSERT_OK(source->Execute("FLUSH BINARY LOGS"));
  BR_ASSERT_OK(WaitStoreReached(*b, *source, seconds(120)).status()) << b->StderrTail();

  ReplicaOptions r;
  r.flavour = GetParam();
  r.server_id = 31;
  r.mode = Mode::kGtidSlavePos;
  r.tls = ReplicaOptions::Tls::kOn;
  BR_ASSERT_OK_AND_ASSIGN(auto replica,
                          StartReplicaOf({b->listen_port(), kReplUser, kReplPassword}, r));
  BR_EXPECT_OK(WaitReplicaExecuted(*replica, *source, seconds(120))) << b->StderrTail();
  EXPECT_TRUE(SameChecksums(*source, *replica, {"tier"}));

  BR_ASSERT_OK_AND_ASSIGN(std::vector<std::string> files, SourceBinlogFiles(*source));
  ASSERT_GE(files.size(), 4u);
  for (size_t i = 0; i + 1 < files.size(); ++i) {
    BR_EXPECT_OK(CompareBinlogCopy(source->DataDir() + "/" + files[i],
                                   b->store_dir() + "/" + files[i], CopyCompare::kExact))
        << files[i];
  }
}

INSTANTIATE_TEST_SUITE_P(Flavours, LiveTierTest, ::testing::ValuesIn(ServerFlavour::All()),
                         FlavourTestName<::testing::TestParamInfo<std::string>>);

// Guards the upgrade path users take: replicas are upgraded before their
// primary, so a MariaDB 11.8 replica reads a 10.11 primary's stream; through
// binrelay (by GTID and by position) it must converge as it does directly.
TEST(LiveMixedReleasesTest, MariaDb118ReplicaFollowsA1011SourceThroughBinrelay) {
  BINRELAY_REQUIRE_FLAVOUR("mariadb-11.8");
  BR_ASSERT_OK_AND_ASSIGN(auto source, StartServeSource({}, "mariadb-10.11"));
  BR_ASSERT_OK_AND_ASSIGN(auto serve, ServeProcess::Create(*source));
  BR_ASSERT_OK(serve->Start());
  const MixedWorkloadOptions w = CompactMix(300);
  BR_ASSERT_OK(RunMixedWorkload(*source, "up", w));

  ReplicaOptions by_gtid;
  by_gtid.flavour = "mariadb-11.8";
  by_gtid.server_id = 41;
  by_gtid.mode = Mode::kGtidSlavePos;
  by_gtid.tls = ReplicaOptions::Tls::kReleaseDefault;
  ReplicaOptions by_position = by_gtid;
  by_position.server_id = 42;
  by_position.mode = Mode::kFilePosition;
  const MasterEndpoint relay = ReplicaEndpoint(*serve, *source);
  BR_ASSERT_OK_AND_ASSIGN(auto r1, StartReplicaOf(relay, by_gtid));
  BR_ASSERT_OK_AND_ASSIGN(auto r2, StartReplicaOf(relay, by_position));
  BR_ASSERT_OK(source->Execute("UPDATE up.items SET qty = qty - 1 WHERE id % 5 = 0"));
  for (ServerSandbox* r : {r1.get(), r2.get()}) {
    BR_EXPECT_OK(WaitReplicaExecuted(*r, *source, seconds(120))) << serve->StderrTail();
    EXPECT_TRUE(SameChecksums(*source, *r, {"up"}));
  }
}

}  // namespace
}  // namespace binrelay::testing
