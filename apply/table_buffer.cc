#include "apply/table_buffer.h"

namespace binrelay::apply {

void TableBuffer::Put(std::string_view key, bool is_delete, std::string_view image) {
  ++changes_;
  if (!keyed_) {
    rows_.push_back(BufferedRow{is_delete, std::string(image)});
    bytes_ += image.size() + kEntryOverhead;
    return;
  }
  auto [it, inserted] = map_.try_emplace(absl::string_view(key.data(), key.size()),
                                         static_cast<uint32_t>(rows_.size()));
  if (inserted) {
    rows_.push_back(BufferedRow{is_delete, std::string(image)});
    bytes_ += key.size() + kEntryOverhead + image.size();
    return;
  }
  BufferedRow& row = rows_[it->second];
  bytes_ = bytes_ - row.image.size() + image.size();
  row.is_delete = is_delete;
  row.image.assign(image);  // reuses the buffer: a hot row costs no allocation
}

DrainedTable TableBuffer::Take() {
  DrainedTable out;
  out.keyed = keyed_;
  out.bytes = bytes_;
  out.changes = changes_;
  out.rows = std::move(rows_);
  rows_.clear();
  map_.clear();
  bytes_ = 0;
  changes_ = 0;
  return out;
}

}  // namespace binrelay::apply
