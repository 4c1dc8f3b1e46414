// TextRows: the rows of one text-protocol result set with every value in
// one buffer, for results too large for one allocation per value (a move's
// copy reads a chunk of up to hundreds of thousands of rows at a time).
//
// Thread safety: none; const methods from any thread once filled.
// Lifetime: views returned by Get point into this object and stay valid
// until it is changed or destroyed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace binrelay::protocol {

class TextRows {
 public:
  TextRows() = default;
  // Empties it, for rows of `columns` values.
  void Reset(size_t columns);

  size_t columns() const { return columns_; }
  size_t size() const { return columns_ == 0 ? 0 : cells_.size() / columns_; }
  bool empty() const { return cells_.empty(); }
  // The values' bytes held (what the rows cost in memory, cells aside).
  size_t value_bytes() const { return bytes_.size(); }
  // The value in `row`, `column` (both in range); nullopt for NULL.
  std::optional<std::string_view> Get(size_t row, size_t column) const {
    const Cell& c = cells_[row * columns_ + column];
    if (c.null) return std::nullopt;
    return std::string_view(bytes_.data() + c.offset, c.size);
  }

  // Appends one text row (lenenc strings, 0xFB for NULL) of columns()
  // values. Extra bytes after the last value are DataLoss; a failed row
  // leaves the rows before it as they were.
  absl::Status AppendRow(std::string_view payload);
  // Appends one row of values (tests, and sources that are not a wire);
  // InvalidArgument unless it has columns() of them.
  absl::Status AppendValues(const std::vector<std::optional<std::string>>& values);

 private:
  struct Cell {
    uint64_t offset = 0;
    uint32_t size = 0;
    bool null = false;
  };
  size_t columns_ = 0;
  std::string bytes_;
  std::vector<Cell> cells_;
};

}  // namespace binrelay::protocol
