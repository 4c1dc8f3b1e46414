// CommitSignal: fans the store's "new committed end" notification out to the
// dumps waiting for it. Each registration is one-shot, so a notification
// costs nothing for dumps that are busy sending (they re-check the store
// before waiting again).
//
// Thread safety: all methods from any thread. Notify runs on the store's
// writer thread with store locks held: wake callbacks must only post work.
// Lifetime: wake callbacks are dropped after they run or on Remove.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <utility>

#include "absl/synchronization/mutex.h"

namespace binrelay::proxy {

class CommitSignal {
 public:
  void Notify() {
    std::map<uint64_t, std::function<void()>> waiters;
    {
      absl::MutexLock l(&mu_);
      waiters.swap(waiters_);
    }
    for (auto& [id, wake] : waiters) wake();
  }
  uint64_t Add(std::function<void()> wake) {
    absl::MutexLock l(&mu_);
    uint64_t id = next_id_++;
    waiters_.emplace(id, std::move(wake));
    return id;
  }
  void Remove(uint64_t id) {
    absl::MutexLock l(&mu_);
    waiters_.erase(id);
  }

 private:
  absl::Mutex mu_;
  std::map<uint64_t, std::function<void()>> waiters_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace binrelay::proxy
