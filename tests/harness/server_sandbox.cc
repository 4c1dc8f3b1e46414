#include "tests/harness/server_sandbox.h"

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
#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "protocol/status_macros.h"

namespace binrelay::testing {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// InnoDB sizing shared by the datadir's initialisation and the server: a
// datadir must be started with the data-file path it was created with.
std::vector<std::string> InnoDbArgs(const ServerFlavour& f) {
  if (f.mysql) {
    // MySQL 8.0.30+ sizes its redo log by capacity (8M is its minimum).
    return {"--innodb-buffer-pool-size=32M", "--innodb-redo-log-capacity=16M",
            "--innodb-use-native-aio=0"};
  }
  return {"--innodb-buffer-pool-size=16M", "--innodb-log-file-size=4M",
          "--innodb-data-file-path=ibdata1:10M:autoextend", "--innodb-use-native-aio=0"};
}

// Where the flavour keeps its files, for a server run from a folder.
std::vector<std::string> PathArgs(const ServerFlavour& f) {
  std::vector<std::string> args;
  if (!f.basedir.empty()) args.push_back("--basedir=" + f.basedir);
  if (!f.lc_messages_dir.empty()) args.push_back("--lc-messages-dir=" + f.lc_messages_dir);
  if (!f.plugin_dir.empty()) args.push_back("--plugin-dir=" + f.plugin_dir);
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

// One initialised datadir and one certificate per flavour, shared by every
// test process of a run: ctest starts each test in its own process, and
// initialising a datadir (mariadb-install-db, mysqld --initialize) costs a
// second or more of CPU each time. Each sandbox copies the template.
struct Template {
  std::string dir;
  absl::Status status;
};

absl::Status InitDataDir(const ServerFlavour& f, const std::string& dir, const std::string& log) {
  std::vector<std::string> install;
  if (f.mysql) {
    install = {f.server, "--no-defaults", "--initialize-insecure", "--datadir=" + dir + "/data",
               "--tmpdir=" + dir, "--secure-file-priv="};
  } else {
    install = {f.install_db,
               "--no-defaults",
               "--auth-root-authentication-method=normal",
               "--datadir=" + dir + "/data",
               // Its own tmpdir: concurrent bootstraps in /tmp
               // collide on temporary table names.
               "--tmpdir=" + dir,
               "--skip-test-db",
               "--skip-name-resolve"};
    if (!f.install_basedir.empty()) install.push_back("--basedir=" + f.install_basedir);
  }
  if (IsRoot()) install.push_back("--user=root");
  if (f.mysql) {
    for (std::string& a : PathArgs(f)) install.push_back(std::move(a));
  }
  for (std::string& a : InnoDbArgs(f)) install.push_back(std::move(a));
  return RunCommand(install, log);
}

// The shared templates live in one folder per user, named by what made them
// (the server binary's path, size and mtime, and the arguments above), so a
// changed server or harness makes a new one instead of reusing a stale one.
// scripts/test.sh empties the folder before each run; at most one template
// per flavour and server build stays behind (about 100 MB each).
std::string TemplateRoot() { return absl::StrCat(TempRoot(), "/binrelay-templates-", ::geteuid()); }

std::string TemplateKey(const ServerFlavour& f) {
  std::string what = absl::StrCat(f.name, "|", f.server, "|", f.install_db, "|");
  struct stat st {};
  if (::stat(f.server.c_str(), &st) == 0) absl::StrAppend(&what, st.st_size, "|", st.st_mtime, "|");
  for (const std::string& a : InnoDbArgs(f)) absl::StrAppend(&what, a, "|");
  for (const std::string& a : PathArgs(f)) absl::StrAppend(&what, a, "|");
  absl::StrAppend(&what, "harness-template-v2");
  return absl::StrCat(f.name, "-", absl::Hex(std::hash<std::string>{}(what)));
}

// Builds the template into a private folder and renames it into place, so a
// process that finds the final name finds a complete template.
absl::Status BuildTemplate(const ServerFlavour& f, const std::string& final_dir) {
  BR_ASSIGN_OR_RETURN(std::string dir, MakeTempDir(absl::StrCat(
                                           "binrelay-templates-", ::geteuid(), "/building-", f.name, "-")));
  std::string log = dir + "/setup.log";
  absl::Status st = InitDataDir(f, dir, log);
  // MySQL keeps its server_uuid in auto.cnf: copies must each make their own
  // (a replica refuses a source with its own uuid).
  std::error_code ec;
  if (st.ok()) fs::remove(dir + "/data/auto.cnf", ec);
  if (st.ok()) {
    st = RunCommand({"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                     "-keyout", dir + "/key.pem", "-out", dir + "/cert.pem", "-days", "30",
                     "-subj", "/CN=127.0.0.1", "-addext",
                     "subjectAltName=IP:127.0.0.1,DNS:localhost"},
                    log);
  }
  if (st.ok() && ::rename(dir.c_str(), final_dir.c_str()) != 0) {
    st = absl::InternalError(absl::StrCat("rename(", dir, ", ", final_dir, "): ", std::strerror(errno)));
  }
  if (!st.ok()) fs::remove_all(dir, ec);
  return st;
}

std::mutex template_mu;
std::map<std::string, Template>* templates = nullptr;

const Template& GetTemplate(const ServerFlavour& f) {
  std::lock_guard<std::mutex> l(template_mu);
  if (templates == nullptr) templates = new std::map<std::string, Template>();
  auto [it, inserted] = templates->try_emplace(f.name);
  Template& t = it->second;
  if (!inserted) return t;
  const std::string root = TemplateRoot();
  if (::mkdir(root.c_str(), 0755) != 0 && errno != EEXIST) {
    t.status = absl::InternalError(absl::StrCat("mkdir(", root, "): ", std::strerror(errno)));
    return t;
  }
  t.dir = absl::StrCat(root, "/", TemplateKey(f));
  // One process builds while the others wait on the lock, then all copy.
  const std::string lock = t.dir + ".lock";
  const int lfd = ::open(lock.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lfd < 0) {
    t.status = absl::InternalError(absl::StrCat("open(", lock, "): ", std::strerror(errno)));
    return t;
  }
  while (::flock(lfd, LOCK_EX) != 0 && errno == EINTR) {
  }
  if (!fs::exists(t.dir + "/cert.pem")) t.status = BuildTemplate(f, t.dir);
  ::close(lfd);
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

int64_t GlobalStatus(ServerSandbox& sb, const std::string& name) {
  auto rows = sb.Query(absl::StrCat("SHOW GLOBAL STATUS LIKE '", name, "'"));
  if (!rows.ok() || rows->empty() || !(*rows)[0][1]) return -1;
  const std::string& v = *(*rows)[0][1];
  if (v == "ON") return 1;
  if (v == "OFF") return 0;
  int64_t n = -1;
  return absl::SimpleAtoi(v, &n) ? n : -1;
}

bool WaitGlobalStatus(ServerSandbox& sb, const std::string& name, int64_t want,
                      std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (GlobalStatus(sb, name) == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

absl::StatusOr<std::map<int, std::vector<std::optional<std::string>>>> RowsById(
    ServerSandbox& sb, std::string_view select) {
  BR_ASSIGN_OR_RETURN(SqlRows rows, sb.Query(select));
  std::map<int, std::vector<std::optional<std::string>>> out;
  for (auto& r : rows) {
    int id = 0;
    if (r.empty() || !r[0] || !absl::SimpleAtoi(*r[0], &id)) {
      return absl::InternalError(absl::StrCat("no integer id first in a row of: ", AV(select)));
    }
    r.erase(r.begin());
    out[id] = std::move(r);
  }
  return out;
}

absl::StatusOr<std::unique_ptr<ServerSandbox>> ServerSandbox::Start(
    const ServerSandboxOptions& options) {
  BR_ASSIGN_OR_RETURN(ServerFlavour flavour,
                      ServerFlavour::Find(options.flavour.empty() ? ServerFlavour::kDefault
                                                                  : options.flavour));
  const Template& tmpl = GetTemplate(flavour);
  BR_RETURN_IF_ERROR(tmpl.status);
  std::unique_ptr<ServerSandbox> sb(new ServerSandbox());
  sb->options_ = options;
  sb->flavour_ = std::move(flavour);
  BR_ASSIGN_OR_RETURN(sb->dir_, MakeTempDir("binrelay-server-"));
  std::error_code ec;
  fs::copy(tmpl.dir + "/data", sb->DataDir(), fs::copy_options::recursive, ec);
  if (!ec) fs::copy(tmpl.dir + "/cert.pem", sb->dir_ + "/cert.pem", ec);
  if (!ec) fs::copy(tmpl.dir + "/key.pem", sb->dir_ + "/key.pem", ec);
  if (ec) return absl::InternalError(absl::StrCat("copying the template datadir: ", ec.message()));
  BR_ASSIGN_OR_RETURN(sb->port_, FindFreePort());
  BR_RETURN_IF_ERROR(sb->Launch());
  return sb;
}

absl::Status ServerSandbox::Launch() {
  const ServerFlavour& f = flavour_;
  std::vector<std::string> args = {
      f.server,
      "--no-defaults",
      "--datadir=" + DataDir(),
      "--socket=" + SocketPath(),
      "--pid-file=" + dir_ + "/server.pid",
      "--log-error=" + ErrorLogPath(),
      "--tmpdir=" + dir_,
      "--port=" + std::to_string(port_),
      "--bind-address=127.0.0.1",
      "--skip-name-resolve",
      "--log-bin=mysql-bin",
      "--binlog-format=ROW",
      "--binlog-row-image=FULL",
      "--server-id=" + std::to_string(options_.server_id),
      "--performance-schema=OFF",
      "--innodb-flush-log-at-trx-commit=2",
      "--sync-binlog=0",
      "--max-allowed-packet=64M",
      "--max-connections=64",
  };
  for (std::string& a : PathArgs(f)) args.push_back(std::move(a));
  if (f.mysql) {
    // log_replica_updates is on by default; no X plugin port to collide on.
    args.insert(args.end(), {"--mysqlx=OFF", "--secure-file-priv="});
  } else {
    args.push_back("--log-slave-updates");
  }
  if (IsRoot()) args.push_back("--user=root");
  for (std::string& a : InnoDbArgs(f)) args.push_back(std::move(a));
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

absl::Status ServerSandbox::WaitUntilReady() {
  const auto deadline = Clock::now() + options_.startup_timeout;
  std::string last_error;
  while (Clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::InternalError(absl::StrCat(
          flavour_.name, " server exited during startup (wait status ", status, "); error log tail:\n",
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
      flavour_.name, " server on port ", port_, " did not accept connections within ",
      options_.startup_timeout.count(), " s (last error: ", last_error, "); error log tail:\n",
      tail));
}

ServerSandbox::~ServerSandbox() {
  Stop();
  if (!dir_.empty() && !std::getenv("BINRELAY_KEEP_SANDBOX")) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

void ServerSandbox::Stop(std::chrono::seconds timeout) {
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

absl::Status ServerSandbox::Restart() {
  Stop();
  return Launch();
}

absl::StatusOr<MYSQL*> ServerSandbox::Root() {
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

absl::Status ServerSandbox::Execute(std::string_view sql) {
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

absl::StatusOr<SqlRows> ServerSandbox::Query(std::string_view sql) {
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

absl::Status ServerSandbox::CreateUser(std::string_view user, std::string_view password,
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
  // MariaDB 10.5+'s BINLOG MONITOR is MySQL's REPLICATION CLIENT.
  std::string g(grants);
  if (flavour_.mysql) g = absl::StrReplaceAll(g, {{"BINLOG MONITOR", "REPLICATION CLIENT"}});
  return Execute(absl::StrCat("GRANT ", g, " ON *.* TO '", u, "'@'%'"));
}

absl::StatusOr<std::pair<std::string, uint64_t>> ServerSandbox::BinlogEnd() {
  BR_ASSIGN_OR_RETURN(SqlRows rows, Query(flavour_.ShowBinlogStatus()));
  if (rows.empty() || rows[0].size() < 2 || !rows[0][0] || !rows[0][1]) {
    return absl::FailedPreconditionError(
        absl::StrCat(flavour_.ShowBinlogStatus(), " returned no row: is log_bin on?"));
  }
  return std::make_pair(*rows[0][0], std::stoull(*rows[0][1]));
}

absl::Status ServerSandbox::StartReplicaOf(const std::string& host, uint16_t port,
                                           std::string_view user, std::string_view password,
                                           bool use_gtid, std::string_view file, uint64_t pos,
                                           std::string_view extra) {
  // MySQL 8.4 removed CHANGE MASTER; MariaDB has no CHANGE REPLICATION SOURCE.
  const bool my = flavour_.mysql;
  std::string sql = absl::StrCat(
      my ? "CHANGE REPLICATION SOURCE TO SOURCE_HOST='" : "CHANGE MASTER TO MASTER_HOST='", host,
      "', ", my ? "SOURCE_PORT=" : "MASTER_PORT=", port, ", ",
      my ? "SOURCE_USER='" : "MASTER_USER='", AV(user), "', ",
      my ? "SOURCE_PASSWORD='" : "MASTER_PASSWORD='", AV(password), "', ",
      my ? "SOURCE_CONNECT_RETRY=1" : "MASTER_CONNECT_RETRY=1");
  if (use_gtid) {
    absl::StrAppend(&sql, my ? ", SOURCE_AUTO_POSITION=1" : ", MASTER_USE_GTID=slave_pos");
  } else {
    absl::StrAppend(&sql, my ? ", SOURCE_AUTO_POSITION=0, SOURCE_LOG_FILE='" : ", MASTER_USE_GTID=no, MASTER_LOG_FILE='",
                    AV(file), "', ", my ? "SOURCE_LOG_POS=" : "MASTER_LOG_POS=", pos);
  }
  if (!extra.empty()) absl::StrAppend(&sql, ", ", AV(extra));
  BR_RETURN_IF_ERROR(Execute(sql));
  return Execute(my ? "START REPLICA" : "START SLAVE");
}

absl::StatusOr<std::map<std::string, std::string>> ServerSandbox::ReplicaStatus() {
  BR_ASSIGN_OR_RETURN(MYSQL * m, Root());
  const std::string sql = flavour_.mysql ? "SHOW REPLICA STATUS" : "SHOW SLAVE STATUS";
  if (mysql_real_query(m, sql.data(), sql.size()) != 0) {
    return absl::InternalError(absl::StrCat(sql, " failed: ", mysql_error(m)));
  }
  std::map<std::string, std::string> out;
  MYSQL_RES* res = mysql_store_result(m);
  if (res == nullptr) return out;
  if (MYSQL_ROW row = mysql_fetch_row(res)) {
    MYSQL_FIELD* fields = mysql_fetch_fields(res);
    for (unsigned int i = 0; i < mysql_num_fields(res); ++i) {
      out[fields[i].name] = row[i] ? row[i] : "";
    }
  }
  mysql_free_result(res);
  return out;
}

protocol::ConnectOptions ServerSandbox::ClientOptions(std::string_view user,
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

std::string ServerSandbox::ErrorLogTail(size_t lines) const {
  return FileTail(ErrorLogPath(), lines);
}

}  // namespace binrelay::testing
