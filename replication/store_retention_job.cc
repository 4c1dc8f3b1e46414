#include "replication/store_retention_job.h"

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace binrelay::replication {

uint64_t DefaultHardCapBytes(uint64_t retention_bytes) {
  if (retention_bytes == 0) return 0;
  // Saturate instead of wrapping for absurd sizes.
  return retention_bytes > UINT64_MAX / 2 ? UINT64_MAX : retention_bytes * 2;
}

RetentionPolicy MakeRetentionPolicy(uint64_t retention_hours, uint64_t retention_bytes,
                                    std::optional<uint64_t> retention_hard_cap_bytes) {
  RetentionPolicy p;
  p.max_age = std::chrono::hours(retention_hours);
  p.max_bytes = retention_bytes;
  p.hard_cap_bytes = retention_hard_cap_bytes.value_or(DefaultHardCapBytes(retention_bytes));
  return p;
}

PurgeOptions ToPurgeOptions(const RetentionPolicy& policy) {
  PurgeOptions o;
  if (policy.max_age.count() > 0) o.older_than = policy.max_age;
  if (policy.max_bytes > 0) o.max_total_bytes = policy.max_bytes;
  if (policy.hard_cap_bytes > 0) o.hard_cap_bytes = policy.hard_cap_bytes;
  return o;
}

RetentionJob::RetentionJob(BinlogStore* store, RetentionPolicy policy,
                           std::chrono::milliseconds interval)
    : store_(store), policy_(policy), interval_(interval) {}

RetentionJob::~RetentionJob() { Stop(); }

void RetentionJob::Start() {
  absl::MutexLock l(&mu_);
  if (started_ || stopping_) return;
  started_ = true;
  thread_ = std::thread([this] { Loop(); });
}

void RetentionJob::Stop() {
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void RetentionJob::RunSoon() {
  absl::MutexLock l(&mu_);
  run_soon_ = true;
}

void RetentionJob::Loop() {
  auto woken = [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return stopping_ || run_soon_; };
  while (true) {
    (void)RunOnce();  // recorded in stats_ and logged
    absl::MutexLock l(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&woken), absl::FromChrono(interval_));
    if (stopping_) return;
    run_soon_ = false;
  }
}

absl::StatusOr<PurgeResult> RetentionJob::RunOnce() {
  absl::StatusOr<PurgeResult> r = store_->Purge(ToPurgeOptions(policy_));
  absl::MutexLock l(&mu_);
  ++stats_.runs;
  if (!r.ok()) {
    ++stats_.failures;
    // Log a failure once per distinct message: it repeats every pass.
    if (stats_.last_error != r.status().message()) {
      spdlog::error("retention: {}", r.status().ToString());
    }
    stats_.last_error = std::string(r.status().message());
    return r;
  }
  stats_.last_error.clear();
  stats_.purged_files += r->removed.size();
  stats_.pinned_purged += r->removed_pinned.size();
  stats_.lost_consumers += r->lost_consumers.size();
  std::string kept;
  if (!r->kept_for_pin.empty()) {
    kept = absl::StrCat(r->kept_for_pin, " kept for ", r->kept_for_consumer);
  }
  if (kept != stats_.kept_for && !kept.empty()) {
    spdlog::info(
        "retention: {} although the retention limits want it gone (the store may grow past "
        "retention_bytes until that consumer moves on)",
        kept);
  }
  stats_.kept_for = std::move(kept);
  return r;
}

RetentionStats RetentionJob::stats() const {
  absl::MutexLock l(&mu_);
  return stats_;
}

}  // namespace binrelay::replication
