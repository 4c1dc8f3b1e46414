// TABLE_MAP_EVENT (19, libbinlogevents/src/rows_event.cpp Table_map_event):
// maps a table id to db.table and the column
// types, per-type metadata, nullability and optional metadata (signedness,
// charsets, names, ENUM/SET members, geometry types, primary key, column
// visibility, vector dimensions). Parsed into an owned protocol::TableDef
// (column_def.h conventions: STRING's real type resolved, so ENUM/SET become
// kTypeEnum/kTypeSet; NEWDECIMAL meta = precision<<8|scale; BIT meta =
// bytes<<8|bits, i.e. the two TABLE_MAP bytes read little-endian).
//
// Thread safety: pure functions.
// Lifetime: TableMap owns everything (it is the table-map cache's entry);
// TableMapIds holds views into the event body.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "protocol/column_def.h"
#include "protocol/event_header.h"
#include "protocol/format_description.h"

namespace binrelay::protocol {

// TABLE_MAP flags.
inline constexpr uint16_t kTableMapBitLenExact = 0x1;
inline constexpr uint16_t kTableMapReferredFkDb = 0x2;
inline constexpr uint16_t kTableMapGeneratedInvisiblePk = 0x4;

// Optional-metadata TLV types (Table_map_event::Optional_metadata_field_type).
enum OptionalMetadataType : uint8_t {
  kOptSignedness = 1,
  kOptDefaultCharset = 2,
  kOptColumnCharset = 3,
  kOptColumnName = 4,
  kOptSetStrValue = 5,
  kOptEnumStrValue = 6,
  kOptGeometryType = 7,
  kOptSimplePrimaryKey = 8,
  kOptPrimaryKeyWithPrefix = 9,
  kOptEnumAndSetDefaultCharset = 10,
  kOptEnumAndSetColumnCharset = 11,
  kOptColumnVisibility = 12,
  kOptVectorDimensionality = 13,
};

struct TableMap {
  TableDef def;
  uint16_t flags = 0;
  // Bit t set when optional-metadata type t was present (unknown types too,
  // for t < 64; they are skipped by length).
  uint64_t optional_metadata_seen = 0;
  // Per column, from COLUMN_VISIBILITY; empty if absent (all visible).
  std::vector<bool> visible;
  // Per column, from VECTOR_DIMENSIONALITY; 0 for non-vector columns.
  std::vector<uint32_t> vector_dimensions;
  // Prefix length per def.primary_key entry (0 = whole column); all 0 for
  // SIMPLE_PRIMARY_KEY.
  std::vector<uint32_t> primary_key_prefix;

  bool has_optional(uint8_t type) const {
    return type < 64 && (optional_metadata_seen >> type) & 1;
  }
};

// Parses a TABLE_MAP event. Errors name db.table, the column (index and
// type) where relevant, and the event offset.
absl::StatusOr<TableMap> ParseTableMap(const EventView& ev, const FormatDescription& fd);

struct TableMapIds {
  uint64_t table_id = 0;
  std::string_view db;
  std::string_view table;
};

// Reads only the table id and names (no column parsing): the subscription
// filter's fast path.
absl::StatusOr<TableMapIds> PeekTableMapIds(const EventView& ev, const FormatDescription& fd);

// Width in bytes of table ids in TABLE_MAP and rows events: 4 when the FDE
// gives TABLE_MAP a 6-byte post-header (pre-5.1.4 servers), else 6.
size_t TableIdWidth(const FormatDescription& fd);

// The classification SIGNEDNESS and the charset TLVs use (is_numeric_type /
// is_character_type: MySQL sql/log_event.cc, MariaDB sql/log_event_client.cc),
// on resolved
// types (ColumnDef::type). MariaDB also counts GEOMETRY as a character column;
// MySQL 9 counts VECTOR.
bool IsNumericColumn(uint8_t type);
bool IsCharacterColumn(uint8_t type, bool mariadb);

}  // namespace binrelay::protocol
