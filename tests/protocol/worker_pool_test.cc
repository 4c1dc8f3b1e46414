// WorkerPool and JobGroup: the one thread pool (listener work, a
// flusher's statements, a move's copiers).
#include "protocol/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"

namespace binrelay {
namespace {

// Guards: a group returning before its jobs ran (a drain's statements
// still in flight when the checkpoint is written), or jobs run on one
// thread only.
TEST(JobGroupTest, WaitsForEveryJobAndRunsThemConcurrently) {
  WorkerPool pool(3, 8);
  std::atomic<int> done{0};
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  {
    JobGroup group(&pool);
    for (int i = 0; i < 3; ++i) {
      group.Run([&] {
        int now = ++inside;
        for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        --inside;
        ++done;
      });
    }
    group.Wait();
    EXPECT_EQ(done.load(), 3);
  }
  EXPECT_GE(most.load(), 2) << "the jobs never overlapped";
}

// Guards: a job dropped when the pool's queue is full (a statement of a
// drain never written): the group runs it itself.
TEST(JobGroupTest, AJobThePoolRefusesRunsOnTheCallingThread) {
  WorkerPool pool(1, 1);
  absl::Notification release;
  absl::Notification started;
  JobGroup group(&pool);
  group.Run([&] {  // occupies the one thread
    started.Notify();
    release.WaitForNotification();
  });
  started.WaitForNotification();
  group.Run([] {});  // queued (max_queued 1)
  const std::thread::id me = std::this_thread::get_id();
  std::thread::id ran_on;
  group.Run([&] { ran_on = std::this_thread::get_id(); });  // refused: runs here
  EXPECT_EQ(ran_on, me);
  release.Notify();
  group.Wait();
  JobGroup without_pool(nullptr);
  bool ran = false;
  without_pool.Run([&] { ran = true; });
  EXPECT_TRUE(ran);
}

// Guards: Submit queueing without bound.
TEST(WorkerPoolTest, SubmitRefusesBeyondMaxQueued) {
  WorkerPool pool(1, 1);
  absl::Notification release;
  absl::Notification started;
  ASSERT_TRUE(pool.Submit([&] {
    started.Notify();
    release.WaitForNotification();
  }));
  started.WaitForNotification();
  EXPECT_TRUE(pool.Submit([] {}));
  EXPECT_FALSE(pool.Submit([] {}));
  EXPECT_EQ(pool.queued(), 1u);
  release.Notify();
}

}  // namespace
}  // namespace binrelay
