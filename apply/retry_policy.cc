#include "apply/retry_policy.h"

namespace binrelay::apply {

RetryResult RunWithRetries(const RetryPolicy& policy, const RetrySleep& sleep,
                           absl::FunctionRef<absl::Status()> step, const OnRetry& on_retry) {
  const absl::Time give_up = policy.give_up_after == absl::InfiniteDuration()
                                 ? absl::InfiniteFuture()
                                 : absl::Now() + policy.give_up_after;
  RetryResult r;
  while (true) {
    r.status = step();
    ++r.attempts;
    if (r.status.ok()) return r;
    if (policy.retryable && !policy.retryable(r.status)) return r;
    if ((policy.max_attempts > 0 && r.attempts >= policy.max_attempts) ||
        absl::Now() >= give_up) {
      r.exhausted = true;
      return r;
    }
    if (on_retry) on_retry(r.attempts, r.status);
    const absl::Duration wait =
        policy.wait ? policy.wait(r.attempts, r.status) : absl::ZeroDuration();
    if (!sleep(wait)) {
      r.stopped = true;
      r.status = absl::CancelledError("stopping");
      return r;
    }
  }
}

}  // namespace binrelay::apply
