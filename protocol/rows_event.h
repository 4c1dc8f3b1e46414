// Rows events (libbinlogevents/src/rows_event.cpp Rows_event): WRITE/UPDATE/
// DELETE_ROWS v1 (23..25), v2 (30..32, with
// extra-data TLVs), PARTIAL_UPDATE_ROWS (39), MariaDB compressed rows
// (166..171) and the pre-GA 20..22 (v1 layout). This file parses the header
// and bitmaps into a RowsEventView; row_decoder.h turns the rows into JSON.
//
// PeekRowsTableId reads only the table id: the subscription filter uses it so
// unsubscribed tables' events are never parsed further.
//
// Thread safety: pure functions.
// Lifetime: RowsEventView points into the EventView's buffer.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "protocol/event_header.h"
#include "protocol/format_description.h"

namespace binrelay::protocol {

// Rows-event flags.
inline constexpr uint16_t kRowsStmtEnd = 0x1;
inline constexpr uint16_t kRowsNoForeignKeyChecks = 0x2;
inline constexpr uint16_t kRowsRelaxedUniqueChecks = 0x4;
inline constexpr uint16_t kRowsCompleteRows = 0x8;

enum class RowsKind : uint8_t { kWrite, kUpdate, kDelete };

struct RowsEventView {
  uint8_t type = 0;
  RowsKind kind = RowsKind::kWrite;
  uint8_t version = 1;         // 0 pre-GA, 1, 2
  bool partial_json = false;   // PARTIAL_UPDATE_ROWS: after images carry value_options
  bool compressed = false;     // MariaDB: `rows` is a compressed field
  uint64_t table_id = 0;
  uint16_t flags = 0;
  // v2 extra data (without its 2-byte length), raw, and what we understood.
  std::string_view extra_data;
  bool has_partition = false;
  uint16_t partition_id = 0;
  uint16_t source_partition_id = 0;  // UPDATE/PARTIAL only
  std::string_view ndb_info;         // NDB info payload (after its format byte)
  uint64_t column_count = 0;
  // Columns present in the before image (UPDATE/DELETE) or the after image
  // (WRITE): `columns_before` is always the first bitmap; `columns_after` is
  // the second bitmap for UPDATE/PARTIAL and equals the first for WRITE.
  std::string_view columns_before;
  std::string_view columns_after;
  std::string_view rows;  // to the end of the body (compressed if `compressed`)
  uint64_t event_offset = 0;
  size_t rows_body_offset = 0;  // where `rows` starts inside the body

  bool stmt_end() const { return (flags & kRowsStmtEnd) != 0; }
  bool has_before() const { return kind != RowsKind::kWrite; }
  bool has_after() const { return kind != RowsKind::kDelete; }
};

// Reads only the table id of any rows event type.
absl::StatusOr<uint64_t> PeekRowsTableId(const EventView& ev, const FormatDescription& fd);

// Parses header, extra data and bitmaps. Hostile widths and lengths give
// DataLoss naming the event type and offset.
absl::StatusOr<RowsEventView> ParseRowsEvent(const EventView& ev, const FormatDescription& fd);

// The error for a row image that holds no bytes (no column present): the
// row loops must refuse it, or they never reach the end of the rows area.
absl::Status RowWithoutBytesError(const RowsEventView& ev, std::string_view db,
                                  std::string_view table, size_t row_index);

}  // namespace binrelay::protocol
