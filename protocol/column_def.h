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

struct ColumnDef {
  // Type code from TABLE_MAP. For MYSQL_TYPE_STRING the real type (CHAR,
  // ENUM or SET) is already resolved from the metadata, so ENUM and SET
  // columns have type kTypeEnum / kTypeSet here.
  uint8_t type = 0;
  // Type metadata, decoded per type (§7.6): VARCHAR max bytes, BLOB pack
  // length, DECIMAL precision<<8|scale, temporal fsp, BIT bits<<8|bytes
  // (bytes as in TABLE_MAP: meta = (bytes << 8) | bits), STRING max length,
  // ENUM/SET pack length.
  uint16_t meta = 0;
  bool nullable = true;
  bool is_unsigned = false;
  bool unsigned_known = false;  // signedness came from metadata or schema
  uint32_t collation = 0;       // 0 = unknown (treated as utf8mb4 for text)
  std::string name;             // empty = unknown; printed as "@<1-based index>"
  std::vector<std::string> members;  // ENUM / SET member names, if known
  bool in_primary_key = false;
  uint32_t geometry_type = 0;
  // Declared length in characters/bytes for BINARY(n) re-padding; 0 = unknown.
  uint32_t binary_length = 0;
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
