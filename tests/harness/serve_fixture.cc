#include "tests/harness/serve_fixture.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "protocol/status_macros.h"

namespace binrelay::testing {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

// Offset of the FDE's flags in a binlog file: 4 magic bytes + 18 header bytes
// (timestamp 4, type 1, server_id 4, size 4, log_pos 4) - flags are LE u16.
constexpr size_t kFdeFlagsOffset = 4 + 4 + 1 + 4 + 4 + 4;
constexpr uint8_t kBinlogInUse = 0x01;

bool TryConnect(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

std::string LastLines(const std::string& text, size_t lines) {
  std::vector<absl::string_view> all = absl::StrSplit(text, '\n');
  size_t from = all.size() > lines ? all.size() - lines : 0;
  return absl::StrJoin(all.begin() + from, all.end(), "\n");
}

}  // namespace

absl::StatusOr<std::unique_ptr<ServerSandbox>> StartServeSource(
    const std::vector<std::string>& extra_args, const std::string& flavour) {
  ServerSandboxOptions o;
  o.flavour = flavour;
  o.server_id = kSourceServerId;
  // The workload's 20 MiB row is built server-side (REPEAT), bounded by
  // max_allowed_packet; its UPDATE logs a 40 MiB event.
  o.extra_args = {"--max-allowed-packet=256M"};
  o.extra_args.insert(o.extra_args.end(), extra_args.begin(), extra_args.end());
  BR_ASSIGN_OR_RETURN(std::unique_ptr<ServerSandbox> sb, ServerSandbox::Start(o));
  BR_RETURN_IF_ERROR(sb->CreateUser(kRelayUser, kRelayPassword,
                                    "REPLICATION SLAVE, BINLOG MONITOR, SELECT"));
  BR_RETURN_IF_ERROR(sb->CreateUser(kReplUser, kReplPassword, "REPLICATION SLAVE"));
  return sb;
}

SemiSyncSource::SemiSyncSource(bool mysql)
    : prefix(mysql ? "rpl_semi_sync_source" : "rpl_semi_sync_master"),
      status_prefix(mysql ? "Rpl_semi_sync_source" : "Rpl_semi_sync_master") {
  if (mysql) server_args.push_back("--plugin-load-add=semisync_source.so");
  for (const char* setting : {"-enabled=ON", "-wait-point=AFTER_SYNC", "-timeout=100"}) {
    server_args.push_back(absl::StrCat("--", prefix, setting));
  }
}

absl::StatusOr<std::unique_ptr<ServeProcess>> ServeProcess::Create(const ServerSandbox& source,
                                                                   const ServeOptions& options) {
  std::unique_ptr<ServeProcess> p(new ServeProcess());
  std::string pattern = ::testing::TempDir() + "binrelay-serve-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp(", pattern, "): ", std::strerror(errno)));
  }
  p->dir_ = pattern;
  BR_ASSIGN_OR_RETURN(p->listen_port_, FindFreePort());
  BR_ASSIGN_OR_RETURN(p->http_port_, FindFreePort());
  p->overrides_ = options.overrides;
  p->env_ = options.env;
  std::ofstream out(p->config_path());
  out << "[source]\nhost = 127.0.0.1\nport = " << source.Port() << "\nuser = " << kRelayUser
      << "\npassword = " << options.source_password << "\nserver_id = 4001\nstart = " << options.start
      << "\nheartbeat = " << options.heartbeat << "\n"
      << "[store]\ndir = " << p->store_dir() << "\nsync = " << options.sync << "\n"
      << "[listen]\naddress = " << options.listen_address << "\nport = " << p->listen_port_
      << "\nserver_id = " << kSourceServerId << "\nuser = " << kReplUser
      << "\npassword = " << kReplPassword << "\nadmin_user = " << kAdminUser
      << "\nadmin_password = " << kAdminPassword << "\n"
      << "[http]\naddress = 127.0.0.1:" << p->http_port_ << "\n"
      << options.extra_config;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("writing ", p->config_path()));
  return p;
}

ServeProcess::~ServeProcess() {
  Kill();
  if (!dir_.empty() && !std::getenv("BINRELAY_KEEP_SANDBOX")) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

absl::Status ServeProcess::Start(milliseconds timeout) {
  if (Running()) return absl::FailedPreconditionError("binrelay serve is already running");
  Reap(milliseconds(0), SIGKILL);  // collect a run that exited on its own
  std::vector<std::string> args = {"serve", "--config", config_path()};
  args.insert(args.end(), overrides_.begin(), overrides_.end());
  BR_ASSIGN_OR_RETURN(proc_, BackgroundBinrelay::Start(args, env_));
  ++starts_;
  const auto deadline = Clock::now() + timeout;
  auto alive = [this] { return Running(); };
  auto left = [&] {
    return std::max(milliseconds(1),
                    std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
  };
  absl::Status s = WaitPortAccepts(http_port_, left(), alive);
  // Before the listener existed (or under BINRELAY_ITEST_DIRECT) replicas
  // do not need it; otherwise a relay that does not listen is not ready.
  if (s.ok() && !DirectReplicasRequested()) s = WaitPortAccepts(listen_port_, left(), alive);
  if (!s.ok()) {
    return Annotate(s, absl::StrCat("binrelay serve (start #", starts_, ") not ready; stderr:\n",
                                    StderrTail()));
  }
  return absl::OkStatus();
}

void ServeProcess::Reap(milliseconds timeout, int sig) {
  if (!proc_) return;
  if (sig != 0) proc_->Signal(sig);
  last_exit_ = proc_->Wait(timeout);
  absl::StrAppend(&past_stderr_, "--- run ", starts_, " (", last_exit_.Describe().substr(0, 60),
                  ") ---\n", last_exit_.err);
  proc_.reset();
}

void ServeProcess::Kill() { Reap(std::chrono::seconds(10), SIGKILL); }

absl::Status ServeProcess::Stop(milliseconds timeout) {
  if (!proc_) return absl::FailedPreconditionError("binrelay serve is not running");
  Reap(timeout, SIGTERM);
  if (last_exit_.timed_out || last_exit_.exit_code != 0) {
    return absl::InternalError(absl::StrCat("binrelay serve did not stop cleanly on SIGTERM: ",
                                            last_exit_.Describe()));
  }
  return absl::OkStatus();
}

bool ServeProcess::Running() const { return proc_ != nullptr && !proc_->OutputClosed(); }

std::string ServeProcess::Stderr() const {
  std::string out = past_stderr_;
  if (proc_) absl::StrAppend(&out, "--- run ", starts_, " (running) ---\n", proc_->StderrSoFar());
  return out;
}

std::string ServeProcess::StderrTail(size_t lines) const { return LastLines(Stderr(), lines); }

bool DirectReplicasRequested() {
  const char* v = std::getenv("BINRELAY_ITEST_DIRECT");
  return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}

protocol::ConnectOptions ListenerLogin(const ServeProcess& serve, std::string_view user,
                                       std::string_view password) {
  protocol::ConnectOptions o;
  o.port = serve.listen_port();
  o.user = std::string(user);
  o.password = std::string(password);
  o.tls = protocol::ConnectOptions::Tls::kRequired;
  return o;
}

std::string SlaveStatusColumn(const protocol::ConnectOptions& login, const std::string& column) {
  auto conn = protocol::ClientConnection::Connect(login);
  if (!conn.ok()) return "<" + std::string(conn.status().message()) + ">";
  auto r = (*conn)->Query("SHOW SLAVE STATUS");
  if (!r.ok() || r->rows.empty()) return "<no row>";
  for (size_t i = 0; i < r->columns.size(); ++i) {
    if (r->columns[i] == column) return r->rows[0][i].value_or("NULL");
  }
  return "<no column " + column + ">";
}

std::string CurrentRelaySource(const protocol::ConnectOptions& login) {
  auto conn = protocol::ClientConnection::Connect(login);
  if (!conn.ok()) return "<" + std::string(conn.status().message()) + ">";
  auto r = (*conn)->Query("SHOW RELAY SOURCES");
  if (!r.ok()) return "<" + std::string(r.status().message()) + ">";
  std::string current;
  for (const auto& row : r->rows) {
    if (row.size() > 1 && row[1].value_or("") == "Yes") current = row[0].value_or("");
  }
  return current;
}

MasterEndpoint ReplicaEndpoint(const ServeProcess& serve, const ServerSandbox& source) {
  if (DirectReplicasRequested()) return {source.Port(), kReplUser, kReplPassword};
  return {serve.listen_port(), kReplUser, kReplPassword};
}

absl::StatusOr<std::string> NonLoopbackAddress() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return absl::InternalError("getifaddrs failed");
  std::string found;
  for (ifaddrs* a = list; a != nullptr && found.empty(); a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
    if ((a->ifa_flags & IFF_LOOPBACK) != 0 || (a->ifa_flags & IFF_UP) == 0) continue;
    char text[INET_ADDRSTRLEN];
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if (inet_ntop(AF_INET, &in->sin_addr, text, sizeof text) != nullptr) found = text;
  }
  freeifaddrs(list);
  if (found.empty()) {
    return absl::NotFoundError("this host has no IPv4 address besides loopback");
  }
  return found;
}

absl::Status WaitPortAccepts(uint16_t port, milliseconds timeout,
                             const std::function<bool()>& alive) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    if (TryConnect(port)) return absl::OkStatus();
    if (!alive()) {
      return absl::UnavailableError(
          absl::StrCat("the process exited before 127.0.0.1:", port, " accepted connections"));
    }
    if (Clock::now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "127.0.0.1:", port, " did not accept connections within ", timeout.count(), " ms"));
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
}

absl::StatusOr<std::vector<std::string>> SourceBinlogFiles(ServerSandbox& source) {
  BR_ASSIGN_OR_RETURN(SqlRows rows, source.Query("SHOW BINARY LOGS"));
  std::vector<std::string> files;
  for (const auto& row : rows) {
    if (!row.empty() && row[0]) files.push_back(*row[0]);
  }
  if (files.empty()) return absl::FailedPreconditionError("SHOW BINARY LOGS returned no files");
  return files;
}

absl::StatusOr<SourceEnd> WaitStoreReached(const ServeProcess& serve, ServerSandbox& source,
                                           milliseconds timeout) {
  BR_ASSIGN_OR_RETURN(auto end, source.BinlogEnd());
  const std::string file = end.first;
  const uint64_t pos = end.second;
  // After a switch the source's files are kept in the newest store era
  // (era-N/, replication/store_era.h); an older era's file of the same name
  // is another server's.
  auto newest_copy = [&] {
    std::string dir = serve.store_dir();
    for (int era = 1;; ++era) {
      const std::string next = absl::StrCat(serve.store_dir(), "/era-", era);
      std::error_code ec;
      if (!fs::exists(next, ec)) return dir + "/" + file;
      dir = next;
    }
  };
  std::string path = newest_copy();
  const auto deadline = Clock::now() + timeout;
  uintmax_t size = 0;
  while (Clock::now() < deadline) {
    std::error_code ec;
    path = newest_copy();
    size = fs::file_size(path, ec);
    if (!ec && size >= pos) return SourceEnd{file, pos};
    std::this_thread::sleep_for(milliseconds(50));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "binrelay's store did not reach the source's end ", file, ":", pos, " within ",
      timeout.count(), " ms (stored: ", size, " bytes of ", path, ", binrelay ",
      serve.Running() ? "running" : "NOT running", "); stderr:\n", serve.StderrTail()));
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

absl::Status CompareBinlogBytes(std::string_view original, const std::string& copy_path,
                                std::string_view what, CopyCompare mode) {
  std::error_code ec;
  if (!fs::exists(copy_path, ec)) {
    return absl::NotFoundError(absl::StrCat(AV(what), ": the copy ", copy_path, " is missing"));
  }
  std::string copy = ReadWholeFile(copy_path);
  const bool prefix = mode != CopyCompare::kExact;
  // The first differing byte says more than the sizes: report it first.
  size_t n = std::min(copy.size(), original.size());
  for (size_t i = 0; i < n; ++i) {
    uint8_t a = static_cast<uint8_t>(original[i]);
    uint8_t b = static_cast<uint8_t>(copy[i]);
    if (mode == CopyCompare::kPrefixIgnoringInUseFlag && i == kFdeFlagsOffset) {
      a &= ~kBinlogInUse;
      b &= ~kBinlogInUse;
    }
    if (a != b) {
      return absl::DataLossError(absl::StrFormat(
          "%s: %s differs from the original at byte %u (original 0x%02x, copy 0x%02x); sizes: "
          "original %u, copy %u",
          AV(what), copy_path, i, a, b, original.size(), copy.size()));
    }
  }
  if (mode == CopyCompare::kExact && copy.size() != original.size()) {
    return absl::DataLossError(absl::StrFormat(
        "%s: %s has %u bytes, the original %u (identical up to the shorter length)", AV(what),
        copy_path, copy.size(), original.size()));
  }
  if (prefix && (copy.size() > original.size() || copy.size() < 4)) {
    return absl::DataLossError(absl::StrFormat(
        "%s: %s has %u bytes; expected a non-empty prefix of the original's %u bytes", AV(what),
        copy_path, copy.size(), original.size()));
  }
  return absl::OkStatus();
}

absl::Status CompareBinlogCopy(const std::string& original_path, const std::string& copy_path,
                               CopyCompare mode) {
  std::error_code ec;
  if (!fs::exists(original_path, ec)) {
    return absl::NotFoundError(absl::StrCat("the original ", original_path, " is missing"));
  }
  return CompareBinlogBytes(ReadWholeFile(original_path), copy_path,
                            fs::path(original_path).filename().string(), mode);
}

CommandResult RunShellCommand(const std::string& command, std::chrono::seconds timeout) {
  CommandResult r;
  std::string full = absl::StrCat("timeout -k 5 ", timeout.count(), " ", command, " 2>&1");
  FILE* f = popen(full.c_str(), "r");
  if (f == nullptr) {
    r.output = absl::StrCat("popen failed: ", std::strerror(errno));
    return r;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) r.output.append(buf, n);
  int status = pclose(f);
  if (status != -1 && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

std::string HttpGet(uint16_t port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    std::string req = "GET " + path + " HTTP/1.0\r\n\r\n";
    (void)!write(fd, req.data(), req.size());
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

absl::StatusOr<JsonValue> StatusJson(uint16_t port) {
  const std::string response = HttpGet(port, "/status");
  const size_t at = response.find("\r\n\r\n");
  if (at == std::string::npos) {
    return absl::UnavailableError(absl::StrCat("no HTTP response from 127.0.0.1:", port));
  }
  return ParseJson(std::string_view(response).substr(at + 4));
}

}  // namespace binrelay::testing
