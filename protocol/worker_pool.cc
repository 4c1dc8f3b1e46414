#include "protocol/worker_pool.h"

#include <memory>
#include <utility>

namespace binrelay {

WorkerPool::WorkerPool(size_t threads, size_t max_queued) : max_queued_(max_queued) {
  for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
}

WorkerPool::~WorkerPool() {
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

bool WorkerPool::Submit(std::function<void()> job) {
  absl::MutexLock l(&mu_);
  if (stopping_ || jobs_.size() >= max_queued_ || threads_.empty()) return false;
  jobs_.push_back(std::move(job));
  return true;
}

size_t WorkerPool::queued() const {
  absl::MutexLock l(&mu_);
  return jobs_.size();
}

void WorkerPool::Run() {
  while (true) {
    std::function<void()> job;
    {
      absl::MutexLock l(&mu_);
      mu_.Await(absl::Condition(
          +[](WorkerPool* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) {
            return p->stopping_ || !p->jobs_.empty();
          },
          this));
      // Stopping: queued jobs are dropped, not run (a JobGroup's jobs are
      // never queued on a stopping pool: its owner outlives the group).
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

void JobGroup::Run(std::function<void()> job) {
  {
    absl::MutexLock l(&state_->mu);
    ++state_->pending;
  }
  // The job holds the state: its last unlock may run after Wait() returned
  // and the group is gone.
  auto finish = [state = state_] {
    absl::MutexLock l(&state->mu);
    --state->pending;
  };
  if (pool_ != nullptr && pool_->Submit([job, finish] {
        job();
        finish();
      })) {
    return;
  }
  job();
  finish();
}

void JobGroup::Wait() {
  absl::MutexLock l(&state_->mu);
  state_->mu.Await(absl::Condition(+[](size_t* pending) { return *pending == 0; },
                                   &state_->pending));
}

}  // namespace binrelay
