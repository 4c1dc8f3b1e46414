// ConnectionRegistry: the set of open listener connections, so Stop() can
// close them all. Each entry is a closer callback that the connection
// registered; the registry knows nothing about sockets or coroutines.
//
// Kept out of the listener's coroutine translation unit on purpose
// (style.md: lock-based classes apart, for a clang -Wthread-safety job).
//
// Thread safety: all methods are thread-safe.
// Lifetime: closers are copied out and run by the caller of CloseAll(),
// without the lock held.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace binrelay::proxy {

class ConnectionRegistry {
 public:
  using Closer = std::function<void()>;
  // Registers a connection; nullopt once CloseAll() has run (the caller must
  // then close the connection itself).
  std::optional<uint64_t> Add(Closer closer);
  void Remove(uint64_t id);
  // Refuses further Add()s and returns every registered closer.
  std::vector<Closer> CloseAll();
  size_t size() const;

 private:
  mutable absl::Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_map<uint64_t, Closer> closers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace binrelay::proxy
