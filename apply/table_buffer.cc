#include "apply/table_buffer.h"

#include <cstring>

namespace binrelay::apply {

BufferedRow TableBuffer::Copy(bool is_delete, std::string_view image) {
  char* p = arena_.Allocate(image.size());
  if (!image.empty()) std::memcpy(p, image.data(), image.size());
  return BufferedRow{is_delete, std::string_view(p, image.size()), image.size()};
}

int64_t TableBuffer::Find(std::string_view key) const {
  if (ascending_ > 0 && key <= keys_[ascending_ - 1]) {
    size_t lo = 0, hi = ascending_;  // keys_[lo, hi) may hold it
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      const int c = key.compare(keys_[mid]);
      if (c == 0) return static_cast<int64_t>(mid);
      if (c < 0) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
  }
  auto it = map_.find(key);
  return it == map_.end() ? -1 : static_cast<int64_t>(it->second);
}

void TableBuffer::Put(std::string_view key, bool is_delete, std::string_view image) {
  ++changes_;
  if (!keyed_) {
    rows_.push_back(Copy(is_delete, image));
    bytes_ += image.size() + kEntryOverhead;
    return;
  }
  // In key order so far and past the last key: new, and still in order.
  const bool extends = ascending_ == rows_.size() && (rows_.empty() || key > keys_.back());
  const int64_t found = extends ? -1 : Find(key);
  if (found < 0) {
    char* k = arena_.Allocate(key.size());
    if (!key.empty()) std::memcpy(k, key.data(), key.size());
    const std::string_view stored(k, key.size());
    if (extends) {
      ++ascending_;
    } else {
      map_.emplace(stored, static_cast<uint32_t>(rows_.size()));
    }
    keys_.push_back(stored);
    rows_.push_back(Copy(is_delete, image));
    bytes_ += key.size() + kEntryOverhead + image.size();
    return;
  }
  BufferedRow& row = rows_[static_cast<size_t>(found)];
  if (image.size() <= row.capacity) {
    // A hot row rewrites its own bytes: no allocation, no growth.
    char* p = const_cast<char*>(row.image.data());
    if (!image.empty()) std::memmove(p, image.data(), image.size());
    row.image = std::string_view(p, image.size());
    row.is_delete = is_delete;
    return;
  }
  // The old copy stays in the arena until the drain, so it stays counted.
  const BufferedRow fresh = Copy(is_delete, image);
  bytes_ += fresh.capacity;
  row = fresh;
}

DrainedTable TableBuffer::Take() {
  DrainedTable out;
  out.keyed = keyed_;
  out.bytes = bytes_;
  out.changes = changes_;
  last_drain_rows_ = rows_.size();
  out.rows = std::move(rows_);
  out.arena = std::move(arena_);
  arena_ = ImageArena(pool_);
  // Sized like the last drain: growing by doubling copies every entry again
  // and faults in fresh pages at each step.
  rows_ = std::vector<BufferedRow>();
  rows_.reserve(last_drain_rows_);
  if (keys_.capacity() > 2 * last_drain_rows_ + 1024) {
    // One big drain (a bulk load) must not pin its index's memory for good.
    keys_ = std::vector<std::string_view>();
  }
  keys_.clear();  // otherwise keeps its capacity
  ascending_ = 0;
  map_.clear();
  bytes_ = 0;
  changes_ = 0;
  return out;
}

}  // namespace binrelay::apply
