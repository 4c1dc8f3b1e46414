#include "apply/table_buffer.h"

namespace binrelay::apply {

void TableBuffer::Put(std::string_view key, bool is_delete, std::string_view image) {
  ++changes_;
  if (!keyed_) {
    fifo_.push_back(BufferedRow{is_delete, std::string(image)});
    bytes_ += image.size() + kEntryOverhead;
    return;
  }
  auto [it, inserted] = map_.try_emplace(absl::string_view(key.data(), key.size()));
  BufferedRow& row = it->second;
  if (inserted) {
    bytes_ += key.size() + kEntryOverhead;
  } else {
    bytes_ -= row.image.size();
  }
  row.is_delete = is_delete;
  row.image.assign(image);
  bytes_ += image.size();
}

DrainedTable TableBuffer::Take() {
  DrainedTable out;
  out.keyed = keyed_;
  out.bytes = bytes_;
  out.changes = changes_;
  if (keyed_) {
    out.rows.reserve(map_.size());
    for (auto& [key, row] : map_) out.rows.push_back(std::move(row));
    map_.clear();
  } else {
    out.rows = std::move(fifo_);
    fifo_.clear();
  }
  bytes_ = 0;
  changes_ = 0;
  return out;
}

}  // namespace binrelay::apply
