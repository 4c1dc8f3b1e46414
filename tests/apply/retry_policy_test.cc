// RunWithRetries: the one retry loop of apply/ (flushes, chunk copies, the
// move's steps, snapshots, cutover attempts).
#include "apply/retry_policy.h"

#include <gtest/gtest.h>

#include <vector>

namespace binrelay::apply {
namespace {

// Guards: a bound on attempts that is off by one, a wait that is not the
// policy's, on_retry told of the last (not retried) failure.
TEST(RunWithRetriesTest, StopsAtMaxAttemptsWithThePolicysWaits) {
  RetryPolicy p;
  p.wait = [](int attempt, const absl::Status&) { return absl::Seconds(2 * attempt); };
  p.max_attempts = 3;
  std::vector<absl::Duration> slept;
  std::vector<int> told;
  int runs = 0;
  RetryResult r = RunWithRetries(
      p, [&](absl::Duration d) { slept.push_back(d); return true; },
      [&] { ++runs; return absl::UnavailableError("busy"); },
      [&](int attempt, const absl::Status&) { told.push_back(attempt); });
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(r.attempts, 3);
  EXPECT_TRUE(r.exhausted);
  EXPECT_TRUE(absl::IsUnavailable(r.status));
  EXPECT_EQ(slept, (std::vector<absl::Duration>{absl::Seconds(2), absl::Seconds(4)}));
  EXPECT_EQ(told, (std::vector<int>{1, 2}));
}

// Guards: a final error retried (a changed row copied again), or success
// after retries reported as a failure.
TEST(RunWithRetriesTest, FinalErrorsReturnAtOnceAndSuccessEndsTheLoop) {
  RetryPolicy p;
  p.retryable = [](const absl::Status& s) { return !absl::IsDataLoss(s); };
  int runs = 0;
  RetryResult lost = RunWithRetries(p, [](absl::Duration) { return true; }, [&] {
    ++runs;
    return absl::DataLossError("row changed");
  });
  EXPECT_EQ(runs, 1);
  EXPECT_FALSE(lost.exhausted);
  EXPECT_TRUE(absl::IsDataLoss(lost.status));
  EXPECT_FALSE(lost.stopped);
  runs = 0;
  RetryResult ok = RunWithRetries(p, [](absl::Duration) { return true; }, [&] {
    return ++runs < 4 ? absl::AbortedError("deadlock") : absl::OkStatus();
  });
  EXPECT_TRUE(ok.status.ok());
  EXPECT_EQ(ok.attempts, 4);
}

// Guards: a stopping caller kept in the loop, or a time bound ignored.
TEST(RunWithRetriesTest, StoppingCancelsAndTheTimeBoundEndsIt) {
  RetryPolicy unbounded;
  int runs = 0;
  RetryResult stopped = RunWithRetries(unbounded, [&](absl::Duration) { return runs < 2; }, [&] {
    ++runs;
    return absl::UnavailableError("down");
  });
  EXPECT_TRUE(absl::IsCancelled(stopped.status));
  EXPECT_TRUE(stopped.stopped);
  EXPECT_EQ(runs, 2);
  RetryPolicy timed;
  timed.give_up_after = absl::Milliseconds(50);
  timed.wait = [](int, const absl::Status&) { return absl::Milliseconds(10); };
  RetryResult timed_out = RunWithRetries(
      timed, [](absl::Duration d) { absl::SleepFor(d); return true; },
      [] { return absl::OutOfRangeError("too early"); });
  EXPECT_TRUE(timed_out.exhausted);
  EXPECT_TRUE(absl::IsOutOfRange(timed_out.status));
  EXPECT_GE(timed_out.attempts, 2);
  EXPECT_LE(timed_out.attempts, 7);
}

}  // namespace
}  // namespace binrelay::apply
