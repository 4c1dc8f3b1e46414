// binrelay serve with TLS on both sides, and a stalled dump next to a healthy
// replica (optional TLS on [listen], ssl_mode=verify_ca upstream; a
// slow or stalled replica never slows the upstream session or others).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/replica_fixture.h"
#include "tests/harness/serve_fixture.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

using std::chrono::seconds;
using Mode = ReplicaOptions::Mode;

// Guards: [listen] ssl_cert/ssl_key not offering TLS (a replica with
// MASTER_SSL=1 and certificate verification cannot connect), and
// [source] ssl_mode=verify_ca not working against a real server.
TEST(ServeTlsTest, VerifiedTlsOnBothSidesReplicates) {
  BR_ASSERT_OK_AND_ASSIGN(auto source, StartServeSource());
  // The sandbox's self-signed certificate is valid for 127.0.0.1: binrelay
  // serves it too, so one CA file verifies both hops.
  const std::string ca = source->TlsCaFile();
  ServeOptions o;
  o.overrides = {"--source.ssl_mode=verify_ca", "--source.ssl_ca=" + ca,
                 "--listen.ssl_cert=" + source->Dir() + "/cert.pem",
                 "--listen.ssl_key=" + source->Dir() + "/key.pem"};
  BR_ASSERT_OK_AND_ASSIGN(auto serve, ServeProcess::Create(*source, o));
  BR_ASSERT_OK(serve->Start());
  const MasterEndpoint master = ReplicaEndpoint(*serve, *source);
  BR_ASSERT_OK_AND_ASSIGN(auto replica,
                          StartReplicaOf(master, {.server_id = 2, .mode = Mode::kGtidSlavePos}));
  BR_ASSERT_OK(replica->Execute("STOP SLAVE"));
  BR_ASSERT_OK(replica->Execute(absl::StrCat("CHANGE MASTER TO MASTER_SSL=1, MASTER_SSL_CA='", ca,
                                             "', MASTER_SSL_VERIFY_SERVER_CERT=1")));
  BR_ASSERT_OK(replica->Execute("START SLAVE"));
  BR_ASSERT_OK(source->Execute("CREATE DATABASE tls"));
  BR_ASSERT_OK(source->Execute("CREATE TABLE tls.t (id INT PRIMARY KEY, v VARCHAR(20))"));
  BR_ASSERT_OK(source->Execute("INSERT INTO tls.t VALUES (1, 'over'), (2, 'tls')"));
  BR_ASSERT_OK_AND_ASSIGN(std::string gtid, GtidBinlogPos(*source));
  BR_EXPECT_OK(WaitReplicaCaughtUp(*replica, gtid, seconds(60))) << serve->StderrTail();
  EXPECT_TRUE(SameChecksums(*source, *replica, {"tls"}));
  // The same port still serves clients that do not ask for TLS.
  CommandResult plain = RunShellCommand(
      absl::StrCat("mariadb --no-defaults --skip-ssl --protocol=tcp -h127.0.0.1 -P",
                   master.port, " -u", master.user, " -p", master.password,
                   " -N -e 'SELECT @@server_id'"),
      seconds(30));
  EXPECT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_NE(plain.output.find("1"), std::string::npos) << plain.output;
  BR_EXPECT_OK(serve->Stop());
}

// Guards [listen] ssl_mode = required: a client that does not switch to TLS
// is refused with error 3159 before its password is checked, while the same
// client with TLS logs in (the setting, not the certificate, makes the
// difference: without it the plain login above succeeds).
TEST(ServeTlsTest, ListenSslModeRequiredRefusesPlainLogins) {
  BR_ASSERT_OK_AND_ASSIGN(auto source, StartServeSource());
  ServeOptions o;
  o.overrides = {"--listen.ssl_cert=" + source->Dir() + "/cert.pem",
                 "--listen.ssl_key=" + source->Dir() + "/key.pem", "--listen.ssl_mode=required"};
  BR_ASSERT_OK_AND_ASSIGN(auto serve, ServeProcess::Create(*source, o));
  BR_ASSERT_OK(serve->Start());
  // Until it has reached its source, binrelay answers every login "starting".
  BR_ASSERT_OK(WaitStoreReached(*serve, *source, seconds(30)));
  const MasterEndpoint master = ReplicaEndpoint(*serve, *source);
  auto client = [&](const std::string& tls, const std::string& password) {
    return RunShellCommand(absl::StrCat("mariadb --no-defaults ", tls, " --protocol=tcp -h127.0.0.1 -P",
                                        master.port, " -u", master.user, " -p", password,
                                        " -N -e 'SELECT @@server_id' 2>&1"),
                           seconds(30));
  };
  CommandResult plain = client("--skip-ssl", master.password);
  EXPECT_NE(plain.exit_code, 0) << plain.output;
  EXPECT_NE(plain.output.find("3159"), std::string::npos) << plain.output;
  EXPECT_NE(plain.output.find("insecure transport"), std::string::npos) << plain.output;
  // Refused before the password is looked at: a wrong one gets the same.
  CommandResult wrong = client("--skip-ssl", "not-the-password");
  EXPECT_NE(wrong.output.find("3159"), std::string::npos) << wrong.output;
  CommandResult tls = client("--ssl", master.password);
  EXPECT_EQ(tls.exit_code, 0) << tls.output;
  EXPECT_NE(tls.output.find("1"), std::string::npos) << tls.output;
  BR_EXPECT_OK(serve->Stop());
}

// A child process we can freeze: `mariadb-binlog --stop-never` dumping from
// binrelay. Killed and reaped by pid in the destructor.
class FrozenReader {
 public:
  FrozenReader(const MasterEndpoint& m, const std::string& dir) {
    pid_ = ::fork();
    if (pid_ == 0) {
      if (::chdir(dir.c_str()) != 0) ::_exit(127);
      std::string port = absl::StrCat("--port=", m.port);
      std::string user = absl::StrCat("--user=", m.user);
      std::string pw = absl::StrCat("--password=", m.password);
      ::execlp("mariadb-binlog", "mariadb-binlog", "--no-defaults", "--read-from-remote-server",
               "--raw", "--stop-never", "--stop-never-slave-server-id=77", "--protocol=tcp",
               "--host=127.0.0.1", port.c_str(), user.c_str(), pw.c_str(), "mysql-bin.000001",
               static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~FrozenReader() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  void Freeze() { ::kill(pid_, SIGSTOP); }

 private:
  pid_t pid_ = -1;
};

// Guards: one frozen consumer (it stops reading; its socket fills) holding
// up the store or the other replicas — the dump must only block itself.
TEST(ServeStallTest, FrozenReaderDoesNotSlowTheHealthyReplica) {
  BR_ASSERT_OK_AND_ASSIGN(auto source, StartServeSource());
  // A write timeout far beyond the bound below: were the healthy replica
  // waiting on the frozen one, it would take at least this long.
  ServeOptions options;
  options.overrides = {"--listen.read_timeout=600s"};
  BR_ASSERT_OK_AND_ASSIGN(auto serve, ServeProcess::Create(*source, options));
  BR_ASSERT_OK(serve->Start());
  const MasterEndpoint master = ReplicaEndpoint(*serve, *source);
  BR_ASSERT_OK_AND_ASSIGN(auto healthy,
                          StartReplicaOf(master, {.server_id = 2, .mode = Mode::kGtidSlavePos}));
  FrozenReader frozen(master, serve->dir());
  bool listed = false;
  for (int i = 0; i < 300 && !listed; ++i) {  // its dump has started: binrelay lists it
    listed = HttpGet(serve->http_port(), "/status").find("server_id 77") != std::string::npos;
    if (!listed) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(listed) << "the frozen reader's dump never started\n" << serve->StderrTail();
  frozen.Freeze();
  // ~60 MiB of rows: far more than the frozen reader's socket buffers hold.
  BR_ASSERT_OK(source->Execute("CREATE DATABASE stall"));
  BR_ASSERT_OK(source->Execute("CREATE TABLE stall.t (id INT PRIMARY KEY, pad VARCHAR(1000))"));
  for (int i = 0; i < 6; ++i) {
    BR_ASSERT_OK(source->Execute(absl::StrCat(
        "INSERT INTO stall.t SELECT seq, REPEAT(CHAR(65 + ", i, "), 1000) FROM stall.seq_", i * 10000 + 1,
        "_to_", (i + 1) * 10000)));
    BR_ASSERT_OK(source->Execute(absl::StrCat("UPDATE stall.t SET pad = REPEAT('z', 1000) "
                                              "WHERE id > ", i * 10000)));
  }
  BR_ASSERT_OK_AND_ASSIGN(std::string gtid, GtidBinlogPos(*source));
  auto started = std::chrono::steady_clock::now();
  BR_EXPECT_OK(WaitReplicaCaughtUp(*healthy, gtid, seconds(300))) << serve->StderrTail();
  // Well inside the 600 s write timeout for the frozen one (with room for a
  // sanitizer build): the healthy replica was not waiting for it.
  EXPECT_LT(std::chrono::steady_clock::now() - started, seconds(180));
  EXPECT_TRUE(SameChecksums(*source, *healthy, {"stall"}));
  // /status still lists the frozen reader, behind the store's end.
  const std::string status = HttpGet(serve->http_port(), "/status");
  EXPECT_NE(status.find("server_id 77"), std::string::npos) << status;
  BR_EXPECT_OK(serve->Stop());
}

}  // namespace
}  // namespace binrelay::testing
