#include "apply/copy_gate.h"

#include <utility>

namespace binrelay::apply {

absl::StatusOr<uint64_t> TableCopyGate::Dispatch(std::optional<std::string> upper) {
  absl::MutexLock l(&mu_);
  return w_.Dispatch(std::move(upper));
}

void TableCopyGate::Complete(uint64_t id) {
  absl::MutexLock l(&mu_);
  w_.Complete(id);
}

void TableCopyGate::Disable() {
  absl::MutexLock l(&mu_);
  w_.Disable();
}

bool TableCopyGate::Admit(std::string_view ordered_key) {
  absl::MutexLock l(&mu_);
  return w_.Admit(ordered_key);
}

bool TableCopyGate::MustDefer(std::string_view ordered_key) const {
  absl::MutexLock l(&mu_);
  return w_.MustDefer(ordered_key);
}

void TableCopyGate::SetDeferred(size_t rows) {
  absl::MutexLock l(&mu_);
  deferred_.store(rows, std::memory_order_relaxed);
  if (rows == 0) cv_.SignalAll();
}

bool TableCopyGate::WaitNoneDeferred(absl::Duration timeout) {
  absl::MutexLock l(&mu_);
  const absl::Time deadline = absl::Now() + timeout;
  while (deferred_.load(std::memory_order_relaxed) != 0) {
    if (cv_.WaitWithDeadline(&mu_, deadline)) break;
  }
  return deferred_.load(std::memory_order_relaxed) == 0;
}

TableCopyGate::Snapshot TableCopyGate::snapshot() const {
  absl::MutexLock l(&mu_);
  Snapshot s;
  s.low_watermark = w_.low_watermark();
  s.checkpoint_guard = w_.checkpoint_guard();
  s.copy_done = w_.copy_done();
  s.enabled = w_.enabled();
  s.dropped = w_.keys_dropped_above_high();
  s.chunks_in_flight = w_.chunks_in_flight();
  return s;
}

}  // namespace binrelay::apply
