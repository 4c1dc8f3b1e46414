// RetentionJob: applies the store's retention policy ([store]
// retention_hours, retention_bytes, retention_hard_cap_bytes) by calling
// BinlogStore::Purge, once now and then every interval on its own thread.
//
// A pass also runs soon after each rotation (RunSoon, wired to the store's
// file-closed listener), as MySQL applies binlog_expire_logs_seconds when it
// rotates: the store's size is checked when it grows by a file, not only once
// a minute.
//
// Files older than max_age or beyond max_bytes are purged, oldest first,
// unless a pin (a consumer still reading) needs them: then they stay, and the
// store may grow past max_bytes. Past hard_cap_bytes the pinned files go too,
// the purge is logged as a warning naming files and consumers, and those
// consumers' pins turn lost() (their dumps end with the reason).
//
// Thread safety: all methods from any thread. The passes run on the job's
// thread (Purge unlinks and fsyncs the index: never on an io thread).
// Lifetime: the store must outlive the job; the destructor stops it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "replication/binlog_store.h"

namespace binrelay::replication {

struct RetentionPolicy {
  std::chrono::system_clock::duration max_age{0};  // 0: no age limit
  uint64_t max_bytes = 0;                           // 0: no size limit
  uint64_t hard_cap_bytes = 0;                      // 0: pins always win
};

// The hard cap when none is configured: twice retention_bytes, so a stuck
// consumer can hold back at most as much again as the configured size; none
// when there is no size limit (0).
uint64_t DefaultHardCapBytes(uint64_t retention_bytes);

// The policy of [store] retention_hours / retention_bytes /
// retention_hard_cap_bytes (unset: DefaultHardCapBytes(retention_bytes)).
RetentionPolicy MakeRetentionPolicy(uint64_t retention_hours, uint64_t retention_bytes,
                                    std::optional<uint64_t> retention_hard_cap_bytes);

PurgeOptions ToPurgeOptions(const RetentionPolicy& policy);

struct RetentionStats {
  uint64_t runs = 0;
  uint64_t purged_files = 0;    // by this job
  uint64_t pinned_purged = 0;   // of which a pin still needed (hard cap)
  uint64_t lost_consumers = 0;  // pins lost to the hard cap
  uint64_t failures = 0;
  std::string last_error;       // "" once a pass succeeds again
  std::string kept_for;         // latest "FILE kept for CONSUMER at FILE:POS", or ""
};

class RetentionJob {
 public:
  RetentionJob(BinlogStore* store, RetentionPolicy policy,
               std::chrono::milliseconds interval = std::chrono::minutes(1));
  ~RetentionJob();
  RetentionJob(const RetentionJob&) = delete;
  RetentionJob& operator=(const RetentionJob&) = delete;

  // Runs a pass now, then one every interval, on the job's thread. Once.
  void Start();
  // Stops and joins the thread. Idempotent.
  void Stop();
  // Asks the job's thread for a pass now instead of at the next interval.
  // Only signals: safe under the store's lock (its file-closed listener).
  void RunSoon();
  // One pass on the calling thread (tests; a purge on demand). Errors are
  // also recorded in stats() and logged.
  absl::StatusOr<PurgeResult> RunOnce();

  RetentionStats stats() const;
  const RetentionPolicy& policy() const { return policy_; }

 private:
  void Loop();

  BinlogStore* const store_;
  const RetentionPolicy policy_;
  const std::chrono::milliseconds interval_;
  std::thread thread_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool run_soon_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  RetentionStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace binrelay::replication
