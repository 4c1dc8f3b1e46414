// binrelay_process: runs the built binrelay executable (BINRELAY_BINARY) as a
// child process for integration tests, capturing stdout and stderr fully.
//
// RunBinrelay() runs to completion (killing the child by pid on timeout);
// BackgroundBinrelay runs it while the test does other work, lets the test
// wait for a number of stdout lines, signal it, and collect its output.
// Setting BINRELAY_TEST_WRAPPER (e.g. "/usr/bin/strace -f -o /tmp/t") runs
// binrelay under that command, for debugging.
//
// Thread safety: a BackgroundBinrelay may be polled (StdoutSoFar, WaitFor...)
// from any thread; Signal/Wait from the owning thread. Lifetime: the
// destructor kills (SIGKILL) and reaps the child if Wait() was not called;
// returned strings are copies.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace binrelay::testing {

struct ProcessResult {
  int exit_code = -1;    // valid when the child exited normally
  int term_signal = 0;   // the signal that ended it, or 0
  bool timed_out = false;  // we killed it because the deadline passed
  std::string out;
  std::string err;

  // stdout split at '\n'; a trailing partial line (no '\n') is returned too
  // so a test can detect it.
  std::vector<std::string> OutLines() const;
  std::vector<std::string> ErrLines() const;
  // One-line summary for failure messages (exit status and stderr tail).
  std::string Describe() const;
};

using EnvVars = std::vector<std::pair<std::string, std::string>>;

// The path of the binrelay executable under test.
std::string BinrelayPath();

// Runs `binrelay args...` with the test's environment plus `env` (which
// overrides; BINRELAY_SOURCE_PASSWORD is never inherited).
absl::StatusOr<ProcessResult> RunBinrelay(const std::vector<std::string>& args,
                                          const EnvVars& env,
                                          std::chrono::milliseconds timeout);

class ServerSandbox;

// "tail --source 127.0.0.1:PORT --user USER --tables TABLES", then `extra`.
std::vector<std::string> TailArgs(const ServerSandbox& source, const std::string& user,
                                  const std::string& tables,
                                  const std::vector<std::string>& extra);

// The source's binlog end as "FILE:POS" (SHOW MASTER STATUS), for --start.
absl::StatusOr<std::string> CurrentBinlogPosition(ServerSandbox& source);

class BackgroundBinrelay {
 public:
  static absl::StatusOr<std::unique_ptr<BackgroundBinrelay>> Start(
      const std::vector<std::string>& args, const EnvVars& env);
  ~BackgroundBinrelay();
  BackgroundBinrelay(const BackgroundBinrelay&) = delete;
  BackgroundBinrelay& operator=(const BackgroundBinrelay&) = delete;

  pid_t pid() const { return pid_; }
  std::string StdoutSoFar() const;
  std::string StderrSoFar() const;
  // Waits until stdout holds at least `lines` complete lines or the child
  // closed its output; returns the number of complete lines seen.
  size_t WaitForStdoutLines(size_t lines, std::chrono::milliseconds timeout) const;
  // True once the child closed both stdout and stderr (usually: exited).
  bool OutputClosed() const;
  void Signal(int sig);
  // Waits for exit; on timeout kills the child (SIGKILL) and marks timed_out.
  ProcessResult Wait(std::chrono::milliseconds timeout);

 private:
  BackgroundBinrelay() = default;
  void ReadLoop(int out_fd, int err_fd);

  pid_t pid_ = -1;
  std::thread reader_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::string out_;
  std::string err_;
  size_t out_lines_ = 0;
  bool closed_ = false;
};

// Peak resident memory (VmHWM) of a running process, from /proc; 0 once
// it is gone.
uint64_t PeakRssBytes(pid_t pid);

}  // namespace binrelay::testing
