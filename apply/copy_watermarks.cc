#include "apply/copy_watermarks.h"

#include <utility>

namespace binrelay::apply {
namespace {

// Keys compare as bytes (std::string_view compares as unsigned char).
bool Above(std::string_view key, const std::string& bound) { return key > bound; }

}  // namespace

CopyWatermarks::CopyWatermarks(bool exact_order, std::optional<std::string> copied,
                               std::optional<std::string> checkpoint_guard,
                               std::optional<std::string> target_highest)
    : exact_order_(exact_order),
      dispatched_any_(copied.has_value()),
      high_(copied),
      low_(std::move(copied)),
      guard_(std::move(checkpoint_guard)) {
  if (target_highest && (!guard_ || Above(*target_highest, *guard_))) {
    guard_ = std::move(target_highest);
  }
}

absl::StatusOr<uint64_t> CopyWatermarks::Dispatch(std::optional<std::string> upper) {
  // Chunks go out in key order: a bound that does not rise, or a chunk
  // after the one to the end, is a copier bug that would misplace changes.
  if (last_dispatched_) {
    return absl::InternalError("a chunk was handed out after the one to the end of the table");
  }
  if (exact_order_ && upper && high_ && !Above(*upper, *high_)) {
    return absl::InternalError("a chunk's upper bound does not rise above the last one's");
  }
  const uint64_t id = next_id_++;
  Chunk c;
  c.lower = high_;
  c.upper = upper;
  in_flight_.emplace(id, std::move(c));
  dispatched_any_ = true;
  if (upper) {
    high_ = std::move(upper);
  } else {
    last_dispatched_ = true;
  }
  return id;
}

void CopyWatermarks::Complete(uint64_t id) {
  auto it = in_flight_.find(id);
  if (it == in_flight_.end()) return;
  it->second.complete = true;
  // The copied prefix grows only through chunks complete in key order.
  while (!in_flight_.empty() && in_flight_.begin()->second.complete) {
    Chunk& front = in_flight_.begin()->second;
    if (front.upper) {
      low_ = std::move(front.upper);
    } else {
      done_ = true;
    }
    in_flight_.erase(in_flight_.begin());
  }
}

bool CopyWatermarks::NotYetDispatched(std::string_view key) const {
  if (!dispatched_any_) return true;
  if (last_dispatched_) return false;
  return !high_ || Above(key, *high_);
}

bool CopyWatermarks::Admit(std::string_view key) {
  if (!enabled_ || !NotYetDispatched(key)) return true;
  const bool above_guard = !guard_ || Above(key, *guard_);
  if (exact_order_ && dispatched_any_ && above_guard) {
    ++dropped_;
    return false;
  }
  // Kept while no chunk covers it: it may reach the target before its
  // chunk, whose INSERT IGNORE then skips the row, so no later change to
  // it may be dropped.
  if (above_guard) guard_ = std::string(key);
  return true;
}

bool CopyWatermarks::MustDefer(std::string_view key) const {
  if (!enabled_) return false;
  for (const auto& [id, c] : in_flight_) {
    if (c.complete) continue;
    if (!exact_order_) return true;  // a chunk in flight may hold any key
    if ((!c.lower || Above(key, *c.lower)) && (!c.upper || !Above(key, *c.upper))) return true;
  }
  return false;
}

std::optional<std::string> CopyWatermarks::checkpoint_guard() const {
  if (!high_) return guard_;
  if (!guard_) return high_;
  return Above(*guard_, *high_) ? guard_ : high_;
}

}  // namespace binrelay::apply
