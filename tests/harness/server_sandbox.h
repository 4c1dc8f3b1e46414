// ServerSandbox: a throwaway MySQL or MariaDB server for integration tests,
// of any ServerFlavour (default: Debian 12's MariaDB 10.11). Each sandbox gets
// its own temp datadir, a free loopback port, its own socket, binary logging
// in ROW format, and TLS with a throwaway self-signed certificate (valid for
// 127.0.0.1 and localhost).
//
// A missing server is an error: for 10.11 the test must fail, not skip (CI
// always installs it via scripts/setup.sh); for a fetched flavour the
// error names scripts/fetch-servers.sh (tests check BINRELAY_REQUIRE_FLAVOUR
// first).
//
// Startup is kept fast: a datadir is initialised once per flavour and test
// process (mariadb-install-db, mysqld --initialize-insecure) and copied for
// every sandbox; InnoDB runs with a small buffer pool and log, and
// durability settings are relaxed.
//
// Thread safety: a sandbox is used from one thread at a time; different
// sandboxes are independent.
// Lifetime: the destructor stops exactly the process it started (SIGTERM,
// then SIGKILL after a timeout) and removes the temp dir (kept if
// BINRELAY_KEEP_SANDBOX is set). The server also gets SIGTERM if the thread
// that started it exits (PR_SET_PDEATHSIG), so start sandboxes from the test
// thread, not from a short-lived helper thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <utility>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "protocol/client_connection.h"
#include "tests/harness/server_flavour.h"

typedef struct st_mysql MYSQL;

namespace binrelay::testing {

struct ServerSandboxOptions {
  // ServerFlavour::Find's names; "" is the default (mariadb-10.11).
  std::string flavour;
  uint32_t server_id = 1;
  bool tls = true;
  // Appended after the defaults, so they override them (later options win),
  // e.g. {"--binlog-checksum=NONE", "--gtid-domain-id=2"}.
  std::vector<std::string> extra_args;
  std::chrono::seconds startup_timeout{30};
};

using SqlRows = std::vector<std::vector<std::optional<std::string>>>;

class ServerSandbox {
 public:
  static absl::StatusOr<std::unique_ptr<ServerSandbox>> Start(
      const ServerSandboxOptions& options = {});
  ~ServerSandbox();
  ServerSandbox(const ServerSandbox&) = delete;
  ServerSandbox& operator=(const ServerSandbox&) = delete;

  const ServerFlavour& Flavour() const { return flavour_; }
  bool IsMysql() const { return flavour_.mysql; }
  uint16_t Port() const { return port_; }
  std::string Host() const { return "127.0.0.1"; }
  pid_t Pid() const { return pid_; }
  const std::string& Dir() const { return dir_; }
  std::string DataDir() const { return dir_ + "/data"; }
  std::string SocketPath() const { return dir_ + "/server.sock"; }
  std::string ErrorLogPath() const { return dir_ + "/error.log"; }
  // CA file that verifies the server certificate (it is self-signed).
  std::string TlsCaFile() const { return dir_ + "/cert.pem"; }

  // Runs SQL as root over the Unix socket with libmysqlclient.
  absl::Status Execute(std::string_view sql);
  absl::StatusOr<SqlRows> Query(std::string_view sql);
  // CREATE USER user@'%' IDENTIFIED BY password; GRANT grants ON *.* TO it.
  // (On MySQL with the server's default plugin, caching_sha2_password.)
  absl::Status CreateUser(std::string_view user, std::string_view password,
                          std::string_view grants = "ALL PRIVILEGES");
  // The binlog end (SHOW MASTER STATUS or SHOW BINARY LOG STATUS): file, position.
  absl::StatusOr<std::pair<std::string, uint64_t>> BinlogEnd();
  // Makes this server a replica of host:port by file and position or by GTID
  // auto-position (MariaDB MASTER_USE_GTID=slave_pos, MySQL
  // SOURCE_AUTO_POSITION=1), in the flavour's own words, and starts it.
  // `extra` is appended to the option list (e.g. "MASTER_SSL=1").
  absl::Status StartReplicaOf(const std::string& host, uint16_t port, std::string_view user,
                              std::string_view password, bool use_gtid,
                              std::string_view file = "", uint64_t pos = 0,
                              std::string_view extra = "");
  // SHOW SLAVE/REPLICA STATUS as column name -> value (empty map: none).
  absl::StatusOr<std::map<std::string, std::string>> ReplicaStatus();

  // ConnectOptions for binrelay's own client, pointing at this server.
  protocol::ConnectOptions ClientOptions(std::string_view user, std::string_view password) const;

  // The last `lines` lines of the server's error log.
  std::string ErrorLogTail(size_t lines = 30) const;

  // Stops the server (SIGTERM, SIGKILL after `timeout`). Idempotent; the
  // destructor calls it. The datadir is kept until destruction.
  void Stop(std::chrono::seconds timeout = std::chrono::seconds(30));
  // Starts the server again on the same datadir and port.
  absl::Status Restart();

 private:
  ServerSandbox() = default;
  absl::Status Launch();
  absl::Status WaitUntilReady();
  absl::StatusOr<MYSQL*> Root();

  ServerSandboxOptions options_;
  ServerFlavour flavour_;
  std::string dir_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
  MYSQL* root_ = nullptr;
};

// SHOW GLOBAL STATUS value `name` as a number (ON 1, OFF 0); -1 when the
// server has no such status or cannot be asked.
int64_t GlobalStatus(ServerSandbox& sb, const std::string& name);
// Polls GlobalStatus every 50 ms until it is `want`; false after `timeout`.
bool WaitGlobalStatus(ServerSandbox& sb, const std::string& name, int64_t want,
                      std::chrono::milliseconds timeout);

// The rows of `select` (whose first column is an integer id) by that id,
// the other columns in order.
absl::StatusOr<std::map<int, std::vector<std::optional<std::string>>>> RowsById(
    ServerSandbox& sb, std::string_view select);

// Returns a free loopback TCP port below the ephemeral range, reserved for
// this process's lifetime by a lock file in /tmp/binrelay-test-ports, so
// tests running in parallel never race for one.
absl::StatusOr<uint16_t> FindFreePort();

}  // namespace binrelay::testing
