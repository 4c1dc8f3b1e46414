// DumpRegistry: the dumps currently being served, with where each has read
// to, for SHOW SLAVE HOSTS-style listings, /status and /metrics.
//
// Thread safety: all methods from any thread.
// Lifetime: Snapshot returns copies.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "replication/binlog_position.h"

namespace binrelay::proxy {

struct DumpInfo {
  std::string peer;        // host:port of the client
  uint32_t server_id = 0;  // as sent in the dump command
  std::string mode;        // "file/position", "mariadb gtid", "mysql gtid"
  replication::BinlogPosition position;  // next event to send
  absl::Time connected;
  absl::Time caught_up;    // last time it had everything committed
};

class DumpRegistry {
 public:
  uint64_t Add(DumpInfo info) {
    absl::MutexLock l(&mu_);
    uint64_t id = next_id_++;
    dumps_.emplace(id, std::move(info));
    return id;
  }
  void Update(uint64_t id, const replication::BinlogPosition& position, bool caught_up) {
    absl::MutexLock l(&mu_);
    auto it = dumps_.find(id);
    if (it == dumps_.end()) return;
    it->second.position = position;
    if (caught_up) it->second.caught_up = absl::Now();
  }
  void Remove(uint64_t id) {
    absl::MutexLock l(&mu_);
    dumps_.erase(id);
  }
  std::vector<DumpInfo> Snapshot() const {
    absl::MutexLock l(&mu_);
    std::vector<DumpInfo> out;
    out.reserve(dumps_.size());
    for (const auto& [id, d] : dumps_) out.push_back(d);
    return out;
  }

 private:
  mutable absl::Mutex mu_;
  std::map<uint64_t, DumpInfo> dumps_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace binrelay::proxy
