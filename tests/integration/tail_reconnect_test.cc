// `binrelay tail` losing its dump connection mid-stream (the source KILLs the
// Binlog Dump thread, or the whole source stops and comes back): every row
// change must still arrive exactly once and in commit order.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/harness/binrelay_process.h"
#include "tests/harness/fault_proxy.h"
#include "tests/harness/json_lite.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/shared_sandbox.h"
#include "tests/harness/sql_conn.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kUser[] = "relay";
constexpr char kPassword[] = "reconnect-pw";

// One transaction of the workload and the row changes a subscriber of
// DB.a and DB.b must see for it, as "table op id before after" signatures.
struct Workload {
  std::string db;
  // Bytes of unsubscribed padding per transaction (makes the stream longer).
  int pad = 2000;
  std::vector<std::string> expected;

  std::string Transaction(int k) {
    const int twin = k + 100000;
    std::string sql = absl::StrCat(
        "BEGIN;"
        "INSERT INTO ", db, ".a (id, v) VALUES (", k, ", 0), (", twin, ", 0);"
        "INSERT INTO ", db, ".b (id, v) VALUES (", k, ", ", k, ");"
        "INSERT INTO ", db, ".u (id, v, pad) VALUES (", k, ", ", k, ", REPEAT('u', ", pad, "));"
        "UPDATE ", db, ".a SET v = v + 1 WHERE id = ", k, ";"
        "UPDATE ", db, ".u SET v = v + 1 WHERE id = ", k, ";"
        "UPDATE ", db, ".b SET v = v * 2 WHERE id = ", k, ";");
    expected.push_back(absl::StrCat("a insert ", k, " null 0"));
    expected.push_back(absl::StrCat("a insert ", twin, " null 0"));
    expected.push_back(absl::StrCat("b insert ", k, " null ", k));
    expected.push_back(absl::StrCat("a update ", k, " 0 1"));
    expected.push_back(absl::StrCat("b update ", k, " ", k, " ", 2 * k));
    if (k % 10 == 0) {
      absl::StrAppend(&sql, "DELETE FROM ", db, ".a WHERE id = ", twin, ";");
      expected.push_back(absl::StrCat("a delete ", twin, " 0 null"));
    }
    absl::StrAppend(&sql, "COMMIT");
    return sql;
  }
};

std::string ImageV(const JsonValue* image) {
  if (image == nullptr || image->is_null()) return "null";
  const JsonValue* v = image->Find("v");
  return v ? v->text : "?";
}

// "table op id before after" per stdout line (see Workload::expected).
absl::StatusOr<std::vector<std::string>> Signatures(const std::string& out) {
  absl::StatusOr<std::vector<JsonValue>> lines = ParseJsonLines(out);
  if (!lines.ok()) return lines.status();
  std::vector<std::string> sigs;
  for (const JsonValue& l : *lines) {
    const JsonValue* op = l.Find("op");
    const JsonValue* table = l.Find("table");
    const JsonValue* before = l.Find("before");
    const JsonValue* after = l.Find("after");
    const JsonValue* image = (after && !after->is_null()) ? after : before;
    const JsonValue* id = image ? image->Find("id") : nullptr;
    sigs.push_back(absl::StrCat(table ? table->text : "?", " ", op ? op->text : "?", " ",
                                id ? id->text : "?", " ", ImageV(before), " ", ImageV(after)));
  }
  return sigs;
}

// Fails with the first divergence: a lost, duplicated or reordered change.
void ExpectSameSequence(const std::vector<std::string>& got,
                        const std::vector<std::string>& want) {
  size_t n = std::min(got.size(), want.size());
  size_t i = 0;
  while (i < n && got[i] == want[i]) ++i;
  if (i == n && got.size() == want.size()) return;
  ADD_FAILURE() << "row changes diverge at index " << i << " of " << want.size()
                << " expected (got " << got.size() << "): got ["
                << (i < got.size() ? got[i] : "<end>") << "], expected ["
                << (i < want.size() ? want[i] : "<end>") << "]; next got: "
                << absl::StrJoin(got.begin() + i, got.begin() + std::min(got.size(), i + 5),
                                 " | ");
}

class TailReconnectTest : public SharedSandboxTest<TailReconnectTest> {
 public:
  static constexpr SandboxAccount kAccount{kUser, kPassword, kReplicationGrants};

 protected:
  static absl::Status CreateTables(const std::string& db) {
    BR_RETURN_IF_ERROR(sandbox_->Execute(absl::StrCat("CREATE DATABASE ", db)));
    for (const char* t : {"a", "b"}) {
      BR_RETURN_IF_ERROR(sandbox_->Execute(
          absl::StrCat("CREATE TABLE ", db, ".", t, " (id INT PRIMARY KEY, v BIGINT)")));
    }
    return sandbox_->Execute(
        absl::StrCat("CREATE TABLE ", db, ".u (id INT PRIMARY KEY, v BIGINT, pad MEDIUMTEXT)"));
  }

  // KILLs every Binlog Dump thread on the source; returns how many.
  static int KillDumpThreads() {
    auto rows = sandbox_->Query(
        "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND = 'Binlog Dump'");
    if (!rows.ok()) return 0;
    int killed = 0;
    for (const auto& r : *rows) {
      // The thread may end on its own between SELECT and KILL.
      if (sandbox_->Execute(absl::StrCat("KILL ", *r[0])).ok()) ++killed;
    }
    return killed;
  }

  static EnvVars Env() { return {{"BINRELAY_SOURCE_PASSWORD", kPassword}}; }
};

// Guards: rows lost or printed twice when the dump connection is killed in
// the middle of transactions while binrelay follows a live source.
TEST_F(TailReconnectTest, FollowSurvivesRepeatedDumpThreadKillsExactlyOnce) {
  const std::string db = "rc_follow";
  BR_ASSERT_OK(CreateTables(db));
  BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(*sandbox_));
  BR_ASSERT_OK_AND_ASSIGN(
      auto tail, BackgroundBinrelay::Start(TailArgs(*sandbox_, kUser, db + ".a," + db + ".b",
                                                    {"--start", start, "--heartbeat", "1"}),
                                           Env()));
  BR_ASSERT_OK_AND_ASSIGN(auto conn, SqlConn::Open(*sandbox_));
  Workload w{db};
  std::vector<std::string> txns;
  for (int k = 1; k <= 300; ++k) txns.push_back(w.Transaction(k));

  std::atomic<bool> done{false};
  absl::Status workload_status;
  std::thread worker([&] {
    for (const std::string& sql : txns) {
      workload_status = conn->Exec(sql);
      if (!workload_status.ok()) break;
      // Spread the workload so the kills land while it streams.
      std::this_thread::sleep_for(milliseconds(3));
    }
    done = true;
  });
  int kills = 0;
  while (!done || kills < 5) {
    std::this_thread::sleep_for(milliseconds(150));
    kills += KillDumpThreads();
    if (done && kills >= 5) break;
    if (tail->OutputClosed()) break;
  }
  worker.join();
  BR_ASSERT_OK(workload_status);
  RecordProperty("dump_kills", kills);
  EXPECT_GE(kills, 5) << "the test must actually interrupt the stream";

  size_t seen = tail->WaitForStdoutLines(w.expected.size(), seconds(60));
  // Give a duplicate (if any) a moment to show up before stopping.
  std::this_thread::sleep_for(milliseconds(1500));
  tail->Signal(SIGTERM);
  ProcessResult r = tail->Wait(seconds(20));
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_GE(seen, w.expected.size()) << r.Describe();
  BR_ASSERT_OK_AND_ASSIGN(std::vector<std::string> got, Signatures(r.out));
  ExpectSameSequence(got, w.expected);
}

// Guards: --until-end stopping early, hanging, or duplicating rows when its
// dump connection is killed before it reaches the end.
TEST_F(TailReconnectTest, UntilEndSurvivesDumpThreadKills) {
  const std::string db = "rc_until";
  BR_ASSERT_OK(CreateTables(db));
  BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(*sandbox_));
  BR_ASSERT_OK_AND_ASSIGN(auto conn, SqlConn::Open(*sandbox_));
  // ~30 MB of binlog, so the dump lives long enough to be killed.
  Workload w{db, 100000};
  for (int k = 1; k <= 300; ++k) BR_ASSERT_OK(conn->Exec(w.Transaction(k)));

  BR_ASSERT_OK_AND_ASSIGN(
      auto tail, BackgroundBinrelay::Start(TailArgs(*sandbox_, kUser, db + ".a," + db + ".b",
                                                    {"--start", start, "--until-end"}),
                                           Env()));
  // Kill as often as a dump thread shows up until binrelay is done.
  int kills = 0;
  const auto deadline = std::chrono::steady_clock::now() + seconds(60);
  while (!tail->OutputClosed() && std::chrono::steady_clock::now() < deadline && kills < 8) {
    kills += KillDumpThreads();
  }
  ProcessResult r = tail->Wait(seconds(60));
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  RecordProperty("dump_kills", kills);
  EXPECT_GE(kills, 1) << "no kill landed: the stream ended before any KILL; " << r.Describe();
  BR_ASSERT_OK_AND_ASSIGN(std::vector<std::string> got, Signatures(r.out));
  ExpectSameSequence(got, w.expected);
}

// Guards: loss or duplicates when the whole source stops for seconds and
// comes back on the same port (new binlog file after restart).
TEST_F(TailReconnectTest, SourceStopAndRestartResumesWithoutLossOrDuplicates) {
  const std::string db = "rc_restart";
  BR_ASSERT_OK(CreateTables(db));
  BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(*sandbox_));
  BR_ASSERT_OK_AND_ASSIGN(
      auto tail, BackgroundBinrelay::Start(TailArgs(*sandbox_, kUser, db + ".a," + db + ".b",
                                                    {"--start", start, "--heartbeat", "1"}),
                                           Env()));
  // The stop must hit a stream, not binrelay's first connection (a source
  // gone before the first dump is a configuration error, not a reconnect):
  // under sanitizers startup alone can outlast the workload below.
  for (int i = 0; i < 300 && tail->StderrSoFar().find("dumping from") == std::string::npos; ++i) {
    std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_NE(tail->StderrSoFar().find("dumping from"), std::string::npos) << tail->StderrSoFar();
  Workload w{db};
  {
    BR_ASSERT_OK_AND_ASSIGN(auto conn, SqlConn::Open(*sandbox_));
    for (int k = 1; k <= 100; ++k) BR_ASSERT_OK(conn->Exec(w.Transaction(k)));
  }
  // Stop at once, most likely while binrelay is still streaming part 1.
  sandbox_->Stop();
  std::this_thread::sleep_for(seconds(3));
  BR_ASSERT_OK(sandbox_->Restart());
  {
    BR_ASSERT_OK_AND_ASSIGN(auto conn, SqlConn::Open(*sandbox_));
    for (int k = 101; k <= 200; ++k) BR_ASSERT_OK(conn->Exec(w.Transaction(k)));
  }
  size_t seen = tail->WaitForStdoutLines(w.expected.size(), seconds(60));
  std::this_thread::sleep_for(milliseconds(1500));
  tail->Signal(SIGTERM);
  ProcessResult r = tail->Wait(seconds(20));
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_GE(seen, w.expected.size()) << r.Describe();
  BR_ASSERT_OK_AND_ASSIGN(std::vector<std::string> got, Signatures(r.out));
  ExpectSameSequence(got, w.expected);
}

// Guards: a tail that gives up when its first connection is lost after the
// source authenticated it (in the preflight queries, before the dump), as if
// the host or credentials were wrong. One reset lands 600 bytes in: past the
// greeting and the authentication (about 250 bytes on MariaDB without TLS),
// inside the preflight's result sets; later connections pass cleanly.
TEST_F(TailReconnectTest, FirstConnectionLostAfterAuthenticatingIsRetried) {
  const std::string db = "rc_first";
  BR_ASSERT_OK(CreateTables(db));
  BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(*sandbox_));
  Workload w{db, 10};
  {
    BR_ASSERT_OK_AND_ASSIGN(auto conn, SqlConn::Open(*sandbox_));
    for (int k = 1; k <= 20; ++k) BR_ASSERT_OK(conn->Exec(w.Transaction(k)));
  }
  BR_ASSERT_OK_AND_ASSIGN(auto proxy,
                          FaultProxy::Start({.upstream_port = sandbox_->Port(),
                                             .min_bytes = 600,
                                             .max_bytes = 600,
                                             .max_faults = 1,
                                             .kinds = {FaultProxy::kReset}}));
  BR_ASSERT_OK_AND_ASSIGN(
      ProcessResult r,
      RunBinrelay({"tail", "--source", absl::StrCat("127.0.0.1:", proxy->port()), "--user", kUser,
                   "--tables", db + ".a," + db + ".b", "--start", start, "--until-end", "--tls",
                   "disabled"},
                  Env(), seconds(60)));
  ASSERT_EQ(proxy->faults(), 1u) << "the reset did not happen";
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  // The reset hit the first connection before it was streaming.
  const size_t retry = r.err.find("reconnecting in");
  const size_t dumping = r.err.find("dumping from");
  ASSERT_NE(retry, std::string::npos) << r.Describe();
  EXPECT_LT(retry, dumping) << r.Describe();
  BR_ASSERT_OK_AND_ASSIGN(std::vector<std::string> got, Signatures(r.out));
  ExpectSameSequence(got, w.expected);
}

}  // namespace
}  // namespace binrelay::testing
