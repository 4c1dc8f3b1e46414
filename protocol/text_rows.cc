#include "protocol/text_rows.h"

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {

void TextRows::Reset(size_t columns) {
  columns_ = columns;
  bytes_.clear();
  cells_.clear();
}

absl::Status TextRows::AppendRow(std::string_view payload) {
  const size_t bytes_before = bytes_.size();
  const size_t cells_before = cells_.size();
  auto undo = [&](absl::Status s) {
    bytes_.resize(bytes_before);
    cells_.resize(cells_before);
    return s;
  };
  ByteCursor c(payload);
  for (size_t i = 0; i < columns_; ++i) {
    bool is_null = false;
    std::string_view v = c.LenencString(&is_null);
    if (!c.ok()) return undo(Annotate(c.status("text row"), absl::StrCat("column ", i)));
    // A row is at most max_allowed_packet (1 GiB at most): sizes fit.
    Cell cell;
    cell.offset = bytes_.size();
    cell.size = static_cast<uint32_t>(v.size());
    cell.null = is_null;
    bytes_.append(v);
    cells_.push_back(cell);
  }
  if (!c.empty()) {
    return undo(absl::DataLossError(absl::StrCat("text row has ", c.remaining(),
                                                 " bytes after its ", columns_, " values")));
  }
  return absl::OkStatus();
}

absl::Status TextRows::AppendValues(const std::vector<std::optional<std::string>>& values) {
  if (values.size() != columns_) {
    return absl::InvalidArgumentError(
        absl::StrCat("a row of ", values.size(), " values for ", columns_, " columns"));
  }
  for (const std::optional<std::string>& v : values) {
    Cell cell;
    cell.offset = bytes_.size();
    if (v) {
      cell.size = static_cast<uint32_t>(v->size());
      bytes_.append(*v);
    } else {
      cell.null = true;
    }
    cells_.push_back(cell);
  }
  return absl::OkStatus();
}

}  // namespace binrelay::protocol
