#include "tests/harness/mariadb_sandbox.h"

#include <fcntl.h>
#include <mysql.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "protocol/status_macros.h"

namespace binrelay::testing {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// InnoDB sizing shared by mariadb-install-db and mariadbd: a datadir must be
// started with the data-file path it was created with.
const std::vector<std::string>& InnoDbArgs() {
  static const std::vector<std::string> args = {
      "--innodb-buffer-pool-size=16M", "--innodb-log-file-size=4M",
      "--innodb-data-file-path=ibdata1:10M:autoextend", "--innodb-use-native-aio=0"};
  return args;
}

std::string TempRoot() {
  const char* t = std::getenv("TMPDIR");
  return (t && *t) ? t : "/tmp";
}

absl::StatusOr<std::string> MakeTempDir(std::string_view prefix) {
  std::string pattern = absl::StrCat(TempRoot(), "/", AV(prefix), "XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp(", pattern, "): ", std::strerror(errno)));
  }
  // mariadbd may run as another user than the test when not root.
  chmod(pattern.c_str(), 0755);
  return pattern;
}

std::string FileTail(const std::string& path, size_t lines) {
  std::ifstream in(path);
  if (!in) return absl::StrCat("(cannot read ", path, ")");
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  size_t from = all.size() > lines ? all.size() - lines : 0;
  return absl::StrJoin(all.begin() + from, all.end(), "\n");
}

// Runs argv[0] with stdout/stderr appended to `log`, waits, and reports a
// non-zero exit with the log's tail.
absl::Status RunCommand(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat(argv[0], " failed (wait status ", status,
                                            "); output:\n", FileTail(log, 80)));
  }
  return absl::OkStatus();
}

bool IsRoot() { return geteuid() == 0; }

// One initialised datadir and one certificate per test process; each sandbox
// copies them (~20 MB) instead of re-running mariadb-install-db.
struct Template {
  std::string dir;
  absl::Status status;
  ~Template() {
    if (!dir.empty()) {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  }
};

const Template& GetTemplate() {
  static Template t;
  static std::once_flag once;
  std::call_once(once, [] {
    for (const char* bin : {MariaDbSandbox::kServerBinary, MariaDbSandbox::kInstallDbBinary}) {
      if (access(bin, X_OK) != 0) {
        t.status = absl::FailedPreconditionError(absl::StrCat(
            bin, " is missing: install MariaDB 10.11 with scripts/setup.sh (integration tests "
                 "never skip)"));
        return;
      }
    }
    absl::StatusOr<std::string> dir = MakeTempDir("binrelay-mariadb-template-");
    if (!dir.ok()) {
      t.status = dir.status();
      return;
    }
    t.dir = *dir;
    std::string log = t.dir + "/setup.log";
    std::vector<std::string> install = {MariaDbSandbox::kInstallDbBinary,
                                        "--no-defaults",
                                        "--auth-root-authentication-method=normal",
                                        "--datadir=" + t.dir + "/data",
                                        // Its own tmpdir: concurrent bootstraps in /tmp
                                        // collide on temporary table names.
                                        "--tmpdir=" + t.dir,
                                        "--skip-test-db",
                                        "--skip-name-resolve"};
    if (IsRoot()) install.push_back("--user=root");
    install.insert(install.end(), InnoDbArgs().begin(), InnoDbArgs().end());
    t.status = RunCommand(install, log);
    if (!t.status.ok()) return;
    t.status = RunCommand({"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                           "-keyout", t.dir + "/key.pem", "-out", t.dir + "/cert.pem", "-days",
                           "30", "-subj", "/CN=127.0.0.1", "-addext",
                           "subjectAltName=IP:127.0.0.1,DNS:localhost"},
                          log);
  });
  return t;
}

}  // namespace

absl::StatusOr<uint16_t> FindFreePort() {
  // Ports below the kernel's ephemeral range (32768 and up) are never handed
  // to an outgoing connection, and a lock file per port, held until this
  // process exits, keeps tests running in parallel (ctest -j) from taking
  // the same one between the check and the server's bind.
  static std::mutex mu;
  std::lock_guard<std::mutex> l(mu);
  // Below the kernel's ephemeral range (its low end, 32768 by default).
  uint32_t ephemeral_low = 32768;
  if (std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range"); range) range >> ephemeral_low;
  const uint16_t kFirst = 10000;
  const uint16_t kCount = static_cast<uint16_t>(ephemeral_low > 12000 ? ephemeral_low - kFirst : 2000);
  const std::string dir = "/tmp/binrelay-test-ports";
  // Shared by every user of the machine: sticky, writable by all (the
  // umask would narrow mkdir's mode).
  if (::mkdir(dir.c_str(), 01777) == 0) ::chmod(dir.c_str(), 01777);
  static uint32_t next = static_cast<uint32_t>(::getpid()) * 7919u;
  for (uint32_t tries = 0; tries < kCount; ++tries) {
    const uint16_t port = static_cast<uint16_t>(kFirst + (next++ % kCount));
    const std::string lock = absl::StrCat(dir, "/", port);
    const int lfd = ::open(lock.c_str(), O_CREAT | O_RDONLY | O_CLOEXEC, 0666);
    if (lfd < 0) continue;
    ::fchmod(lfd, 0666);  // fails harmlessly on another user's file
    if (::flock(lfd, LOCK_EX | LOCK_NB) != 0) {
      ::close(lfd);
      continue;
    }
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    const bool free = fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    if (fd >= 0) close(fd);
    if (!free) {
      ::close(lfd);
      continue;
    }
    return port;  // lfd stays open: the reservation lasts as long as this process
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "no free loopback port in ", kFirst, "-", kFirst + kCount - 1,
      " (each is reserved by a lock file in /tmp/binrelay-test-ports)"));
}

absl::StatusOr<std::unique_ptr<MariaDbSandbox>> MariaDbSandbox::Start(
    const MariaDbSandboxOptions& options) {
  const Template& tmpl = GetTemplate();
  BR_RETURN_IF_ERROR(tmpl.status);
  std::unique_ptr<MariaDbSandbox> sb(new MariaDbSandbox());
  sb->options_ = options;
  BR_ASSIGN_OR_RETURN(sb->dir_, MakeTempDir("binrelay-mariadb-"));
  std::error_code ec;
  fs::copy(tmpl.dir + "/data", sb->DataDir(), fs::copy_options::recursive, ec);
  if (!ec) fs::copy(tmpl.dir + "/cert.pem", sb->dir_ + "/cert.pem", ec);
  if (!ec) fs::copy(tmpl.dir + "/key.pem", sb->dir_ + "/key.pem", ec);
  if (ec) return absl::InternalError(absl::StrCat("copying the template datadir: ", ec.message()));
  BR_ASSIGN_OR_RETURN(sb->port_, FindFreePort());
  BR_RETURN_IF_ERROR(sb->Launch());
  return sb;
}

absl::Status MariaDbSandbox::Launch() {
  std::vector<std::string> args = {
      kServerBinary,
      "--no-defaults",
      "--datadir=" + DataDir(),
      "--socket=" + SocketPath(),
      "--pid-file=" + dir_ + "/mariadbd.pid",
      "--log-error=" + ErrorLogPath(),
      "--tmpdir=" + dir_,
      "--port=" + std::to_string(port_),
      "--bind-address=127.0.0.1",
      "--skip-name-resolve",
      "--log-bin=mysql-bin",
      "--binlog-format=ROW",
      "--binlog-row-image=FULL",
      "--server-id=" + std::to_string(options_.server_id),
      "--log-slave-updates",
      "--performance-schema=OFF",
      "--innodb-flush-log-at-trx-commit=2",
      "--sync-binlog=0",
      "--max-allowed-packet=64M",
      "--max-connections=64",
  };
  if (IsRoot()) args.push_back("--user=root");
  args.insert(args.end(), InnoDbArgs().begin(), InnoDbArgs().end());
  if (options_.tls) {
    args.push_back("--ssl-cert=" + dir_ + "/cert.pem");
    args.push_back("--ssl-key=" + dir_ + "/key.pem");
    args.push_back("--ssl-ca=" + dir_ + "/cert.pem");
  }
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());

  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const std::string out_log = dir_ + "/stdout.log";
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    // If the test process dies (crash, timeout kill), take the server down
    // too instead of leaving an orphan. Tied to the forking thread's life.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    int fd = open(out_log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  pid_ = pid;
  return WaitUntilReady();
}

absl::Status MariaDbSandbox::WaitUntilReady() {
  const auto deadline = Clock::now() + options_.startup_timeout;
  std::string last_error;
  while (Clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::InternalError(absl::StrCat(
          "mariadbd exited during startup (wait status ", status, "); error log tail:\n",
          ErrorLogTail(), "\nstdout:\n", FileTail(dir_ + "/stdout.log", 10)));
    }
    MYSQL* m = mysql_init(nullptr);
    unsigned int timeout = 2;
    mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
    if (mysql_real_connect(m, nullptr, "root", "", nullptr, 0, SocketPath().c_str(), 0)) {
      root_ = m;
      return absl::OkStatus();
    }
    last_error = mysql_error(m);
    mysql_close(m);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::string tail = ErrorLogTail();
  Stop(std::chrono::seconds(5));
  return absl::DeadlineExceededError(absl::StrCat(
      "mariadbd on port ", port_, " did not accept connections within ",
      options_.startup_timeout.count(), " s (last error: ", last_error, "); error log tail:\n",
      tail));
}

MariaDbSandbox::~MariaDbSandbox() {
  Stop();
  if (!dir_.empty() && !std::getenv("BINRELAY_KEEP_SANDBOX")) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

void MariaDbSandbox::Stop(std::chrono::seconds timeout) {
  if (root_) {
    mysql_close(root_);
    root_ = nullptr;
  }
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  const auto deadline = Clock::now() + timeout;
  int status = 0;
  while (true) {
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) break;
    if (Clock::now() >= deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pid_ = -1;
}

absl::Status MariaDbSandbox::Restart() {
  Stop();
  return Launch();
}

absl::StatusOr<MYSQL*> MariaDbSandbox::Root() {
  if (root_) return root_;
  if (pid_ <= 0) return absl::FailedPreconditionError("sandbox server is not running");
  MYSQL* m = mysql_init(nullptr);
  if (!mysql_real_connect(m, nullptr, "root", "", nullptr, 0, SocketPath().c_str(), 0)) {
    std::string err = mysql_error(m);
    mysql_close(m);
    return absl::UnavailableError(absl::StrCat("connecting to sandbox ", SocketPath(), ": ", err));
  }
  root_ = m;
  return root_;
}

absl::Status MariaDbSandbox::Execute(std::string_view sql) {
  BR_ASSIGN_OR_RETURN(MYSQL * m, Root());
  if (mysql_real_query(m, sql.data(), sql.size()) != 0) {
    return absl::InternalError(absl::StrCat("sandbox query failed (", mysql_errno(m),
                                            "): ", mysql_error(m), " in: ", AV(sql)));
  }
  // Drain every result so the connection is ready for the next statement.
  do {
    if (MYSQL_RES* res = mysql_store_result(m)) mysql_free_result(res);
  } while (mysql_next_result(m) == 0);
  return absl::OkStatus();
}

absl::StatusOr<SqlRows> MariaDbSandbox::Query(std::string_view sql) {
  BR_ASSIGN_OR_RETURN(MYSQL * m, Root());
  if (mysql_real_query(m, sql.data(), sql.size()) != 0) {
    return absl::InternalError(absl::StrCat("sandbox query failed (", mysql_errno(m),
                                            "): ", mysql_error(m), " in: ", AV(sql)));
  }
  SqlRows rows;
  MYSQL_RES* res = mysql_store_result(m);
  if (res) {
    unsigned int n = mysql_num_fields(res);
    while (MYSQL_ROW row = mysql_fetch_row(res)) {
      unsigned long* lengths = mysql_fetch_lengths(res);
      auto& out = rows.emplace_back(n);
      for (unsigned int i = 0; i < n; ++i) {
        if (row[i]) out[i].emplace(row[i], lengths[i]);
      }
    }
    mysql_free_result(res);
  }
  while (mysql_next_result(m) == 0) {
    if (MYSQL_RES* extra = mysql_store_result(m)) mysql_free_result(extra);
  }
  return rows;
}

absl::Status MariaDbSandbox::CreateUser(std::string_view user, std::string_view password,
                                        std::string_view grants) {
  BR_ASSIGN_OR_RETURN(MYSQL * m, Root());
  auto escape = [m](std::string_view s) {
    std::string out(s.size() * 2 + 1, '\0');
    out.resize(mysql_real_escape_string(m, out.data(), s.data(), s.size()));
    return out;
  };
  std::string u = escape(user);
  BR_RETURN_IF_ERROR(Execute(absl::StrCat("CREATE USER '", u, "'@'%' IDENTIFIED BY '",
                                          escape(password), "'")));
  return Execute(absl::StrCat("GRANT ", AV(grants), " ON *.* TO '", u, "'@'%'"));
}

protocol::ConnectOptions MariaDbSandbox::ClientOptions(std::string_view user,
                                                       std::string_view password) const {
  protocol::ConnectOptions o;
  o.host = Host();
  o.port = port_;
  o.user = std::string(user);
  o.password = std::string(password);
  o.connect_timeout = std::chrono::seconds(10);
  o.io_timeout = std::chrono::seconds(30);
  return o;
}

std::string MariaDbSandbox::ErrorLogTail(size_t lines) const {
  return FileTail(ErrorLogPath(), lines);
}

}  // namespace binrelay::testing
