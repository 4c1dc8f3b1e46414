// STOP SLAVE / START SLAVE (and the REPLICA spellings) on binrelay's
// listener: the upstream leaves a real source and comes back, with a real
// MariaDB replica of binrelay reading through it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "protocol/client_connection.h"
#include "protocol/status_macros.h"
#include "replication/connection_sql_source.h"
#include "tests/harness/fault_proxy.h"
#include "tests/harness/replica_fixture.h"
#include "tests/harness/serve_fixture.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

using std::chrono::seconds;

std::string UpstreamState(const ServeProcess& serve);

// Polls /status until upstream_state is `want`.
bool WaitUpstreamState(const ServeProcess& serve, const std::string& want,
                       std::chrono::seconds timeout) {
  const auto give_up = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < give_up) {
    if (UpstreamState(serve) == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::string UpstreamState(const ServeProcess& serve) {
  auto status = StatusJson(serve.http_port());
  if (!status.ok()) return "<" + std::string(status.status().message()) + ">";
  const JsonValue* v = status->Find("upstream_state");
  return v == nullptr ? "<none>" : v->text;
}

int64_t Count(ServerSandbox& sb, const std::string& table) {
  auto rows = sb.Query(absl::StrCat("SELECT COUNT(*) FROM ", table));
  if (!rows.ok() || rows->empty() || !(*rows)[0][0]) return -1;
  return std::stoll(*(*rows)[0][0]);
}

// A source with app.t (one row), `binrelay serve` following it, and a real
// MariaDB replica reading through binrelay by GTID, caught up.
struct RelayedSource {
  std::unique_ptr<ServerSandbox> source;
  std::unique_ptr<ServeProcess> serve;
  std::unique_ptr<ServerSandbox> replica;
};

absl::StatusOr<RelayedSource> StartRelayedSource() {
  RelayedSource r;
  BR_ASSIGN_OR_RETURN(r.source, StartServeSource());
  BR_RETURN_IF_ERROR(r.source->Execute("CREATE DATABASE app"));
  BR_RETURN_IF_ERROR(r.source->Execute("CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(64))"));
  BR_RETURN_IF_ERROR(r.source->Execute("INSERT INTO app.t VALUES (1, 'before')"));
  BR_ASSIGN_OR_RETURN(r.serve, ServeProcess::Create(*r.source));
  BR_RETURN_IF_ERROR(r.serve->Start());
  BR_RETURN_IF_ERROR(WaitStoreReached(*r.serve, *r.source, seconds(60)).status());
  ReplicaOptions ro;
  ro.mode = ReplicaOptions::Mode::kGtidSlavePos;
  ro.server_id = 3;
  BR_ASSIGN_OR_RETURN(r.replica, StartReplicaOf(ReplicaEndpoint(*r.serve, *r.source), ro));
  BR_RETURN_IF_ERROR(WaitReplicaExecuted(*r.replica, *r.source, seconds(60)));
  return r;
}

// Every binlog file of the source, stored byte for byte (the open one a
// prefix).
void ExpectStoreIsTheSourcesBytes(ServerSandbox& source, const ServeProcess& serve) {
  auto files = SourceBinlogFiles(source);
  ASSERT_TRUE(files.ok()) << files.status();
  for (const std::string& f : *files) {
    BR_EXPECT_OK(CompareBinlogCopy(source.DataDir() + "/" + f, serve.store_dir() + "/" + f,
                                   CopyCompare::kPrefixIgnoringInUseFlag));
  }
}

// Guards: STOP SLAVE that leaves binrelay streaming (or only pretends to),
// START SLAVE that resumes with a gap or a duplicate (the store would
// refuse one, the replica would diverge), a stop that shows as an IO error,
// and the verbs reaching the upstream without the admin account.
TEST(ServeUpstreamControlTest, StopAndStartSlaveLeaveAndRejoinTheSourceWithoutAGap) {
  BR_ASSERT_OK_AND_ASSIGN(RelayedSource relayed, StartRelayedSource());
  auto& [source, serve, replica] = relayed;

  const protocol::ConnectOptions admin_login = ListenerLogin(*serve, kAdminUser, kAdminPassword);
  replication::ConnectionSqlSource repl(ListenerLogin(*serve, kReplUser, kReplPassword));
  replication::ConnectionSqlSource admin(admin_login);
  // Only the admin account may stop the upstream (1227).
  auto refused = repl.Query("STOP SLAVE");
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "1227")) << refused.status();
  EXPECT_EQ(UpstreamState(*serve), "streaming");
  // binrelay has one upstream and no SQL thread: each says so.
  auto channel = admin.Query("STOP REPLICA FOR CHANNEL 'other'");
  ASSERT_FALSE(channel.ok());
  EXPECT_TRUE(absl::StrContains(channel.status().message(), "no replication channel"))
      << channel.status();
  auto sql_thread = admin.Query("STOP SLAVE SQL_THREAD");
  ASSERT_FALSE(sql_thread.ok());
  EXPECT_TRUE(absl::StrContains(sql_thread.status().message(), "no SQL thread"))
      << sql_thread.status();
  EXPECT_EQ(UpstreamState(*serve), "streaming");

  // STOP SLAVE returns once the upstream has left: writes on the source
  // after it reach neither the store nor the replica.
  BR_ASSERT_OK(admin.Query("STOP SLAVE").status());
  EXPECT_EQ(UpstreamState(*serve), "paused") << serve->StderrTail();
  EXPECT_EQ(SlaveStatusColumn(admin_login, "Slave_IO_Running"), "No");
  EXPECT_EQ(SlaveStatusColumn(admin_login, "Last_IO_Error"), "");
  BR_ASSERT_OK(admin.Query("STOP SLAVE").status());  // already stopped: no error
  BR_ASSERT_OK_AND_ASSIGN(std::vector<std::string> files, SourceBinlogFiles(*source));
  const std::string open_file = serve->store_dir() + "/" + files.back();
  const uintmax_t stored_before = std::filesystem::file_size(open_file);
  for (int i = 0; i < 50; ++i) {
    BR_ASSERT_OK(source->Execute(absl::StrCat("INSERT INTO app.t VALUES (", 100 + i,
                                              ", REPEAT('x', 60))")));
  }
  // A transaction of many events, so that a stream cut inside one would
  // show as a gap or a duplicate below.
  BR_ASSERT_OK(source->Execute(
      "INSERT INTO app.t SELECT seq, 'bulk' FROM app.seq_1000_to_1999"));
  std::this_thread::sleep_for(seconds(2));
  EXPECT_EQ(std::filesystem::file_size(open_file), stored_before);
  EXPECT_EQ(Count(*replica, "app.t"), 1);
  EXPECT_EQ(UpstreamState(*serve), "paused");

  // START REPLICA (the MySQL spelling) resumes after the last stored
  // transaction: the replica gets everything exactly once and the store is
  // the source's bytes.
  BR_ASSERT_OK(admin.Query("START REPLICA").status());
  BR_ASSERT_OK(WaitStoreReached(*serve, *source, seconds(60)).status());
  BR_ASSERT_OK(WaitReplicaExecuted(*replica, *source, seconds(60)));
  EXPECT_EQ(Count(*replica, "app.t"), 1 + 50 + 1000);
  EXPECT_EQ(UpstreamState(*serve), "streaming");
  EXPECT_EQ(SlaveStatusColumn(admin_login, "Slave_IO_Running"), "Yes");
  BR_ASSERT_OK(admin.Query("START SLAVE").status());  // already running: no error
  ExpectStoreIsTheSourcesBytes(*source, *serve);

  // Stopped and started three times while writers commit: the replica
  // ends with every row exactly once and the store is the source's bytes.
  // (Whether a stop cut a transaction here is timing; the store dropping a
  // cut one is BinlogStoreTest.StreamRestartDropsTheInterruptedTransaction.)
  std::atomic<bool> writing{true};
  std::thread writer([&] {
    for (int i = 0; writing; ++i) {
      (void)source->Execute(absl::StrCat("INSERT INTO app.t SELECT seq + ", 10000 + i * 100,
                                         ", 'w' FROM app.seq_1_to_100"));
    }
  });
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    BR_ASSERT_OK(admin.Query("STOP ALL SLAVES").status());
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    BR_ASSERT_OK(admin.Query("START ALL SLAVES").status());
  }
  writing = false;
  writer.join();
  BR_ASSERT_OK(WaitStoreReached(*serve, *source, seconds(60)).status());
  BR_ASSERT_OK(WaitReplicaExecuted(*replica, *source, seconds(60)));
  EXPECT_EQ(Count(*replica, "app.t"), Count(*source, "app.t"));
  ExpectStoreIsTheSourcesBytes(*source, *serve);
  EXPECT_TRUE(absl::StrContains(serve->Stderr(), "upstream: stopped; the store ends at")) << serve->StderrTail();
}

// SHOW SLAVE STATUS's Last_IO_Error once it holds `text` (empty if it never
// does within `timeout`).
std::string WaitIoError(const protocol::ConnectOptions& admin, const std::string& text,
                        std::chrono::seconds timeout) {
  const auto give_up = std::chrono::steady_clock::now() + timeout;
  std::string last;
  while (std::chrono::steady_clock::now() < give_up) {
    last = SlaveStatusColumn(admin, "Last_IO_Error");
    if (absl::StrContains(last, text)) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ADD_FAILURE() << "Last_IO_Error never held '" << text << "'; last: " << last;
  return "";
}

// Guards: CHANGE MASTER TO taking effect while the upstream runs; a wrong
// password given by hand ending binrelay (and everything it serves)
// instead of stopping its upstream with the error; and, the worst, a
// CHANGE MASTER TO another server whose binlog has a file of the same name
// splicing that server's events onto the stored file.
TEST(ServeUpstreamControlTest, ChangeMasterToRepointsByHandAndRefusesAnotherServersBinlog) {
  BR_ASSERT_OK_AND_ASSIGN(RelayedSource relayed, StartRelayedSource());
  auto& [source, serve, replica] = relayed;
  // Another server whose binlog has the same file names, longer than the
  // source's: a dump from binrelay's position there finds a file to read.
  BR_ASSERT_OK_AND_ASSIGN(auto other, StartServeSource({"--server-id=9"}));
  BR_ASSERT_OK(other->Execute("CREATE DATABASE other"));
  BR_ASSERT_OK(other->Execute("CREATE TABLE other.t (id INT PRIMARY KEY, v LONGTEXT)"));
  BR_ASSERT_OK(other->Execute("INSERT INTO other.t VALUES (1, REPEAT('o', 200000))"));
  const protocol::ConnectOptions admin_login = ListenerLogin(*serve, kAdminUser, kAdminPassword);
  replication::ConnectionSqlSource admin(admin_login);

  // Running: refused as the servers refuse it (ER_SLAVE_MUST_STOP).
  auto running = admin.Query("CHANGE MASTER TO MASTER_PASSWORD = 'x'");
  ASSERT_FALSE(running.ok());
  EXPECT_TRUE(absl::StrContains(running.status().message(), "1198")) << running.status();
  // What binrelay cannot do is refused, naming the option.
  auto pos = admin.Query("CHANGE MASTER TO MASTER_LOG_POS = 4");
  ASSERT_FALSE(pos.ok());
  EXPECT_TRUE(absl::StrContains(pos.status().message(), "MASTER_LOG_POS")) << pos.status();

  // A wrong password: the upstream stops with the server's error, binrelay
  // keeps serving (the replica still reads through it).
  BR_ASSERT_OK(admin.Query("STOP SLAVE").status());
  BR_ASSERT_OK(admin.Query("CHANGE MASTER TO MASTER_PASSWORD = 'wrong'").status());
  BR_ASSERT_OK(admin.Query("START SLAVE").status());
  const std::string denied = WaitIoError(admin_login, "1045", seconds(30));
  EXPECT_TRUE(absl::StrContains(denied, "CHANGE MASTER TO")) << denied;  // where it came from
  EXPECT_TRUE(WaitUpstreamState(*serve, "paused", seconds(10)));
  EXPECT_TRUE(serve->Running());

  // A server without the stored file (its binlog has other names): the
  // dump's error (1236) stops the upstream, binrelay keeps serving.
  BR_ASSERT_OK_AND_ASSIGN(auto renamed, StartServeSource({"--server-id=8", "--log-bin=otherbin"}));
  BR_ASSERT_OK(admin.Query(absl::StrCat("CHANGE MASTER TO MASTER_PORT = ", renamed->Port(),
                                        ", MASTER_PASSWORD = '", kRelayPassword, "'"))
                   .status());
  BR_ASSERT_OK(admin.Query("START SLAVE").status());
  const std::string missing = WaitIoError(admin_login, "1236", seconds(30));
  EXPECT_TRUE(WaitUpstreamState(*serve, "paused", seconds(10))) << missing;
  EXPECT_TRUE(serve->Running()) << serve->StderrTail();
  BR_ASSERT_OK(admin.Query("STOP SLAVE").status());  // already stopped: no error

  // Another server: the FDE it re-sends for the stored file is not the
  // stored one; refused and retried, nothing stored.
  BR_ASSERT_OK_AND_ASSIGN(std::vector<std::string> files, SourceBinlogFiles(*source));
  const std::string open_file = serve->store_dir() + "/" + files.back();
  const uintmax_t stored_before = std::filesystem::file_size(open_file);
  BR_ASSERT_OK(admin.Query(absl::StrCat("CHANGE REPLICATION SOURCE TO SOURCE_PORT = ",
                                        other->Port()))
                   .status());
  BR_ASSERT_OK(admin.Query("START REPLICA").status());
  const std::string refused = WaitIoError(admin_login, "is not the stored", seconds(30));
  EXPECT_TRUE(absl::StrContains(refused, "server_id")) << refused;
  auto source_column = SlaveStatusColumn(admin_login, "Master_Port");
  EXPECT_EQ(source_column, absl::StrCat(other->Port()));
  EXPECT_EQ(std::filesystem::file_size(open_file), stored_before);
  EXPECT_TRUE(serve->Running());
  // Named by SHOW SLAVE STATUS, but not the source apply and the forwarder
  // use: the store refused its binlog.
  EXPECT_EQ(CurrentRelaySource(admin_login), absl::StrCat("127.0.0.1:", source->Port()));

  // Back to the source: it resumes where the store ends, no gap.
  BR_ASSERT_OK(admin.Query("STOP SLAVE").status());
  BR_ASSERT_OK(admin.Query(absl::StrCat("CHANGE MASTER TO MASTER_PORT = ", source->Port()))
                   .status());
  BR_ASSERT_OK(admin.Query("START SLAVE").status());
  BR_ASSERT_OK(source->Execute("INSERT INTO app.t VALUES (2, 'after')"));
  BR_ASSERT_OK(WaitStoreReached(*serve, *source, seconds(60)).status());
  BR_ASSERT_OK(WaitReplicaExecuted(*replica, *source, seconds(60)));
  EXPECT_EQ(Count(*replica, "app.t"), 2);
  EXPECT_EQ(SlaveStatusColumn(admin_login, "Last_IO_Error"), "");
  ExpectStoreIsTheSourcesBytes(*source, *serve);

  // A new address of the same server (a proxy in front of it), while it
  // takes no writes: the dump resumes inside the stored file and sends only
  // the format description the store compares, and that is enough for
  // apply and the forwarder to follow (the source is no longer Current: the
  // new address is not a listed candidate). Waiting for a write there
  // would leave them on the old address for as long as the source is idle.
  FaultProxy::Options po;
  po.upstream_port = source->Port();
  po.min_bytes = po.max_bytes = uint64_t{1} << 60;  // forwards cleanly
  BR_ASSERT_OK_AND_ASSIGN(auto proxy, FaultProxy::Start(po));
  BR_ASSERT_OK(admin.Query("STOP SLAVE").status());
  BR_ASSERT_OK(admin.Query(absl::StrCat("CHANGE MASTER TO MASTER_PORT = ", proxy->port()))
                   .status());
  BR_ASSERT_OK(admin.Query("START SLAVE").status());
  std::string current = CurrentRelaySource(admin_login);
  for (int i = 0; i < 100 && !current.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    current = CurrentRelaySource(admin_login);
  }
  EXPECT_EQ(current, "") << serve->StderrTail();
  EXPECT_EQ(SlaveStatusColumn(admin_login, "Last_IO_Error"), "");
}

}  // namespace
}  // namespace binrelay::testing
