// The clients of every release, with their default settings, read from
// binrelay as from their source: the release's replica (by file and position
// and by GTID auto-position), its mysqlbinlog / mariadb-binlog
// (--read-from-remote-server --raw, and --stop-never), and its command-line
// client for the admin SQL, through each way it authenticates (MySQL:
// caching_sha2_password over TLS, with the RSA key, from the cache; MariaDB:
// mysql_native_password, and 11.4+'s certificate check from another address).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/harness/replica_fixture.h"
#include "tests/harness/serve_fixture.h"
#include "tests/harness/server_flavour.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/workload.h"

namespace binrelay::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

// One value of the client's batch output: row `row`, column `col` (tabs).
std::string Cell(const std::string& output, size_t row, size_t col) {
  std::vector<std::string> rows = absl::StrSplit(output, '\n', absl::SkipEmpty());
  std::vector<std::string> cells;
  size_t seen = 0;
  for (const std::string& r : rows) {
    // Client warnings (a password on the command line; 10.5's client
    // reading a newer charset index) are not rows.
    if (absl::StrContains(r, "[Warning]") || absl::StrContains(r, ": Warning: ")) continue;
    if (seen++ == row) cells = absl::StrSplit(r, '\t');
  }
  return col < cells.size() ? cells[col] : "<none>";
}

class LiveClientsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void StartRelay(ServeOptions options = {}, std::vector<std::string> source_args = {}) {
    auto source = StartServeSource(source_args, GetParam());
    ASSERT_TRUE(source.ok()) << source.status();
    source_ = *std::move(source);
    auto serve = ServeProcess::Create(*source_, options);
    ASSERT_TRUE(serve.ok()) << serve.status();
    serve_ = *std::move(serve);
    BR_ASSERT_OK(serve_->Start());
  }

  const ServerFlavour& Flavour() const { return source_->Flavour(); }

  // The release's command-line client against 127.0.0.1:port (or `host`),
  // as the replicas' account, in batch mode (-N: no column names).
  CommandResult Client(uint16_t port, const std::string& sql, const std::string& extra = "",
                       const std::string& host = "127.0.0.1",
                       const std::string& password = kReplPassword) {
    return RunShellCommand(
        absl::StrCat(Flavour().client, " --no-defaults -h ", host, " -P ", port, " -u ", kReplUser,
                     " --password='", password, "' ", extra, " -N -B -e \"", sql, "\" 2>&1"),
        seconds(60));
  }

  std::unique_ptr<ServerSandbox> source_;
  std::unique_ptr<ServeProcess> serve_;
};

// Guards: a replica of the release that cannot log in to binrelay (MySQL 9
// has no mysql_native_password; its replicas need the RSA key or TLS for
// caching_sha2_password), that cannot start by GTID, or that diverges. Also
// the cache: after STOP/START the MySQL replica logs in by the fast path.
TEST_P(LiveClientsTest, ReplicasOfTheReleaseFollowByPositionAndByGtid) {
  BINRELAY_REQUIRE_FLAVOUR(GetParam());
  ServeOptions options;
  options.listen_address = "0.0.0.0";
  // MariaDB users turn on gtid_strict_mode, on the source and its replicas.
  const bool maria = GetParam().rfind("mariadb", 0) == 0;
  std::vector<std::string> strict;
  if (maria) strict = {"--gtid-strict-mode=ON"};
  ASSERT_NO_FATAL_FAILURE(StartRelay(options, strict));
  const MixedWorkloadOptions mix = CompactMix(300);
  BR_ASSERT_OK(RunMixedWorkload(*source_, "mix", mix));
  // Tagged GTIDs (MySQL 8.3+) in the stream, and later in the sets the
  // replicas send when they reconnect by GTID.
  auto tagged = [&](int id) -> absl::Status {
    if (!Flavour().mysql) return absl::OkStatus();
    BR_RETURN_IF_ERROR(source_->Execute("SET gtid_next = 'AUTOMATIC:relay_tag'"));
    BR_RETURN_IF_ERROR(source_->Execute(
        absl::StrCat("INSERT INTO mix.items (id, qty, name) VALUES (", id, ", 7, 'tagged')")));
    return source_->Execute("SET gtid_next = 'AUTOMATIC'");
  };
  BR_ASSERT_OK(tagged(800001));

  const MasterEndpoint relay = ReplicaEndpoint(*serve_, *source_);
  ReplicaOptions by_position;
  by_position.flavour = GetParam();
  by_position.server_id = 11;
  by_position.tls = ReplicaOptions::Tls::kReleaseDefault;
  ReplicaOptions by_gtid = by_position;
  by_gtid.server_id = 12;
  by_gtid.mode = ReplicaOptions::Mode::kGtidSlavePos;
  by_gtid.server_args = strict;
  // From an address that is not local: a MariaDB 11.4+ replica then
  // verifies binrelay's generated certificate by its default settings.
  BR_ASSERT_OK_AND_ASSIGN(by_gtid.host, NonLoopbackAddress());
  if (Flavour().mysql) {
    // As against mysqld, caching_sha2_password needs one of the two the
    // first time: the RSA key on a plain link, or TLS.
    by_position.extra = "GET_SOURCE_PUBLIC_KEY=1";
    by_gtid.tls = ReplicaOptions::Tls::kOn;
  }
  BR_ASSERT_OK_AND_ASSIGN(auto replica_p, StartReplicaOf(relay, by_position));
  BR_ASSERT_OK_AND_ASSIGN(auto replica_g, StartReplicaOf(relay, by_gtid));
  BR_ASSERT_OK(source_->Execute("FLUSH BINARY LOGS"));
  BR_ASSERT_OK(source_->Execute("INSERT INTO mix.items (id, qty, name) VALUES (900001, 1, 'late')"));
  for (ServerSandbox* r : {replica_p.get(), replica_g.get()}) {
    BR_ASSERT_OK(WaitReplicaExecuted(*r, *source_, seconds(120))) << serve_->StderrTail();
    EXPECT_TRUE(SameChecksums(*source_, *r, {"mix"}));
  }
  if (maria) {
    // The variant ran: strict mode on the source and the GTID replica.
    for (ServerSandbox* s : {source_.get(), replica_g.get()}) {
      BR_ASSERT_OK_AND_ASSIGN(SqlRows mode, s->Query("SELECT @@GLOBAL.gtid_strict_mode"));
      EXPECT_EQ(mode[0][0].value_or(""), "1");
    }
  }
  if (!Flavour().mysql && Flavour().AtLeast(11, 4)) {
    // Its defaults were TLS with the certificate verified: the path taken.
    BR_ASSERT_OK_AND_ASSIGN(auto status, replica_g->ReplicaStatus());
    EXPECT_EQ(status["Master_SSL_Allowed"], "Yes");
    EXPECT_EQ(status["Master_SSL_Verify_Server_Cert"], "Yes");
  }
  // binrelay lists both as its replicas (Server_id first), in the
  // release's own words.
  CommandResult hosts = Client(serve_->listen_port(), "SHOW REPLICAS");
  EXPECT_EQ(hosts.exit_code, 0) << hosts.output;
  std::vector<std::string> ids = {Cell(hosts.output, 0, 0), Cell(hosts.output, 1, 0)};
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::string>{"11", "12"})) << hosts.output;

  // Reconnect both (MySQL: now from binrelay's cache, no key or TLS needed
  // for the position replica's fast path) and replicate more.
  for (ServerSandbox* r : {replica_p.get(), replica_g.get()}) {
    BR_ASSERT_OK(r->Execute(r->IsMysql() ? "STOP REPLICA" : "STOP SLAVE"));
  }
  if (Flavour().mysql) {
    BR_ASSERT_OK(replica_p->Execute("CHANGE REPLICATION SOURCE TO GET_SOURCE_PUBLIC_KEY=0"));
  }
  BR_ASSERT_OK(source_->Execute("UPDATE mix.items SET qty = qty + 5 WHERE id % 11 = 0"));
  BR_ASSERT_OK(tagged(800002));
  for (ServerSandbox* r : {replica_p.get(), replica_g.get()}) {
    BR_ASSERT_OK(r->Execute(r->IsMysql() ? "START REPLICA" : "START SLAVE"));
  }
  for (ServerSandbox* r : {replica_p.get(), replica_g.get()}) {
    BR_ASSERT_OK(WaitReplicaExecuted(*r, *source_, seconds(120))) << serve_->StderrTail();
    EXPECT_TRUE(SameChecksums(*source_, *r, {"mix"}));
  }
  if (Flavour().mysql) {
    // The GTID replica holds the source's whole set, tags included.
    BR_ASSERT_OK_AND_ASSIGN(SqlRows want, source_->Query("SELECT @@GLOBAL.gtid_executed"));
    BR_ASSERT_OK_AND_ASSIGN(SqlRows got, replica_g->Query("SELECT @@GLOBAL.gtid_executed"));
    EXPECT_EQ(got[0][0], want[0][0]);
    EXPECT_TRUE(absl::StrContains(want[0][0].value_or(""), "relay_tag")) << *want[0][0];
  }
}

// Guards: the release's binlog tool getting other bytes from binrelay than
// the source has (file by file, byte for byte), or a --stop-never follower
// that stops following. The same invocation against the source is run
// first, so a failing one is binrelay's.
TEST_P(LiveClientsTest, BinlogToolDownloadsTheSourcesFilesAndFollows) {
  BINRELAY_REQUIRE_FLAVOUR(GetParam());
  ASSERT_NO_FATAL_FAILURE(StartRelay());
  const MixedWorkloadOptions mix = CompactMix(200);
  BR_ASSERT_OK(RunMixedWorkload(*source_, "mix", mix));
  BR_ASSERT_OK(source_->Execute("FLUSH BINARY LOGS"));
  BR_ASSERT_OK_AND_ASSIGN(SourceEnd end, WaitStoreReached(*serve_, *source_, seconds(60)));
  BR_ASSERT_OK_AND_ASSIGN(std::vector<std::string> files, SourceBinlogFiles(*source_));
  ASSERT_GE(files.size(), 4u);

  const std::string dir = serve_->dir() + "/download";
  auto download = [&](uint16_t port, const std::string& into, const std::string& user,
                      const std::string& password, const std::string& extra) {
    fs::create_directories(into);
    // --result-file with --raw is the prefix of every file written.
    return RunShellCommand(
        absl::StrCat(Flavour().binlog_tool,
                     " --no-defaults --read-from-remote-server --raw --result-file=", into,
                     "/ --host=127.0.0.1 --port=", port, " --user=", user, " --password='",
                     password, "' ", extra, " ", files[0]),
        seconds(120));
  };
  // --to-last-log: every file, ending at the source's current end.
  CommandResult direct = download(source_->Port(), dir + "/direct", kRelayUser, kRelayPassword,
                                  "--to-last-log");
  ASSERT_EQ(direct.exit_code, 0) << "against the source itself: " << direct.output;
  CommandResult relayed = download(serve_->listen_port(), dir + "/relay", kReplUser,
                                   kReplPassword, "--to-last-log");
  ASSERT_EQ(relayed.exit_code, 0) << relayed.output << serve_->StderrTail();
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string name = files[i];
    const CopyCompare mode = i + 1 < files.size() ? CopyCompare::kExact
                                                  : CopyCompare::kPrefixIgnoringInUseFlag;
    BR_EXPECT_OK(CompareBinlogCopy(source_->DataDir() + "/" + name, dir + "/relay/" + name, mode))
        << name;
  }

  // --stop-never: follows as new transactions and a rotation arrive.
  fs::create_directories(dir + "/follow");
  const std::string follow = absl::StrCat(
      "exec ", Flavour().binlog_tool, " --no-defaults --read-from-remote-server --raw",
      " --stop-never --result-file=", dir, "/follow/ --host=127.0.0.1 --port=",
      serve_->listen_port(), " --user=", kReplUser, " --password='", kReplPassword, "' ",
      end.file, " > ", dir, "/follow.log 2>&1");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", follow.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  BR_ASSERT_OK(source_->Execute("INSERT INTO mix.items (id, qty, name) VALUES (900002, 2, 'f')"));
  BR_ASSERT_OK(source_->Execute("FLUSH BINARY LOGS"));
  BR_ASSERT_OK(source_->Execute("INSERT INTO mix.items (id, qty, name) VALUES (900003, 3, 'g')"));
  BR_ASSERT_OK_AND_ASSIGN(auto last_end, source_->BinlogEnd());
  const SourceEnd last{last_end.first, last_end.second};
  const std::string followed = dir + "/follow/" + last.file;
  bool reached = false;
  for (int i = 0; i < 300 && !reached; ++i) {
    std::error_code ec;
    reached = fs::exists(followed, ec) && fs::file_size(followed, ec) >= last.pos;
    if (!reached) std::this_thread::sleep_for(milliseconds(100));
  }
  ::kill(pid, SIGTERM);
  int wstatus = 0;
  ::waitpid(pid, &wstatus, 0);
  ASSERT_TRUE(reached) << "--stop-never did not follow into " << last.file << ":" << last.pos
                       << ": " << ReadWholeFile(dir + "/follow.log") << serve_->StderrTail();
  BR_EXPECT_OK(CompareBinlogCopy(source_->DataDir() + "/" + end.file,
                                 dir + "/follow/" + end.file, CopyCompare::kExact));
  BR_EXPECT_OK(CompareBinlogCopy(source_->DataDir() + "/" + last.file, followed,
                                 CopyCompare::kPrefixIgnoringInUseFlag));
}

// Guards: the admin SQL in the release's own words (MySQL 8.4+: SHOW BINARY
// LOG STATUS, SHOW REPLICAS, SHOW REPLICA STATUS) and the older ones, each
// answered as the source answers it; and every way the release's client
// authenticates.
TEST_P(LiveClientsTest, ClientOfTheReleaseAuthenticatesAndRunsTheAdminSql) {
  BINRELAY_REQUIRE_FLAVOUR(GetParam());
  ServeOptions options;
  options.listen_address = "0.0.0.0";
  ASSERT_NO_FATAL_FAILURE(StartRelay(options));
  BR_ASSERT_OK(source_->Execute("CREATE DATABASE a"));
  BR_ASSERT_OK(source_->Execute("CREATE TABLE a.t (id INT PRIMARY KEY)"));
  BR_ASSERT_OK(source_->Execute("INSERT INTO a.t VALUES (1)"));
  BR_ASSERT_OK(source_->CreateUser("peek", "peek-pw", Flavour().ReplicationGrants()));
  BR_ASSERT_OK_AND_ASSIGN(SourceEnd end, WaitStoreReached(*serve_, *source_, seconds(60)));
  const uint16_t port = serve_->listen_port();

  // The binlog end: the same row as the source's, in both spellings.
  const std::string status_sql = Flavour().ShowBinlogStatus();
  CommandResult on_source = RunShellCommand(
      absl::StrCat(Flavour().client, " --no-defaults -h 127.0.0.1 -P ", source_->Port(),
                   " -u peek --password=peek-pw -N -B -e \"", status_sql, "\" 2>&1"),
      seconds(60));
  ASSERT_EQ(on_source.exit_code, 0) << on_source.output;
  for (const char* sql : {"SHOW BINARY LOG STATUS", "SHOW MASTER STATUS"}) {
    CommandResult r = Client(port, sql);
    ASSERT_EQ(r.exit_code, 0) << sql << ": " << r.output;
    EXPECT_EQ(Cell(r.output, 0, 0), end.file) << sql << ": " << r.output;
    EXPECT_EQ(Cell(r.output, 0, 1), std::to_string(end.pos)) << sql << ": " << r.output;
    EXPECT_EQ(Cell(r.output, 0, 0), Cell(on_source.output, 0, 0));
    EXPECT_EQ(Cell(r.output, 0, 1), Cell(on_source.output, 0, 1));
    if (Flavour().mysql) {
      EXPECT_EQ(Cell(r.output, 0, 4), Cell(on_source.output, 0, 4)) << "Executed_Gtid_Set";
    }
  }
  for (const char* sql : {"SHOW BINARY LOGS", "SHOW REPLICAS", "SHOW SLAVE HOSTS"}) {
    CommandResult r = Client(port, sql);
    EXPECT_EQ(r.exit_code, 0) << sql << ": " << r.output;
  }
  // binrelay is a replica of the source: its own status, in both spellings.
  for (const char* sql : {"SHOW REPLICA STATUS", "SHOW SLAVE STATUS"}) {
    CommandResult r = RunShellCommand(
        absl::StrCat(Flavour().client, " --no-defaults -h 127.0.0.1 -P ", port, " -u ", kReplUser,
                     " --password=", kReplPassword, " -E -e \"", sql, "\" 2>&1"),
        seconds(60));
    EXPECT_EQ(r.exit_code, 0) << sql << ": " << r.output;
    EXPECT_TRUE(absl::StrContains(r.output, absl::StrCat("_Port: ", source_->Port())))
        << sql << ": " << r.output;
    EXPECT_TRUE(absl::StrContains(r.output, "_IO_Running: Yes")) << sql << ": " << r.output;
  }

  if (Flavour().mysql) {
    // A restart empties binrelay's cache: without TLS or the key, the full
    // authentication caching_sha2_password needs is refused as mysqld
    // refuses it (CR_AUTH_PLUGIN_ERR 2061).
    serve_->Kill();
    BR_ASSERT_OK(serve_->Start());
    CommandResult plain = Client(port, "SELECT 1", "--ssl-mode=DISABLED");
    EXPECT_NE(plain.exit_code, 0) << plain.output;
    EXPECT_TRUE(absl::StrContains(plain.output, "2061")) << plain.output;
    // With the RSA key, fetched or pinned.
    CommandResult fetched =
        Client(port, "SELECT 1", "--ssl-mode=DISABLED --get-server-public-key");
    EXPECT_EQ(fetched.exit_code, 0) << fetched.output;
    serve_->Kill();
    BR_ASSERT_OK(serve_->Start());
    CommandResult pinned = Client(port, "SELECT 1",
                                  absl::StrCat("--ssl-mode=DISABLED --server-public-key-path=",
                                               serve_->store_dir(), "/.tls/public_key.pem"));
    EXPECT_EQ(pinned.exit_code, 0) << pinned.output;
    // Over TLS (the client's default), and then from the cache without TLS.
    serve_->Kill();
    BR_ASSERT_OK(serve_->Start());
    CommandResult tls = Client(port, "SHOW STATUS LIKE 'Ssl_cipher'");
    EXPECT_EQ(tls.exit_code, 0) << tls.output;
    CommandResult cached = Client(port, "SELECT 1", "--ssl-mode=DISABLED");
    EXPECT_EQ(cached.exit_code, 0) << cached.output;
    CommandResult wrong = Client(port, "SELECT 1", "", "127.0.0.1", "wrong");
    EXPECT_TRUE(absl::StrContains(wrong.output, "1045")) << wrong.output;
  } else if (Flavour().AtLeast(11, 4)) {
    // From an address that is not local the client verifies the generated
    // certificate by default; binrelay proves it knows the password hash.
    BR_ASSERT_OK_AND_ASSIGN(std::string address, NonLoopbackAddress());
    CommandResult remote = Client(port, "SELECT 1", "", address);
    EXPECT_EQ(remote.exit_code, 0) << remote.output;
    CommandResult wrong = Client(port, "SELECT 1", "", address, "wrong");
    EXPECT_TRUE(absl::StrContains(wrong.output, "1045")) << wrong.output;
  }
}

INSTANTIATE_TEST_SUITE_P(Flavours, LiveClientsTest, ::testing::ValuesIn(ServerFlavour::All()),
                         FlavourTestName<::testing::TestParamInfo<std::string>>);

}  // namespace
}  // namespace binrelay::testing
