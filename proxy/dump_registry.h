// DumpRegistry: the dumps currently being served, with where each has read
// to, for SHOW SLAVE HOSTS-style listings, /status and /metrics.
//
// A dump with the same non-zero server_id as a newer one is ended through
// its stream (MariaDB and MySQL kill a replica's older dump thread when it
// dumps again: sql_repl.cc kill_zombie_dump_threads).
//
// Thread safety: all methods from any thread.
// Lifetime: Snapshot returns copies; a registered stream must Remove itself
// before it is destroyed (streams are only called under the registry lock,
// so Remove makes a later call impossible).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "proxy/dump_stream.h"
#include "replication/binlog_position.h"

namespace binrelay::proxy {

struct DumpInfo {
  std::string peer;        // host:port of the client
  uint32_t server_id = 0;  // as sent in the dump command
  uint32_t connection_id = 0;
  std::string mode;        // "file/position", "mariadb gtid", "mysql gtid"
  replication::BinlogPosition position;  // next event to send
  absl::Time connected;
  absl::Time caught_up;    // last time it had everything committed
};

class DumpRegistry {
 public:
  uint64_t Add(DumpInfo info, DumpStream* stream = nullptr) {
    absl::MutexLock l(&mu_);
    uint64_t id = next_id_++;
    dumps_.emplace(id, Entry{std::move(info), stream});
    return id;
  }
  // Ends every dump with `server_id` (none for 0: mysqlbinlog and other
  // non-replicas use 0) with `why`; returns how many.
  int EndSameServerId(uint32_t server_id, const absl::Status& why) {
    if (server_id == 0) return 0;
    absl::MutexLock l(&mu_);
    int n = 0;
    for (auto& [id, e] : dumps_) {
      if (e.info.server_id == server_id && e.stream != nullptr) {
        e.stream->RequestEnd(why);
        ++n;
      }
    }
    return n;
  }
  void Update(uint64_t id, const replication::BinlogPosition& position, bool caught_up) {
    absl::MutexLock l(&mu_);
    auto it = dumps_.find(id);
    if (it == dumps_.end()) return;
    it->second.info.position = position;
    if (caught_up) it->second.info.caught_up = absl::Now();
  }
  void Remove(uint64_t id) {
    absl::MutexLock l(&mu_);
    dumps_.erase(id);
  }
  std::vector<DumpInfo> Snapshot() const {
    absl::MutexLock l(&mu_);
    std::vector<DumpInfo> out;
    out.reserve(dumps_.size());
    for (const auto& [id, d] : dumps_) out.push_back(d.info);
    return out;
  }

 private:
  mutable absl::Mutex mu_;
  struct Entry {
    DumpInfo info;
    DumpStream* stream = nullptr;
  };
  std::map<uint64_t, Entry> dumps_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace binrelay::proxy
