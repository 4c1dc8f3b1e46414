// WorkerPool: a fixed set of threads running submitted jobs, the one pool
// implementation of binrelay. The relay's listener gives it the work a
// connection must not do on an io thread (SQL on the source, a scan of a
// stored file, a purge); an apply pipeline's flusher runs a drain's
// statements on it, one job per target session; a move's copy runs its
// chunk copiers on one. A bounded queue: when it is full, Submit refuses
// and the caller decides (a client gets an error, a JobGroup runs the job
// itself) instead of binrelay queueing without limit.
//
// JobGroup: jobs submitted together and waited for together (a drain's
// statements, a table's copiers).
//
// Thread safety: Submit from any thread. Jobs run on the pool's threads and
// must not throw. A JobGroup is used by one thread.
// Lifetime: the pool's destructor stops taking jobs, drops those not
// started, and joins the threads (waiting for the running ones); a JobGroup
// waits for its jobs on destruction.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace binrelay {

class WorkerPool {
 public:
  WorkerPool(size_t threads, size_t max_queued);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // False (the job is dropped, not run) when max_queued jobs wait already
  // or the pool is stopping.
  bool Submit(std::function<void()> job);
  size_t queued() const;
  size_t threads() const { return threads_.size(); }

 private:
  void Run();

  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> jobs_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  const size_t max_queued_;
  std::vector<std::thread> threads_;
};

class JobGroup {
 public:
  explicit JobGroup(WorkerPool* pool) : pool_(pool) {}
  ~JobGroup() { Wait(); }
  JobGroup(const JobGroup&) = delete;
  JobGroup& operator=(const JobGroup&) = delete;

  // Runs `job` on the pool; if the pool refuses it (full or stopping), here
  // and now, so a group's job always runs exactly once.
  void Run(std::function<void()> job);
  // Until every job given to Run has finished.
  void Wait();

 private:
  struct State {
    absl::Mutex mu;
    size_t pending ABSL_GUARDED_BY(mu) = 0;
  };
  WorkerPool* pool_;
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace binrelay
