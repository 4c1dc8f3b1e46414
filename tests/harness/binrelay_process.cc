#include "tests/harness/binrelay_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/harness/server_sandbox.h"

extern char** environ;

namespace binrelay::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> SplitLines(const std::string& s) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < s.size()) {
    size_t nl = s.find('\n', start);
    if (nl == std::string::npos) {
      lines.push_back(s.substr(start));
      break;
    }
    lines.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

// The child's environment: ours minus anything overridden, minus an inherited
// password (a test that wants one passes it explicitly).
std::vector<std::string> BuildEnv(const EnvVars& env) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    std::string_view key = kv.substr(0, kv.find('='));
    if (key == "BINRELAY_SOURCE_PASSWORD") continue;
    bool overridden = std::any_of(env.begin(), env.end(),
                                  [&](const auto& p) { return p.first == key; });
    if (!overridden) out.emplace_back(kv);
  }
  for (const auto& [k, v] : env) out.push_back(absl::StrCat(k, "=", v));
  return out;
}

}  // namespace

std::vector<std::string> ProcessResult::OutLines() const { return SplitLines(out); }
std::vector<std::string> ProcessResult::ErrLines() const { return SplitLines(err); }

std::string ProcessResult::Describe() const {
  std::vector<std::string> lines = ErrLines();
  size_t from = lines.size() > 15 ? lines.size() - 15 : 0;
  return absl::StrCat(
      "binrelay ",
      timed_out ? "timed out (killed)"
                : (term_signal ? absl::StrCat("died of signal ", term_signal)
                               : absl::StrCat("exited ", exit_code)),
      "; stdout ", out.size(), " bytes; stderr tail:\n",
      absl::StrJoin(lines.begin() + from, lines.end(), "\n"));
}

std::vector<std::string> TailArgs(const ServerSandbox& source, const std::string& user,
                                  const std::string& tables,
                                  const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"tail",   "--source", absl::StrCat(source.Host(), ":", source.Port()),
                                   "--user", user,       "--tables",
                                   tables};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

absl::StatusOr<std::string> CurrentBinlogPosition(ServerSandbox& source) {
  auto end = source.BinlogEnd();
  if (!end.ok()) return end.status();
  return absl::StrCat(end->first, ":", end->second);
}

std::string BinrelayPath() { return BINRELAY_BINARY; }

absl::StatusOr<std::unique_ptr<BackgroundBinrelay>> BackgroundBinrelay::Start(
    const std::vector<std::string>& args, const EnvVars& env) {
  // Everything the child needs is built before fork: only async-signal-safe
  // calls run between fork and exec (the test process has threads).
  // BINRELAY_TEST_WRAPPER (e.g. "/usr/bin/strace -o /tmp/trace") prefixes the
  // command line, for debugging a failing test; words split at spaces.
  std::vector<std::string> argv_s;
  if (const char* w = std::getenv("BINRELAY_TEST_WRAPPER"); w != nullptr && *w != '\0') {
    std::istringstream words(w);
    for (std::string word; words >> word;) argv_s.push_back(word);
  }
  argv_s.push_back(BinrelayPath());
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<std::string> env_s = BuildEnv(env);
  std::vector<char*> argv, envp;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe2: ", std::strerror(errno)));
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    int e = errno;
    close(out_pipe[0]);
    close(out_pipe[1]);
    return absl::InternalError(absl::StrCat("pipe2: ", std::strerror(e)));
  }
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], devnull}) close(fd);
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(e)));
  }
  if (pid == 0) {
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    execve(argv[0], argv.data(), envp.data());
    static const char kMsg[] = "exec of binrelay failed\n";
    (void)!write(2, kMsg, sizeof(kMsg) - 1);
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (devnull >= 0) close(devnull);
  std::unique_ptr<BackgroundBinrelay> p(new BackgroundBinrelay());
  p->pid_ = pid;
  p->reader_ = std::thread([raw = p.get(), o = out_pipe[0], e = err_pipe[0]] {
    raw->ReadLoop(o, e);
  });
  return p;
}

void BackgroundBinrelay::ReadLoop(int out_fd, int err_fd) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  int open_fds = 2;
  std::vector<char> buf(1 << 16);
  while (open_fds > 0) {
    int r = poll(fds, 2, -1);
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = read(fds[i].fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (i == 0) {
        out_lines_ += std::count(buf.data(), buf.data() + n, '\n');
        out_.append(buf.data(), static_cast<size_t>(n));
      } else {
        err_.append(buf.data(), static_cast<size_t>(n));
      }
      cv_.notify_all();
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

std::string BackgroundBinrelay::StdoutSoFar() const {
  std::lock_guard<std::mutex> lock(mu_);
  return out_;
}

std::string BackgroundBinrelay::StderrSoFar() const {
  std::lock_guard<std::mutex> lock(mu_);
  return err_;
}

bool BackgroundBinrelay::OutputClosed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

size_t BackgroundBinrelay::WaitForStdoutLines(size_t lines,
                                              std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return out_lines_ >= lines || closed_; });
  return out_lines_;
}

void BackgroundBinrelay::Signal(int sig) {
  if (pid_ > 0) kill(pid_, sig);
}

ProcessResult BackgroundBinrelay::Wait(std::chrono::milliseconds timeout) {
  ProcessResult result;
  if (pid_ > 0) {
    const auto deadline = Clock::now() + timeout;
    int status = 0;
    while (true) {
      pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) break;
      if (r < 0 && errno != EINTR) break;
      if (Clock::now() >= deadline) {
        result.timed_out = true;
        kill(pid_, SIGKILL);
        while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    pid_ = -1;
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.term_signal = WTERMSIG(status);
  }
  // binrelay does not fork, so its pipes close when it exits.
  if (reader_.joinable()) reader_.join();
  std::lock_guard<std::mutex> lock(mu_);
  result.out = out_;
  result.err = err_;
  return result;
}

BackgroundBinrelay::~BackgroundBinrelay() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int status;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  if (reader_.joinable()) reader_.join();
}

absl::StatusOr<ProcessResult> RunBinrelay(const std::vector<std::string>& args,
                                          const EnvVars& env,
                                          std::chrono::milliseconds timeout) {
  auto p = BackgroundBinrelay::Start(args, env);
  if (!p.ok()) return p.status();
  return (*p)->Wait(timeout);
}

uint64_t PeakRssBytes(pid_t pid) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (absl::StartsWith(line, "VmHWM:")) {
      return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;
    }
  }
  return 0;
}

}  // namespace binrelay::testing
