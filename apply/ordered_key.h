// Ordered keys: a primary key encoded so that comparing the bytes (memcmp)
// orders keys as the source orders the primary key, for a move's copier
// and its watermarks (copy_watermarks.h). The same key is encoded from a
// row image (a change read from the binlog) and from the text a SELECT
// returns (a chunk's bounds), and both give the same bytes.
//
// Exact for integers, YEAR, ENUM and SET (by index), DECIMAL, DATE,
// DATETIME, TIMESTAMP, TIME, FLOAT and DOUBLE and binary strings. Character
// strings compare by their bytes, which is not their collation's order (a
// case-insensitive collation sorts 'B' before 'a'): a move tolerates that
// because its repairing checksum covers every chunk, as spirit documents.
// Row keys for buffered maps are row_key.h's (injective, not ordered).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "protocol/column_def.h"
#include "protocol/value.h"

namespace binrelay::apply {

// Appends `v` (a value of `col` as DecodeValue gives it, text for DECIMAL
// and temporal types) to `out`. Components are self-delimiting, so a
// composite key's components concatenate in order.
absl::Status AppendOrderedComponent(const protocol::ColumnDef& col, const protocol::ValueView& v,
                                    std::string* out);

// The same for the text a SELECT of the column returns (character set
// binary, time_zone '+00:00').
absl::Status AppendOrderedComponentFromText(const protocol::ColumnDef& col, std::string_view text,
                                            std::string* out);

// Replaces *out with the ordered key of `image` (a full row image of
// `table`) from the columns `primary_key` names, in order.
absl::Status EncodeOrderedKey(std::string_view image, const protocol::TableDef& table,
                              const std::vector<uint32_t>& primary_key, std::string* scratch,
                              std::string* out);

}  // namespace binrelay::apply
