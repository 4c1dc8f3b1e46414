#include "apply/table_buffer.h"

#include <cstring>

namespace binrelay::apply {

BufferedRow TableBuffer::Copy(bool is_delete, std::string_view image) {
  char* p = arena_.Allocate(image.size());
  if (!image.empty()) std::memcpy(p, image.data(), image.size());
  return BufferedRow{is_delete, std::string_view(p, image.size()), image.size()};
}

void TableBuffer::Put(std::string_view key, bool is_delete, std::string_view image) {
  ++changes_;
  if (!keyed_) {
    rows_.push_back(Copy(is_delete, image));
    bytes_ += image.size() + kEntryOverhead;
    return;
  }
  auto [it, inserted] = map_.try_emplace(absl::string_view(key.data(), key.size()),
                                         static_cast<uint32_t>(rows_.size()));
  if (inserted) {
    rows_.push_back(Copy(is_delete, image));
    bytes_ += key.size() + kEntryOverhead + image.size();
    return;
  }
  BufferedRow& row = rows_[it->second];
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
  out.rows = std::move(rows_);
  out.arena = std::move(arena_);
  arena_ = ImageArena(pool_);
  rows_.clear();
  map_.clear();
  bytes_ = 0;
  changes_ = 0;
  return out;
}

}  // namespace binrelay::apply
