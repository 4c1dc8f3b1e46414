// RetryPolicy and RunWithRetries: the one loop in apply/ that tries a step
// again after a passing failure (a lock conflict, a lost connection, a
// snapshot taken a moment too early). A policy says which failures pass,
// how long to wait before the next attempt and when to give up; the caller
// supplies the step, a sleep that ends early when it is stopping, and what
// to say on each retry. Every retry loop of the pipeline's flusher and of
// the move runs through it, so a bound on attempts or time is written once
// and holds everywhere.
//
// Thread safety: stateless; the callbacks run on the caller's thread.
#pragma once

#include <functional>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"

namespace binrelay::apply {

struct RetryPolicy {
  // True: the failure may pass, try again. Unset: every failure passes.
  std::function<bool(const absl::Status&)> retryable;
  // The wait after failed attempt `attempt` (1 = the first attempt).
  std::function<absl::Duration(int attempt, const absl::Status&)> wait;
  int max_attempts = 0;                                 // 0: no bound
  absl::Duration give_up_after = absl::InfiniteDuration();  // from the first attempt
};

// Sleeps for its argument; false once the caller is stopping.
using RetrySleep = std::function<bool(absl::Duration)>;
// Told of each failed attempt that will be retried, before the wait.
using OnRetry = std::function<void(int attempt, const absl::Status&)>;

struct RetryResult {
  absl::Status status;    // OK, the step's last error, or Cancelled (stopping)
  int attempts = 0;       // how many times the step ran
  bool exhausted = false; // the last error was retryable but the policy gave up
  bool stopped = false;   // `sleep` said stop: status is Cancelled("stopping")
};

// Runs `step` until it succeeds, fails in a way the policy does not retry,
// the policy's bound is reached (exhausted) or `sleep` says stop.
RetryResult RunWithRetries(const RetryPolicy& policy, const RetrySleep& sleep,
                           absl::FunctionRef<absl::Status()> step, const OnRetry& on_retry = {});

}  // namespace binrelay::apply
