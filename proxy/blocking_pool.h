// BlockingPool: a few threads for the work a connection must not do on an
// io thread: SQL on the source (forwarded queries), a scan of a stored file
// (binlog_gtid_pos), a purge (unlink and fsync). A bounded queue: when it is
// full, Submit refuses and the client gets an error instead of binrelay
// queueing without limit.
//
// Thread safety: Submit from any thread. Jobs run on the pool's threads and
// must not throw.
// Lifetime: the destructor stops taking jobs, drops those not started, and
// joins the threads (waiting for the running ones).
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace binrelay::proxy {

class BlockingPool {
 public:
  BlockingPool(int threads, size_t max_queued);
  ~BlockingPool();
  BlockingPool(const BlockingPool&) = delete;
  BlockingPool& operator=(const BlockingPool&) = delete;

  // False (the job is dropped, not run) when max_queued jobs wait already
  // or the pool is stopping.
  bool Submit(std::function<void()> job);
  size_t queued() const;

 private:
  void Run();

  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> jobs_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  const size_t max_queued_;
  std::vector<std::thread> threads_;
};

}  // namespace binrelay::proxy
