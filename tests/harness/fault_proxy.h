// FaultProxy: a TCP proxy on a loopback port in front of another (a source,
// binrelay's listener, an apply target) that injects faults into every
// connection at random byte offsets: a reset (RST), a half-close (FIN to
// both ends, reads go on), a clean drop, a stall (nothing forwarded for a
// while) and a delay (every later chunk waits). Between faults it forwards
// bytes unchanged. SetEnabled(false) turns it into a plain proxy, so a test
// can let everything converge at the end.
//
// The seed makes the offsets and the choice of faults repeatable per
// connection order. A StreamRewriter can change what the upstream sends
// (a test's way to make a real server's stream carry something it does not).
//
// Thread safety: Start/destructor from one thread; SetEnabled and the
// counters from any. Lifetime: the destructor closes every connection and
// joins its threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"

namespace binrelay::testing {

// Changes the bytes the upstream sends before they reach the client; one
// per connection, fed every chunk in order. Returns what to forward now
// (it may hold back an incomplete unit).
class StreamRewriter {
 public:
  virtual ~StreamRewriter() = default;
  virtual void Feed(const char* data, size_t n, std::string* out) = 0;
};

class FaultProxy {
 public:
  struct Options {
    uint16_t upstream_port = 0;  // on 127.0.0.1
    uint32_t seed = 1;
    // A fault after a uniform number of forwarded bytes in [min, max].
    uint64_t min_bytes = 1;
    uint64_t max_bytes = 256 * 1024;
    std::chrono::milliseconds stall{1500};
    std::chrono::milliseconds delay{20};  // per chunk, once a delay fault hit
    // After this many faults (over all connections) the proxy forwards
    // cleanly; 0 = no limit.
    uint64_t max_faults = 0;
    // Only these kinds are drawn (all of them when empty).
    std::vector<int> kinds;
    // Set: every connection's upstream-to-client bytes go through a rewriter
    // it makes.
    std::function<std::unique_ptr<StreamRewriter>()> rewriter;
  };
  enum Fault { kReset, kHalfClose, kDrop, kStall, kDelay, kFaultKinds };

  static absl::StatusOr<std::unique_ptr<FaultProxy>> Start(const Options& options);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  uint16_t port() const { return port_; }
  void SetEnabled(bool on) { enabled_ = on; }
  uint64_t faults(Fault kind) const { return counts_[kind]; }
  uint64_t faults() const;
  uint64_t connections() const { return connections_; }

 private:
  explicit FaultProxy(const Options& options) : options_(options), rng_(options.seed) {}
  void AcceptLoop();
  void Serve(int client, uint64_t seed);

  Options options_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> enabled_{true};
  std::atomic<uint64_t> counts_[kFaultKinds] = {};
  std::atomic<uint64_t> connections_{0};
  std::mt19937_64 rng_;
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> workers_;
  std::vector<int> open_fds_;  // shut down at destruction to unblock workers
};

}  // namespace binrelay::testing
