// Lossless failover, end to end, as README's procedure runs it: the primary
// commits with semi-sync AFTER_SYNC and binrelay is the acknowledging replica
// (it ACKs a transaction only once it is fsynced in the store); the standby
// replicates from binrelay by GTID. Writers commit without pause, the
// primary is killed with SIGKILL, the standby executes everything binrelay
// stored, is promoted, binrelay follows it by itself ([source] candidates,
// failover_after) and the writers carry on against it. Then the old primary
// comes back, writable and with a transaction binrelay never stored, and
// binrelay must not go back to it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"
#include "replication/connection_sql_source.h"
#include "tests/harness/binrelay_process.h"
#include "tests/harness/replica_fixture.h"
#include "tests/harness/serve_fixture.h"
#include "tests/harness/server_flavour.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/sql_conn.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr int kWriters = 4;
constexpr char kTable[] =
    "(id BIGINT AUTO_INCREMENT PRIMARY KEY, writer INT NOT NULL, seq INT NOT NULL, "
    "KEY (writer, seq))";
constexpr char kApplier[] = "applier";
constexpr char kApplierPassword[] = "applier-pw";

// An [apply.NAME] section copying app.w into `schema` on `target`.
std::string Pipeline(const std::string& name, const ServerSandbox& target,
                     const std::string& start, const std::string& schema) {
  return absl::StrCat("[apply.", name, "]\ntarget_host = 127.0.0.1\ntarget_port = ",
                      target.Port(), "\ntarget_user = ", kApplier, "\ntarget_password = ",
                      kApplierPassword, "\ntables = app.w\n",
                      schema == "app" ? "" : absl::StrCat("target_schema = ", schema, "\n"),
                      "start = ", start, "\nflush_interval = 200ms\n");
}

// Polls until `schema`.w on `target` has the standby's rows (CHECKSUM
// TABLE); the last difference otherwise.
absl::Status WaitCopied(ServerSandbox& standby, ServerSandbox& target, const std::string& schema,
                        std::chrono::seconds timeout) {
  std::string want, have;
  for (auto deadline = Clock::now() + timeout; Clock::now() < deadline;) {
    BR_ASSIGN_OR_RETURN(SqlRows a, standby.Query("CHECKSUM TABLE app.w"));
    BR_ASSIGN_OR_RETURN(SqlRows b, target.Query(absl::StrCat("CHECKSUM TABLE ", schema, ".w")));
    want = a.empty() || !a[0][1] ? "" : *a[0][1];
    have = b.empty() || !b[0][1] ? "" : *b[0][1];
    if (!want.empty() && want == have) return absl::OkStatus();
    std::this_thread::sleep_for(milliseconds(200));
  }
  return absl::DeadlineExceededError(absl::StrCat("the pipeline's ", schema, ".w has checksum ",
                                                  have, ", the new primary's app.w ", want));
}

// One writer's commits: `acked` returned OK to it; `in_doubt` is the one
// whose COMMIT was cut off by the kill (it may or may not have survived:
// the client never learnt).
struct WriterLog {
  std::vector<int> acked;
  std::optional<int> in_doubt;
  std::string stopped_by;
};

// Autocommit INSERTs of (writer, seq) on `server` until `stop` or an error.
void Write(const ServerSandbox& server, int writer, int first_seq, const std::atomic<bool>& stop,
           WriterLog* log) {
  absl::StatusOr<std::unique_ptr<SqlConn>> conn = SqlConn::Open(server);
  if (!conn.ok()) {
    log->stopped_by = conn.status().ToString();
    return;
  }
  for (int seq = first_seq; !stop.load(); ++seq) {
    absl::Status s = (*conn)->Exec(
        absl::StrCat("INSERT INTO app.w (writer, seq) VALUES (", writer, ", ", seq, ")"));
    if (!s.ok()) {
      log->in_doubt = seq;
      log->stopped_by = s.ToString();
      return;
    }
    log->acked.push_back(seq);
  }
}

std::string Scalar(const protocol::ConnectOptions& login, const std::string& sql) {
  replication::ConnectionSqlSource conn(login);
  auto rows = conn.Query(sql);
  if (!rows.ok() || rows->empty() || (*rows)[0].empty() || !(*rows)[0][0]) return "";
  return *(*rows)[0][0];
}

int64_t Switches(const ServeProcess& serve) {
  absl::StatusOr<JsonValue> status = StatusJson(serve.http_port());
  if (!status.ok() || status->Find("source_switches") == nullptr) return -1;
  int64_t n = -1;
  return absl::SimpleAtoi(status->Find("source_switches")->text, &n) ? n : -1;
}

// The store's binlog files, the old source's first, then each era's, in order.
std::vector<std::string> StoredBinlogFiles(const std::string& store_dir) {
  std::vector<std::string> files;
  for (int era = 0;; ++era) {
    const std::string dir = era == 0 ? store_dir : absl::StrCat(store_dir, "/era-", era);
    if (!std::filesystem::is_directory(dir)) break;
    std::vector<std::string> here;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      const size_t dot = name.rfind('.');
      if (e.is_regular_file() && dot != std::string::npos && name.size() - dot == 7 &&
          name.find_first_not_of("0123456789", dot + 1) == std::string::npos) {
        here.push_back(e.path().string());
      }
    }
    std::sort(here.begin(), here.end());
    files.insert(files.end(), here.begin(), here.end());
  }
  return files;
}

class LosslessFailoverTest : public ::testing::TestWithParam<std::string> {};

// Guards the promise semi-sync through binrelay makes: a commit a writer saw
// succeed is lost (ACKed before it was durable in the store, or not served
// to the standby), or applied twice (the promoted standby's binlog repeats
// what binrelay stored, and binrelay or its replicas take it again); and
// binrelay following the old primary back when it returns writable with
// transactions nobody else has.
TEST_P(LosslessFailoverTest, EveryAcknowledgedCommitIsOnThePromotedStandbyExactlyOnce) {
  BINRELAY_REQUIRE_FLAVOUR(GetParam());
  BR_ASSERT_OK_AND_ASSIGN(ServerFlavour flavour, ServerFlavour::Find(GetParam()));
  const bool my = flavour.mysql;
  // Until binrelay is there, a short timeout (the source's own setup commits
  // fall back at once); then a long one: no commit may return on the
  // timeout, only on binrelay's ACK.
  const SemiSyncSource semi(my);
  const std::string& p = semi.prefix;
  BR_ASSERT_OK_AND_ASSIGN(auto primary, StartServeSource(semi.server_args, GetParam()));
  BR_ASSERT_OK(primary->Execute("CREATE DATABASE app"));
  // No unique key on (writer, seq): a commit applied twice shows as two rows.
  BR_ASSERT_OK(primary->Execute(absl::StrCat("CREATE TABLE app.w ", kTable)));

  // An apply pipeline from the start copies app.w to another server; it
  // must read through the switch and a restart as the replicas do.
  ServerSandboxOptions to;
  to.flavour = GetParam();
  to.server_id = 7;
  BR_ASSERT_OK_AND_ASSIGN(auto target, ServerSandbox::Start(to));
  BR_ASSERT_OK(target->CreateUser(kApplier, kApplierPassword));
  for (const char* db : {"app", "app2"}) {
    BR_ASSERT_OK(target->Execute(absl::StrCat("CREATE DATABASE ", db)));
    BR_ASSERT_OK(target->Execute(absl::StrCat("CREATE TABLE ", db, ".w ", kTable)));
  }
  ServeOptions o;
  o.overrides = {"--source.semi_sync=on"};
  o.extra_config = Pipeline("w", *target, "current", "app");
  BR_ASSERT_OK_AND_ASSIGN(auto serve, ServeProcess::Create(*primary, o));
  // The standby replicates from binrelay, not from the primary: binrelay
  // holds every acknowledged commit, the primary's other replicas need not.
  ReplicaOptions ro;
  ro.flavour = GetParam();
  ro.mode = ReplicaOptions::Mode::kGtidSlavePos;
  ro.server_id = 5;
  ro.server_args = {"--read-only=1"};
  if (!my) ro.server_args.push_back("--log-slave-updates");
  if (my) ro.extra = "GET_SOURCE_PUBLIC_KEY=1";
  BR_ASSERT_OK(serve->Start());
  BR_ASSERT_OK_AND_ASSIGN(auto standby, StartReplicaOf(ReplicaEndpoint(*serve, *primary), ro));
  // The standby is the candidate ([source] host, the primary, is one
  // already, so binrelay must itself refuse to go back to it).
  BR_ASSERT_OK(serve->Stop());
  serve->AddOverride(absl::StrCat("--source.candidates=127.0.0.1:", standby->Port()));
  serve->AddOverride("--source.failover_after=1s");
  BR_ASSERT_OK(serve->Start());
  const std::string& status = semi.status_prefix;
  ASSERT_TRUE(WaitGlobalStatus(*primary, status + "_clients", 1, seconds(30)))
      << "binrelay did not register as a semi-sync replica: " << serve->StderrTail();
  ASSERT_TRUE(WaitGlobalStatus(*primary, status + "_status", 1, seconds(60)))
      << serve->StderrTail();
  BR_ASSERT_OK(primary->Execute(absl::StrCat("SET GLOBAL ", p, "_timeout = 600000")));
  const int64_t no_tx_before = GlobalStatus(*primary, status + "_no_tx");
  // What a copy taken now would hold: a pipeline added after the switch
  // starts here by GTID, in the old primary's files.
  BR_ASSERT_OK_AND_ASSIGN(SqlRows gtid_rows,
                          primary->Query(my ? "SELECT @@GLOBAL.gtid_executed"
                                            : "SELECT @@GLOBAL.gtid_binlog_pos"));
  ASSERT_TRUE(!gtid_rows.empty() && gtid_rows[0][0].has_value());
  const std::string gtid_before = *gtid_rows[0][0];

  // Writers commit without pause; the primary dies under them.
  std::atomic<bool> stop{false};
  std::vector<WriterLog> logs(kWriters);
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back(Write, std::cref(*primary), w, 1, std::cref(stop), &logs[w]);
  }
  std::this_thread::sleep_for(seconds(3));
  // Every commit so far waited for binrelay's ACK (none fell back to async).
  const int64_t no_tx = GlobalStatus(*primary, status + "_no_tx");
  const int64_t yes_tx = GlobalStatus(*primary, status + "_yes_tx");
  primary->Stop(seconds(0));
  // binrelay dies with it: an ACK sent before the transaction was written
  // to the store would leave an acknowledged commit nowhere.
  serve->Kill();
  for (std::thread& t : writers) t.join();
  BR_ASSERT_OK(serve->Start());
  EXPECT_EQ(no_tx, no_tx_before) << "commits returned without binrelay's acknowledgement";
  size_t acked_before = 0;
  for (const WriterLog& l : logs) {
    acked_before += l.acked.size();
    ASSERT_TRUE(l.in_doubt.has_value()) << "a writer stopped before the kill: " << l.stopped_by;
  }
  ASSERT_GT(acked_before, 20u) << "too few commits to mean anything";

  // The procedure: the standby executes everything binrelay stored (asked
  // on binrelay's listener as on a server), then is promoted.
  const protocol::ConnectOptions admin = ListenerLogin(*serve, kAdminUser, kAdminPassword);
  const std::string stored =
      Scalar(admin, my ? "SELECT @@GLOBAL.gtid_executed" : "SELECT @@GLOBAL.gtid_binlog_pos");
  ASSERT_FALSE(stored.empty()) << serve->StderrTail();
  BR_ASSERT_OK_AND_ASSIGN(
      SqlRows wait,
      standby->Query(my ? absl::StrCat("SELECT WAIT_FOR_EXECUTED_GTID_SET('", stored, "', 60)")
                        : absl::StrCat("SELECT MASTER_GTID_WAIT('", stored, "', 60)")));
  ASSERT_TRUE(!wait.empty() && wait[0][0] && *wait[0][0] == "0")
      << "the standby did not execute binrelay's stored " << stored << ": "
      << DescribeReplica(*standby);
  const auto promoted_at = Clock::now();
  BR_ASSERT_OK(standby->Execute(my ? "STOP REPLICA" : "STOP SLAVE"));
  BR_ASSERT_OK(standby->Execute(my ? "RESET REPLICA ALL" : "RESET SLAVE ALL"));
  BR_ASSERT_OK(standby->Execute("SET GLOBAL read_only = 0"));

  // The writers resume against the new primary, each after its commit in
  // doubt.
  stop.store(false);
  std::vector<WriterLog> after(kWriters);
  writers.clear();
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back(Write, std::cref(*standby), w, *logs[w].in_doubt + 1, std::cref(stop),
                         &after[w]);
  }
  // binrelay follows the promoted standby by itself.
  while (Switches(*serve) < 1 && Clock::now() - promoted_at < seconds(60)) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  const double switch_s =
      std::chrono::duration<double>(Clock::now() - promoted_at).count();
  std::this_thread::sleep_for(seconds(1));
  stop.store(true);
  for (std::thread& t : writers) t.join();
  ASSERT_EQ(Switches(*serve), 1) << serve->StderrTail();
  size_t acked_after = 0;
  for (const WriterLog& l : after) {
    EXPECT_FALSE(l.in_doubt.has_value()) << "a write to the new primary failed: " << l.stopped_by;
    acked_after += l.acked.size();
  }

  // Every acknowledged commit exactly once; nothing no writer sent.
  BR_ASSERT_OK_AND_ASSIGN(SqlRows rows,
                          standby->Query("SELECT writer, seq, COUNT(*) FROM app.w "
                                         "GROUP BY writer, seq"));
  std::map<std::pair<int, int>, int> found;
  for (const auto& r : rows) {
    found[{std::stoi(*r[0]), std::stoi(*r[1])}] = std::stoi(*r[2]);
  }
  size_t acked_found = 0, in_doubt_found = 0, duplicated = 0, missing = 0;
  std::set<std::pair<int, int>> sent;
  for (int w = 0; w < kWriters; ++w) {
    for (const std::vector<int>* list : {&logs[w].acked, &after[w].acked}) {
      for (int seq : *list) {
        sent.insert({w, seq});
        auto it = found.find({w, seq});
        if (it == found.end()) {
          ++missing;
          ADD_FAILURE() << "writer " << w << " seq " << seq << " was acknowledged but is missing";
          continue;
        }
        ++acked_found;
        if (it->second != 1) ++duplicated;
      }
    }
    sent.insert({w, *logs[w].in_doubt});
    auto it = found.find({w, *logs[w].in_doubt});
    if (it != found.end()) {
      ++in_doubt_found;
      if (it->second != 1) ++duplicated;
    }
  }
  for (const auto& [key, n] : found) {
    EXPECT_TRUE(sent.count(key)) << "row writer " << key.first << " seq " << key.second
                                 << " was never sent";
  }
  EXPECT_EQ(missing, 0u);
  EXPECT_EQ(duplicated, 0u);
  // The figures the closing note and README quote.
  std::printf("[lossless %s] acknowledged before the kill %zu (semi-sync yes_tx %lld), in doubt "
              "%d (found %zu), acknowledged after %zu; found %zu of %zu acknowledged, "
              "duplicated %zu; binrelay followed the promoted standby %.2f s after promotion\n",
              GetParam().c_str(), acked_before, static_cast<long long>(yes_tx), kWriters,
              in_doubt_found, acked_after, acked_found, acked_before + acked_after, duplicated,
              switch_s);

  // binrelay's store went on from the new primary, without a gap, and the
  // pipeline running through the switch applied it.
  BR_ASSERT_OK(WaitStoreReached(*serve, *standby, seconds(60)).status());
  BR_EXPECT_OK(WaitCopied(*standby, *target, "app", seconds(60))) << serve->StderrTail();

  // Each commit once through binrelay too: a dump by GTID from before the
  // writers, across the switch (the standby's binlog repeats every stored
  // transaction), read with binrelay's own client.
  BR_ASSERT_OK_AND_ASSIGN(
      ProcessResult dumped,
      RunBinrelay({"tail", "--source", absl::StrCat("127.0.0.1:", serve->listen_port()), "--user",
                   kReplUser, "--tables", "app.w", "--start", "gtid:" + gtid_before,
                   "--until-end"},
                  {{"BINRELAY_SOURCE_PASSWORD", kReplPassword}}, seconds(120)));
  ASSERT_EQ(dumped.exit_code, 0) << dumped.Describe();
  std::map<std::pair<int, int>, int> served;
  for (const std::string& line : dumped.OutLines()) {
    // Named from the server's information_schema (a live tail).
    const size_t at = line.find("\"writer\":");
    const size_t seq_at = line.find(",\"seq\":");
    if (at == std::string::npos || seq_at == std::string::npos) continue;
    ++served[{std::stoi(line.substr(at + 9)), std::stoi(line.substr(seq_at + 7))}];
  }
  size_t served_twice = 0;
  for (const auto& [key, n] : served) served_twice += n > 1 ? 1 : 0;
  EXPECT_EQ(served_twice, 0u);
  ASSERT_FALSE(served.empty()) << dumped.out.substr(0, 600) << dumped.Describe();
  for (int w = 0; w < kWriters; ++w) {
    for (const std::vector<int>* list : {&logs[w].acked, &after[w].acked}) {
      for (int seq : *list) {
        EXPECT_EQ(served.count({w, seq}), 1u) << "writer " << w << " seq " << seq
                                              << " was acknowledged but not served by binrelay";
      }
    }
  }
  std::printf("[lossless %s] served through binrelay by GTID across the switch: %zu rows, "
              "%zu twice\n", GetParam().c_str(), served.size(), served_twice);

  // binrelay restarts while the old primary is still down, with a second
  // pipeline starting by GTID at a position of the old primary's: it
  // follows the standby at once (no probe, no second era), still counts
  // one switch, and both pipelines hold the new primary's rows.
  BR_ASSERT_OK(serve->Stop());
  std::ofstream(serve->config_path(), std::ios::app)
      << Pipeline("w2", *target, "gtid:" + gtid_before, "app2");
  BR_ASSERT_OK(serve->Start());
  BR_ASSERT_OK(standby->Execute("INSERT INTO app.w (writer, seq) VALUES (6, 1)"));
  BR_ASSERT_OK(WaitStoreReached(*serve, *standby, seconds(60)).status()) << serve->StderrTail();
  EXPECT_EQ(Switches(*serve), 1);
  EXPECT_FALSE(std::filesystem::exists(serve->store_dir() + "/era-2"));
  EXPECT_TRUE(absl::StrContains(serve->Stderr(), "the server binrelay switched to"))
      << serve->StderrTail();
  BR_EXPECT_OK(WaitCopied(*standby, *target, "app", seconds(60))) << serve->StderrTail();
  BR_EXPECT_OK(WaitCopied(*standby, *target, "app2", seconds(60))) << serve->StderrTail();
  // SHOW RELAY SOURCES marks the server followed as current, not [source]
  // host (columns: Source, Current, ...).
  {
    replication::ConnectionSqlSource sql(admin);
    BR_ASSERT_OK_AND_ASSIGN(auto sources, sql.Query("SHOW RELAY SOURCES"));
    std::map<std::string, std::string> current;
    for (const auto& row : sources) {
      if (row.size() > 1 && row[0] && row[1]) current[*row[0]] = *row[1];
    }
    EXPECT_EQ(current[absl::StrCat("127.0.0.1:", standby->Port())], "Yes");
    EXPECT_EQ(current[absl::StrCat("127.0.0.1:", primary->Port())], "No");
  }

  // The old primary returns, writable, and takes a write nobody else has
  // (an application that still pointed at it). binrelay stays where it is;
  // with its source lost again it refuses the old primary and says why.
  BR_ASSERT_OK(primary->Restart());
  BR_ASSERT_OK(primary->Execute(absl::StrCat("SET GLOBAL ", p, "_timeout = 100")));
  BR_ASSERT_OK(primary->Execute("INSERT INTO app.w (writer, seq) VALUES (99, 1)"));
  standby->Stop(seconds(0));
  std::string refusal;
  for (int i = 0; i < 200 && !absl::StrContains(refusal, "no failover"); ++i) {
    std::this_thread::sleep_for(milliseconds(100));
    refusal = SlaveStatusColumn(admin, "Last_IO_Error");
  }
  EXPECT_TRUE(absl::StrContains(refusal, absl::StrCat("127.0.0.1:", primary->Port())))
      << refusal;
  EXPECT_TRUE(absl::StrContains(refusal, "never stored")) << refusal;
  EXPECT_EQ(Switches(*serve), 1);
  // The standby comes back: binrelay resumes it, its own source, and stores
  // what it writes next; the old primary's row is nowhere.
  BR_ASSERT_OK(standby->Restart());
  BR_ASSERT_OK(standby->Execute("INSERT INTO app.w (writer, seq) VALUES (7, 1)"));
  BR_ASSERT_OK(WaitStoreReached(*serve, *standby, seconds(60)).status());
  EXPECT_EQ(Switches(*serve), 1);
  std::vector<std::string> tail_args = {"tail", "--tables", "app.w"};
  for (const std::string& f : StoredBinlogFiles(serve->store_dir())) {
    tail_args.push_back("--file");
    tail_args.push_back(f);
  }
  BR_ASSERT_OK_AND_ASSIGN(ProcessResult tail, RunBinrelay(tail_args, {}, seconds(120)));
  // Columns by position: the servers log no column names by default
  // (binlog_row_metadata); @2 is `writer`.
  EXPECT_TRUE(absl::StrContains(tail.out, "\"@2\":7,")) << tail.out.substr(0, 400);
  EXPECT_FALSE(absl::StrContains(tail.out, "\"@2\":99,")) << tail.Describe();
  // The old primary's shutdown would wait for an ACK nobody sends.
  serve->Kill();
}

INSTANTIATE_TEST_SUITE_P(Flavours, LosslessFailoverTest,
                         ::testing::Values("mariadb-10.11", "mariadb-11.8", "mysql-9.7"),
                         FlavourTestName<::testing::TestParamInfo<std::string>>);

}  // namespace
}  // namespace binrelay::testing
