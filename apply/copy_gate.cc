#include "apply/copy_gate.h"

#include <chrono>
#include <utility>

namespace binrelay::apply {

absl::StatusOr<uint64_t> TableCopyGate::Dispatch(std::optional<std::string> upper) {
  std::lock_guard<std::mutex> l(mu_);
  return w_.Dispatch(std::move(upper));
}

void TableCopyGate::Complete(uint64_t id) {
  std::lock_guard<std::mutex> l(mu_);
  w_.Complete(id);
}

void TableCopyGate::Disable() {
  std::lock_guard<std::mutex> l(mu_);
  w_.Disable();
}

bool TableCopyGate::Admit(std::string_view ordered_key) {
  std::lock_guard<std::mutex> l(mu_);
  return w_.Admit(ordered_key);
}

bool TableCopyGate::MustDefer(std::string_view ordered_key) const {
  std::lock_guard<std::mutex> l(mu_);
  return w_.MustDefer(ordered_key);
}

void TableCopyGate::SetDeferred(size_t rows) {
  std::lock_guard<std::mutex> l(mu_);
  deferred_.store(rows, std::memory_order_relaxed);
  if (rows == 0) cv_.notify_all();
}

bool TableCopyGate::WaitNoneDeferred(absl::Duration timeout) {
  std::unique_lock<std::mutex> l(mu_);
  return cv_.wait_for(l, absl::ToChronoMilliseconds(timeout),
                      [&] { return deferred_.load(std::memory_order_relaxed) == 0; });
}

TableCopyGate::Snapshot TableCopyGate::snapshot() const {
  std::lock_guard<std::mutex> l(mu_);
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
