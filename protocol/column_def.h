// ColumnDef / TableDef: what binrelay knows about a table's columns, merged
// from a TABLE_MAP event (types, metadata, nullability, optional metadata) and,
// where the event lacks them, from the source's information_schema.
//
// Thread safety: plain values; copy freely.
// Lifetime: owned strings; a TableDef stays valid after the event that
// produced it is gone (it is the table-map cache's entry).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace binrelay::protocol {

// Collation ids that matter for decoding. 63 is `binary`.
inline constexpr uint32_t kBinaryCollation = 63;

// MariaDB's fixed-size binary data types (type_uuid, type_inet plugins),
// logged as BINARY(16)/BINARY(4): known only from the schema
// (fixed_binary_text.h prints them as SELECT does).
enum class FixedBinaryType : uint8_t { kNone, kUuid, kInet4, kInet6 };

struct ColumnDef {
  // Type code from TABLE_MAP. For MYSQL_TYPE_STRING the real type (CHAR,
  // ENUM or SET) is already resolved from the metadata, so ENUM and SET
  // columns have type kTypeEnum / kTypeSet here.
  uint8_t type = 0;
  // Type metadata, decoded per type (as sql/rpl_utility.cc table_def::table_def
  // does); DecodeValue relies on exactly this:
  // - VARCHAR / VAR_STRING / VARCHAR_COMPRESSED: max length in bytes.
  // - STRING resolved to CHAR/BINARY: max length in bytes (after the
  //   long-CHAR unfolding of sql/log_event.cc log_event_print_value).
  // - ENUM: pack length 1 or 2. SET: pack length 1, 2, 3, 4 or 8.
  // - BLOB family, GEOMETRY, JSON, VECTOR, BLOB_COMPRESSED: length-prefix
  //   size 1..4.
  // - NEWDECIMAL: (precision << 8) | scale (TABLE_MAP byte 0 is precision).
  // - BIT(n): (whole_bytes << 8) | (n % 8), i.e. TABLE_MAP's two metadata
  //   bytes (byte 0 = n % 8, byte 1 = n / 8) read as a little-endian u16.
  //   BIT(10) -> 0x0102; the value takes whole_bytes + (n % 8 ? 1 : 0) bytes.
  // - TIMESTAMP2 / DATETIME2 / TIME2: fsp 0..6.
  // - TIMESTAMP (7) / TIME (11) / DATETIME (12): 0 for the classic layouts.
  //   MariaDB's pre-10.1 "hires" columns (TIME(n)/DATETIME(n)/TIMESTAMP(n)
  //   created with mysql56_temporal_format=OFF) also use these codes but have
  //   NO TABLE_MAP metadata; the caller must set meta = fsp (1..6) from
  //   information_schema.COLUMNS.DATETIME_PRECISION, otherwise the value size
  //   is misread.
  // - everything else: 0.
  uint16_t meta = 0;
  bool nullable = true;
  bool is_unsigned = false;
  bool unsigned_known = false;  // signedness came from metadata or schema
  uint32_t collation = 0;       // 0 = unknown (treated as utf8mb4 for text)
  std::string name;             // empty = unknown; printed as "@<1-based index>"
  // ENUM / SET member names, if known, in the column's charset (as
  // ENUM_STR_VALUE/SET_STR_VALUE carry them); collation 0 means UTF-8.
  std::vector<std::string> members;
  bool in_primary_key = false;
  uint32_t geometry_type = 0;
  // Declared length in characters/bytes for BINARY(n) re-padding; 0 = unknown.
  uint32_t binary_length = 0;
  // A MariaDB UUID/INET4/INET6 column (from the schema); kNone otherwise.
  FixedBinaryType fixed_binary = FixedBinaryType::kNone;
};

struct TableDef {
  uint64_t table_id = 0;
  std::string db;
  std::string table;
  std::vector<ColumnDef> columns;
  // Indexes into columns, in key order. Empty if the table has no PK or the
  // key is unknown.
  std::vector<uint32_t> primary_key;
  // True when names/signedness/charset came from optional metadata or schema.
  bool names_known = false;
};

}  // namespace binrelay::protocol
