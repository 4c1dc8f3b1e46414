// STOP SLAVE / START SLAVE (and the REPLICA spellings) on binrelay's
// listener: the upstream leaves a real source and comes back, with a real
// MariaDB replica of binrelay reading through it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "protocol/client_connection.h"
#include "replication/connection_sql_source.h"
#include "tests/harness/replica_fixture.h"
#include "tests/harness/serve_fixture.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

using std::chrono::seconds;

protocol::ConnectOptions Listener(const ServeProcess& serve, const char* user, const char* pw) {
  protocol::ConnectOptions o;
  o.port = serve.listen_port();
  o.user = user;
  o.password = pw;
  o.tls = protocol::ConnectOptions::Tls::kDisabled;
  return o;
}

// A column of SHOW SLAVE STATUS on binrelay's listener.
std::string SlaveStatusColumn(const protocol::ConnectOptions& o, const std::string& column) {
  auto conn = protocol::ClientConnection::Connect(o);
  if (!conn.ok()) return "<" + std::string(conn.status().message()) + ">";
  auto r = (*conn)->Query("SHOW SLAVE STATUS");
  if (!r.ok() || r->rows.empty()) return "<no row>";
  for (size_t i = 0; i < r->columns.size(); ++i) {
    if (r->columns[i] == column) return r->rows[0][i].value_or("NULL");
  }
  return "<no column " + column + ">";
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
  BR_ASSERT_OK_AND_ASSIGN(auto source, StartServeSource());
  BR_ASSERT_OK(source->Execute("CREATE DATABASE app"));
  BR_ASSERT_OK(source->Execute("CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(64))"));
  BR_ASSERT_OK(source->Execute("INSERT INTO app.t VALUES (1, 'before')"));
  BR_ASSERT_OK_AND_ASSIGN(auto serve, ServeProcess::Create(*source));
  BR_ASSERT_OK(serve->Start());
  BR_ASSERT_OK(WaitStoreReached(*serve, *source, seconds(60)).status());
  ReplicaOptions ro;
  ro.mode = ReplicaOptions::Mode::kGtidSlavePos;
  ro.server_id = 3;
  BR_ASSERT_OK_AND_ASSIGN(auto replica,
                          StartReplicaOf(ReplicaEndpoint(*serve, *source), ro));
  BR_ASSERT_OK(WaitReplicaExecuted(*replica, *source, seconds(60)));

  const protocol::ConnectOptions admin_login = Listener(*serve, kAdminUser, kAdminPassword);
  replication::ConnectionSqlSource repl(Listener(*serve, kReplUser, kReplPassword));
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

  // Stopped in the middle of a stream of writes: whatever transaction the
  // stop cut is dropped and read again, never stored twice or half.
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
  EXPECT_TRUE(absl::StrContains(serve->Stderr(), "stopped by STOP SLAVE")) << serve->StderrTail();
}

}  // namespace
}  // namespace binrelay::testing
