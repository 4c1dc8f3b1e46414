// ConnectionRegistry: the open listener connections, each under its
// connection id (the id the greeting announces, CONNECTION_ID() returns and
// KILL takes), with what SHOW PROCESSLIST shows of it and the hooks that
// close or kill it. The registry knows nothing about sockets or coroutines:
// a connection registers callbacks that post to its own strand.
//
// Kept out of the listener's coroutine translation unit on purpose, so that
// a clang -Wthread-safety job can check this lock-based class.
//
// Thread safety: all methods are thread-safe; hooks are called without the
// lock held.
// Lifetime: hooks are copied out and run by the caller of CloseAll(), and by
// Kill() on the caller's thread; they must only post work.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proxy/connection_control.h"

namespace binrelay::proxy {

class ConnectionRegistry : public ConnectionControl {
 public:
  struct Hooks {
    std::function<void()> close;                 // binrelay stops
    std::function<void(bool query_only)> kill;   // KILL [QUERY]
  };
  // What a connection shows, as it changes.
  struct Activity {
    std::string user;
    std::string db;
    std::string command = "Connect";
    std::string state;
    std::string info;
  };

  // Registers a connection from `host`; its id, or nullopt once CloseAll()
  // has run (the caller must then close the connection itself) or when
  // `limit` connections are open already (*over_limit is then set).
  std::optional<uint32_t> Add(std::string host, Hooks hooks, size_t limit, bool* over_limit);
  void Update(uint32_t id, const Activity& activity);
  void Remove(uint32_t id);
  // Refuses further Add()s and returns every registered close hook.
  std::vector<std::function<void()>> CloseAll();
  size_t size() const;

  std::vector<ConnectionEntry> Connections() const override;
  absl::Status Kill(uint32_t id, bool query_only) override;

 private:
  struct Entry {
    std::string host;
    Activity activity;
    absl::Time since;  // when the current command started
    Hooks hooks;
  };
  mutable absl::Mutex mu_;
  uint32_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_map<uint32_t, Entry> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace binrelay::proxy
