// Text-protocol result set pieces
// (https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_query_response_text_resultset.html):
// Column Definition 41 and
// text rows, as returned for COM_QUERY.
//
// Thread safety: pure functions.
// Lifetime: ColumnDefinition's views point into the payload it was parsed
// from; ParseTextRow copies values into the caller's row.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace binrelay::protocol {

struct ColumnDefinition {
  std::string_view schema;
  std::string_view table;
  std::string_view org_table;
  std::string_view name;
  std::string_view org_name;
  uint16_t collation = 0;
  uint32_t length = 0;
  uint8_t type = 0;
  uint16_t flags = 0;
  uint8_t decimals = 0;
};
absl::StatusOr<ColumnDefinition> ParseColumnDefinition(std::string_view payload);

// Decodes one text row of `columns` values (0xFB = NULL) into *row, reusing
// its storage. Extra bytes after the last value are DataLoss.
absl::Status ParseTextRow(std::string_view payload, size_t columns,
                          std::vector<std::optional<std::string>>* row);

}  // namespace binrelay::protocol
