// Serve fixture: what the `binrelay serve` integration tests share.
//  - a source sandbox with binrelay's account and the replicas' account;
//  - ServeProcess: a config file (source, temp store, free listen and HTTP
//    ports), and `binrelay serve` started, waited for (listen port accepts),
//    killed with SIGKILL, restarted on the same store, or stopped cleanly;
//  - comparisons of stored/downloaded binlog files with the source's bytes.
// Replica helpers are in replica_fixture.h, workloads in workload.h.
//
// Debugging aid: with BINRELAY_ITEST_DIRECT=1 in the environment,
// ReplicaEndpoint() points replicas (and the listener attacks) at the
// source itself instead of binrelay's listener, so a failing test can be
// told apart from a harness bug: a test that fails directly is broken.
//
// Thread safety: a ServeProcess is driven from the test thread; the
// free functions are independent. Lifetime: a ServeProcess kills its child
// (if running) and removes its temp dir (kept if BINRELAY_KEEP_SANDBOX is
// set) on destruction; returned strings are copies.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "protocol/client_connection.h"
#include "tests/harness/binrelay_process.h"
#include "tests/harness/json_lite.h"
#include "tests/harness/server_sandbox.h"

namespace binrelay::testing {

// binrelay's account on the source.
inline constexpr char kRelayUser[] = "relay";
inline constexpr char kRelayPassword[] = "relay-pw";
// The replicas' account: [listen] user/password, and the same account on
// the source for BINRELAY_ITEST_DIRECT.
inline constexpr char kReplUser[] = "repl";
inline constexpr char kReplPassword[] = "repl-pw";
// [listen] admin_user/admin_password: PURGE, KILL of others, CUTOVER MOVE.
inline constexpr char kAdminUser[] = "relay_admin";
inline constexpr char kAdminPassword[] = "admin-pw";
// The target's account a move writes with ([move] target_user).
inline constexpr char kMover[] = "mover";
inline constexpr char kMoverPassword[] = "mover-pw";
// The server_id binrelay reports to its replicas: the source's own.
inline constexpr uint32_t kSourceServerId = 1;

// Starts a source (server_id 1) of `flavour` ("" = mariadb-10.11) with room
// for the workload's 40 MiB row events and creates both accounts.
// `extra_args` go to the server.
absl::StatusOr<std::unique_ptr<ServerSandbox>> StartServeSource(
    const std::vector<std::string>& extra_args = {}, const std::string& flavour = "");

// Semi-synchronous replication on a source, in each release's words:
// MariaDB's built-in rpl_semi_sync_master_*, MySQL's semisync_source plugin
// and rpl_semi_sync_source_*. `prefix` names the variables; `server_args`
// enable it with wait point AFTER_SYNC and a 100 ms timeout (the source's
// own setup commits fall back at once until a semi-sync replica is there; a
// test raises it then).
struct SemiSyncSource {
  explicit SemiSyncSource(bool mysql);
  std::string prefix;                    // "rpl_semi_sync_source" / "_master"
  std::string status_prefix;             // "Rpl_semi_sync_source" / "_master"
  std::vector<std::string> server_args;  // for StartServeSource
};

struct ServeOptions {
  std::string start = "earliest";   // [source] start
  std::string sync = "transaction";  // [store] sync
  std::string heartbeat = "1s";      // [source] heartbeat
  // [source] password. Not an override: binrelay refuses passwords on its
  // command line.
  std::string source_password = kRelayPassword;
  // More --section.key=value arguments for every start.
  std::vector<std::string> overrides;
  // Appended to the config file as it is (e.g. [apply.NAME] sections).
  std::string extra_config;
  // Environment for every start (e.g. TZ).
  EnvVars env;
  // [listen] address ("0.0.0.0" lets clients come from another address).
  std::string listen_address = "127.0.0.1";
};

class ServeProcess {
 public:
  // Writes the config; does not start binrelay.
  static absl::StatusOr<std::unique_ptr<ServeProcess>> Create(const ServerSandbox& source,
                                                              const ServeOptions& options = {});
  ~ServeProcess();
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  // Starts `binrelay serve --config FILE` and waits (bounded) until the
  // HTTP port and the listen port accept connections. An exit before that
  // is an error carrying binrelay's stderr.
  absl::Status Start(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // SIGKILL and reap (no chance to flush anything). No-op if not running.
  void Kill();
  // SIGTERM; an exit other than 0 within `timeout` is an error.
  absl::Status Stop(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // True while the current child has not exited (its output is open).
  bool Running() const;
  // One more "--section.key=value" argument from the next Start on, for a
  // setting that names a server started after this one was created.
  void AddOverride(std::string override_arg) { overrides_.push_back(std::move(override_arg)); }
  // The running child's pid (-1 if none).
  pid_t pid() const { return proc_ ? proc_->pid() : -1; }

  uint16_t listen_port() const { return listen_port_; }
  uint16_t http_port() const { return http_port_; }
  const std::string& dir() const { return dir_; }
  std::string store_dir() const { return dir_ + "/store"; }
  std::string config_path() const { return dir_ + "/binrelay.cnf"; }
  int starts() const { return starts_; }
  // stderr of every run so far, each headed by "--- run N ---".
  std::string Stderr() const;
  // The last `lines` lines of Stderr(), for failure messages.
  std::string StderrTail(size_t lines = 40) const;

 private:
  ServeProcess() = default;
  void Reap(std::chrono::milliseconds timeout, int sig);

  std::string dir_;
  uint16_t listen_port_ = 0;
  uint16_t http_port_ = 0;
  std::vector<std::string> overrides_;
  EnvVars env_;
  std::unique_ptr<BackgroundBinrelay> proc_;
  std::string past_stderr_;
  ProcessResult last_exit_;
  int starts_ = 0;
};

// Where a replica connects (CHANGE MASTER TO ...).
struct MasterEndpoint {
  uint16_t port = 0;
  std::string user;
  std::string password;
};
// True when BINRELAY_ITEST_DIRECT is set (see the file comment).
bool DirectReplicasRequested();
// binrelay's listener, or the source under BINRELAY_ITEST_DIRECT.
MasterEndpoint ReplicaEndpoint(const ServeProcess& serve, const ServerSandbox& source);

// A login to binrelay's listener (TLS: binrelay greets with
// caching_sha2_password when its source is MySQL).
protocol::ConnectOptions ListenerLogin(const ServeProcess& serve, std::string_view user,
                                       std::string_view password);
// A column of SHOW SLAVE STATUS on binrelay's listener ("<...>" when it
// cannot be read).
std::string SlaveStatusColumn(const protocol::ConnectOptions& login, const std::string& column);
// The Source of the row SHOW RELAY SOURCES marks Current on binrelay's
// listener ("" if none; "<...>" when it cannot be read).
std::string CurrentRelaySource(const protocol::ConnectOptions& login);

// This host's first IPv4 address that is not loopback (a client connecting
// there is not "local" to MariaDB 11.4+'s certificate checks); NotFound if
// the host has none.
absl::StatusOr<std::string> NonLoopbackAddress();

// Polls connect() to 127.0.0.1:port every 20 ms until it succeeds, `alive`
// returns false (error), or `timeout` passes (DeadlineExceeded).
absl::Status WaitPortAccepts(uint16_t port, std::chrono::milliseconds timeout,
                             const std::function<bool()>& alive);

// SHOW BINARY LOGS: the source's files, oldest first (the last is open).
absl::StatusOr<std::vector<std::string>> SourceBinlogFiles(ServerSandbox& source);

// The source's binlog end (SHOW MASTER STATUS).
struct SourceEnd {
  std::string file;
  uint64_t pos = 0;
};
// Waits until binrelay's store holds the source's current binlog end: its
// copy of that file (in the newest store era) is at least that long. Returns the end waited for (the
// source may append a BINLOG_CHECKPOINT later, so a later read of the
// source's file can be longer).
absl::StatusOr<SourceEnd> WaitStoreReached(const ServeProcess& serve, ServerSandbox& source,
                                           std::chrono::milliseconds timeout);

enum class CopyCompare {
  kExact,
  // The copy is a prefix of the original (an open file, or one still
  // being written), not empty.
  kPrefix,
  // kPrefix, except the FDE's LOG_EVENT_BINLOG_IN_USE_F (byte 22): dump
  // streams clear it, while the source's open file has it set.
  kPrefixIgnoringInUseFlag,
};
// Compares two files; the error names the first differing byte offset and
// both sizes.
absl::Status CompareBinlogCopy(const std::string& original_path, const std::string& copy_path,
                               CopyCompare mode);
// The same with the original's bytes in memory (e.g. saved before PURGE).
absl::Status CompareBinlogBytes(std::string_view original, const std::string& copy_path,
                                std::string_view what, CopyCompare mode);

std::string ReadWholeFile(const std::string& path);

// GET http://127.0.0.1:port/path (HTTP/1.0): the whole response, headers
// included ("" if the connection failed).
std::string HttpGet(uint16_t port, const std::string& path);
// GET /status, its body parsed (an error if unreachable or not JSON).
absl::StatusOr<JsonValue> StatusJson(uint16_t port);

struct CommandResult {
  int exit_code = -1;  // 124: the timeout fired
  std::string output;  // stdout and stderr together
};
// Runs `command` with /bin/sh under coreutils `timeout`.
CommandResult RunShellCommand(const std::string& command, std::chrono::seconds timeout);

}  // namespace binrelay::testing
