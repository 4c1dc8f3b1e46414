// The fault lane: a TCP fault proxy (tests/harness/fault_proxy.h: resets,
// half-closes, drops, stalls and delays at random byte offsets) on every
// hop binrelay has: between it and its source, between it and a replica,
// and between an apply pipeline and its target. While the source takes
// writes and every hop keeps failing, nothing may be lost, duplicated or
// corrupted: once the faults stop, the store is byte-identical to the
// source's binlog, the replica and the target equal the source (CHECKSUM
// TABLE). The seed is printed so a failure can be replayed
// (BINRELAY_ITEST_SEED).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/harness/binrelay_process.h"
#include "tests/harness/fault_proxy.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/replica_fixture.h"
#include "tests/harness/serve_fixture.h"
#include "tests/harness/sql_conn.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Mode = ReplicaOptions::Mode;

constexpr char kApplier[] = "applier";
constexpr char kApplierPassword[] = "applier-pw";

::testing::AssertionResult SameTable(ServerSandbox& a, ServerSandbox& b, seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last;
  while (true) {
    auto x = ChecksumAllTables(a, "faulty");
    auto y = ChecksumAllTables(b, "faulty");
    if (x.ok() && y.ok() && !x->empty() && *x == *y) return ::testing::AssertionSuccess();
    last = absl::StrCat(x.ok() ? (x->empty() ? "none" : x->begin()->second) : "error", " vs ",
                        y.ok() ? (y->empty() ? "none" : y->begin()->second) : "error");
    if (std::chrono::steady_clock::now() > deadline) {
      return ::testing::AssertionFailure() << "faulty.t differs: " << last;
    }
    std::this_thread::sleep_for(milliseconds(250));
  }
}

TEST(FaultLaneTest, FaultsOnEveryHopLoseNothingAndEveryoneConverges) {
  uint32_t seed = std::random_device{}();
  if (const char* s = std::getenv("BINRELAY_ITEST_SEED")) seed = std::stoul(s);
  RecordProperty("seed", std::to_string(seed));
  SCOPED_TRACE(absl::StrCat("BINRELAY_ITEST_SEED=", seed));

  BR_ASSERT_OK_AND_ASSIGN(auto source,
                          StartServeSource({"--binlog-format=ROW", "--binlog-row-image=FULL"}));
  ServerSandboxOptions to;
  to.server_id = 5;
  BR_ASSERT_OK_AND_ASSIGN(auto target, ServerSandbox::Start(to));
  BR_ASSERT_OK(target->CreateUser(kApplier, kApplierPassword));
  for (ServerSandbox* s : {source.get(), target.get()}) {
    BR_ASSERT_OK(s->Execute("CREATE DATABASE faulty"));
    BR_ASSERT_OK(s->Execute(
        "CREATE TABLE faulty.t (id INT PRIMARY KEY, v INT NOT NULL, pad VARCHAR(2000))"));
  }
  BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(*source));

  // Clean while everything starts; faults once it runs.
  BR_ASSERT_OK_AND_ASSIGN(auto to_source, FaultProxy::Start({.upstream_port = source->Port(),
                                                             .seed = seed}));
  BR_ASSERT_OK_AND_ASSIGN(auto to_target, FaultProxy::Start({.upstream_port = target->Port(),
                                                             .seed = seed + 1,
                                                             .max_bytes = 48 * 1024}));
  to_source->SetEnabled(false);
  to_target->SetEnabled(false);
  ServeOptions o;
  o.overrides = {absl::StrCat("--source.port=", to_source->port()), "--source.ssl_mode=disabled"};
  o.extra_config = absl::StrCat(
      "[apply.faulty]\ntarget_host = 127.0.0.1\ntarget_port = ", to_target->port(),
      "\ntarget_user = ", kApplier, "\ntarget_password = ", kApplierPassword,
      "\ntarget_ssl_mode = disabled\ntables = faulty.t\nstart = ", start,
      "\nflush_interval = 200ms\n");
  BR_ASSERT_OK_AND_ASSIGN(auto serve, ServeProcess::Create(*source, o));
  BR_ASSERT_OK(serve->Start());
  BR_ASSERT_OK(WaitStoreReached(*serve, *source, seconds(30))) << serve->StderrTail();
  BR_ASSERT_OK_AND_ASSIGN(auto to_replica, FaultProxy::Start({.upstream_port = serve->listen_port(),
                                                              .seed = seed + 2}));
  to_replica->SetEnabled(false);
  BR_ASSERT_OK_AND_ASSIGN(
      auto replica, StartReplicaOf({to_replica->port(), kReplUser, kReplPassword},
                                   {.server_id = 3, .mode = Mode::kGtidSlavePos}));
  to_source->SetEnabled(true);
  to_target->SetEnabled(true);
  to_replica->SetEnabled(true);

  // Inserts, updates (growing rows) and deletes for about 12 s.
  std::atomic<bool> stop{false};
  std::atomic<int> statements{0};
  std::thread writer([&] {
    auto conn = SqlConn::Open(*source);
    ASSERT_TRUE(conn.ok()) << conn.status();
    std::mt19937 rng(seed);
    for (int k = 1; !stop; ++k) {
      const int id = 1 + static_cast<int>(rng() % 400);
      std::string sql;
      switch (rng() % 4) {
        case 0:
        case 1:
          sql = absl::StrCat("INSERT INTO faulty.t VALUES (", id, ", ", k, ", REPEAT('p', ",
                             rng() % 2000, ")) ON DUPLICATE KEY UPDATE v = v + 1, pad = "
                             "REPEAT('q', ", rng() % 2000, ")");
          break;
        case 2:
          sql = absl::StrCat("UPDATE faulty.t SET v = (v * 7 + 1) % 1000003 WHERE id BETWEEN ",
                             id, " AND ", id + 20);
          break;
        default:
          sql = absl::StrCat("DELETE FROM faulty.t WHERE id = ", id);
      }
      absl::Status st = (*conn)->Exec(sql);
      ASSERT_TRUE(st.ok()) << sql << ": " << st;
      ++statements;
      if (k % 500 == 0) {
        ASSERT_TRUE((*conn)->Exec("FLUSH BINARY LOGS").ok());
      }
      std::this_thread::sleep_for(milliseconds(2));
    }
  });
  // At least 12 s, then until there is enough workload and enough faults on
  // every hop to say something (a sanitizer build writes more slowly), at
  // most 120 s.
  const auto began = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(seconds(12));
  while (std::chrono::steady_clock::now() - began < seconds(120) &&
         (statements.load() < 1500 || to_source->faults() < 5 || to_replica->faults() < 5 ||
          to_target->faults() < 2)) {
    std::this_thread::sleep_for(milliseconds(200));
  }
  stop = true;
  writer.join();
  EXPECT_GT(statements.load(), 1000) << "too little workload to say anything";

  to_source->SetEnabled(false);
  to_target->SetEnabled(false);
  to_replica->SetEnabled(false);
  RecordProperty("faults_source_hop", std::to_string(to_source->faults()));
  RecordProperty("faults_replica_hop", std::to_string(to_replica->faults()));
  RecordProperty("faults_target_hop", std::to_string(to_target->faults()));
  std::cout << "faults (seed " << seed << "): source hop " << to_source->faults() << " in "
            << to_source->connections() << " connections, replica hop " << to_replica->faults()
            << " in " << to_replica->connections() << ", target hop " << to_target->faults()
            << " in " << to_target->connections() << "; " << statements << " statements\n";
  // The faults happened, on every hop.
  EXPECT_GE(to_source->faults(), 5u);
  EXPECT_GE(to_replica->faults(), 5u);
  EXPECT_GE(to_target->faults(), 2u);
  EXPECT_TRUE(serve->Running()) << serve->StderrTail();

  BR_ASSERT_OK(WaitStoreReached(*serve, *source, seconds(90))) << serve->StderrTail();
  BR_ASSERT_OK_AND_ASSIGN(std::vector<std::string> files, SourceBinlogFiles(*source));
  EXPECT_GE(files.size(), 3u);
  for (size_t i = 0; i + 1 < files.size(); ++i) {
    BR_EXPECT_OK(CompareBinlogCopy(source->DataDir() + "/" + files[i],
                                   serve->store_dir() + "/" + files[i], CopyCompare::kExact));
  }
  BR_EXPECT_OK(CompareBinlogCopy(source->DataDir() + "/" + files.back(),
                                 serve->store_dir() + "/" + files.back(), CopyCompare::kPrefix));
  BR_ASSERT_OK_AND_ASSIGN(std::string gtid, GtidBinlogPos(*source));
  BR_EXPECT_OK(WaitReplicaCaughtUp(*replica, gtid, seconds(90))) << serve->StderrTail();
  EXPECT_TRUE(SameTable(*source, *replica, seconds(30)));
  EXPECT_TRUE(SameTable(*source, *target, seconds(90))) << serve->StderrTail();
  BR_EXPECT_OK(serve->Stop());
}

// The same faults between `binrelay tail` and its source: every row of
// 2000 committed single-row transactions is printed exactly once (a
// reconnect resumes after the last complete transaction, neither skipping
// nor repeating one).
TEST(FaultLaneTest, TailThroughFaultsPrintsEveryRowExactlyOnce) {
  uint32_t seed = std::random_device{}();
  if (const char* s = std::getenv("BINRELAY_ITEST_SEED")) seed = std::stoul(s);
  SCOPED_TRACE(absl::StrCat("BINRELAY_ITEST_SEED=", seed));
  BR_ASSERT_OK_AND_ASSIGN(auto source,
                          StartServeSource({"--binlog-format=ROW", "--binlog-row-image=FULL"}));
  BR_ASSERT_OK(source->Execute("CREATE DATABASE once"));
  BR_ASSERT_OK(source->Execute("CREATE TABLE once.t (id INT PRIMARY KEY, pad VARCHAR(1000))"));
  BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(*source));
  {
    BR_ASSERT_OK_AND_ASSIGN(auto conn, SqlConn::Open(*source));
    for (int id = 1; id <= 2000; ++id) {
      BR_ASSERT_OK(conn->Exec(absl::StrCat("INSERT INTO once.t VALUES (", id, ", REPEAT('x', ",
                                           id % 1000, "))")));
    }
  }
  BR_ASSERT_OK_AND_ASSIGN(auto proxy, FaultProxy::Start({.upstream_port = source->Port(),
                                                         .seed = seed,
                                                         .max_bytes = 128 * 1024}));
  BR_ASSERT_OK_AND_ASSIGN(
      ProcessResult r,
      RunBinrelay({"tail", "--source", absl::StrCat("127.0.0.1:", proxy->port()), "--user",
                   kRelayUser, "--tables", "once.t", "--start", start, "--until-end", "--tls",
                   "disabled", "--heartbeat", "1", "--reconnect-timeout", "60"},
                  {{"BINRELAY_SOURCE_PASSWORD", kRelayPassword}}, seconds(180)));
  std::cout << "faults (seed " << seed << "): " << proxy->faults() << " in "
            << proxy->connections() << " connections\n";
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_GE(proxy->faults(), 3u) << "the faults did not happen";
  std::map<int, int> seen;
  size_t lines = 0;
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    ++lines;
    constexpr absl::string_view kKey = "\"after\":{\"id\":";
    const size_t at = line.find(kKey);
    ASSERT_NE(at, absl::string_view::npos) << line;
    ++seen[std::atoi(std::string(line.substr(at + kKey.size(), 8)).c_str())];
  }
  EXPECT_EQ(lines, 2000u);
  EXPECT_EQ(seen.size(), 2000u);
  for (const auto& [id, n] : seen) EXPECT_EQ(n, 1) << "row " << id << " printed " << n << " times";
}

}  // namespace
}  // namespace binrelay::testing
