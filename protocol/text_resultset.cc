#include "protocol/text_resultset.h"

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {

absl::StatusOr<ColumnDefinition> ParseColumnDefinition(std::string_view payload) {
  ByteCursor c(payload);
  ColumnDefinition d;
  c.LenencString();  // catalog, always "def"
  d.schema = c.LenencString();
  d.table = c.LenencString();
  d.org_table = c.LenencString();
  d.name = c.LenencString();
  d.org_name = c.LenencString();
  // Length of the fixed fields (0x0C); MariaDB may add extended metadata
  // before it only when EXTENDED_METADATA is negotiated, which we never do.
  uint64_t fixed = c.Lenenc();
  if (!c.ok()) return c.status("column definition names");
  if (fixed < 10) {
    return absl::DataLossError(
        absl::StrCat("column definition fixed-field length ", fixed, " is below 10"));
  }
  ByteCursor f(c.Bytes(fixed));
  if (!c.ok()) return c.status("column definition fixed fields");
  d.collation = f.U16();
  d.length = f.U32();
  d.type = f.U8();
  d.flags = f.U16();
  d.decimals = f.U8();
  return d;
}

absl::Status ParseTextRow(std::string_view payload, size_t columns,
                          std::vector<std::optional<std::string>>* row) {
  ByteCursor c(payload);
  row->resize(columns);
  for (size_t i = 0; i < columns; ++i) {
    bool is_null = false;
    std::string_view v = c.LenencString(&is_null);
    if (!c.ok()) return Annotate(c.status("text row"), absl::StrCat("column ", i));
    if (is_null) {
      (*row)[i].reset();
    } else {
      (*row)[i].emplace(v);
    }
  }
  if (!c.empty()) {
    return absl::DataLossError(absl::StrCat("text row has ", c.remaining(),
                                            " bytes after its ", columns, " values"));
  }
  return absl::OkStatus();
}

}  // namespace binrelay::protocol
