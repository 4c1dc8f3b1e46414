#include "proxy/blocking_pool.h"

namespace binrelay::proxy {

BlockingPool::BlockingPool(int threads, size_t max_queued) : max_queued_(max_queued) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
}

BlockingPool::~BlockingPool() {
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

bool BlockingPool::Submit(std::function<void()> job) {
  absl::MutexLock l(&mu_);
  if (stopping_ || jobs_.size() >= max_queued_) return false;
  jobs_.push_back(std::move(job));
  return true;
}

size_t BlockingPool::queued() const {
  absl::MutexLock l(&mu_);
  return jobs_.size();
}

void BlockingPool::Run() {
  while (true) {
    std::function<void()> job;
    {
      absl::MutexLock l(&mu_);
      mu_.Await(absl::Condition(
          +[](BlockingPool* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) {
            return p->stopping_ || !p->jobs_.empty();
          },
          this));
      // Stopping: queued jobs are dropped, not run (nobody waits for them).
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

}  // namespace binrelay::proxy
