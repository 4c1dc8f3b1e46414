// MySQL/MariaDB column type codes as they appear in TABLE_MAP events
// (include/field_types.h; MariaDB adds 140/141 for COMPRESSED columns).
// Thread safety: constants only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace binrelay::protocol {

enum ColumnType : uint8_t {
  kTypeDecimal = 0,  // pre-5.0 DECIMAL; never in row events of supported servers
  kTypeTiny = 1,
  kTypeShort = 2,
  kTypeLong = 3,
  kTypeFloat = 4,
  kTypeDouble = 5,
  kTypeNull = 6,
  kTypeTimestamp = 7,
  kTypeLongLong = 8,
  kTypeInt24 = 9,
  kTypeDate = 10,
  kTypeTime = 11,
  kTypeDatetime = 12,
  kTypeYear = 13,
  kTypeNewDate = 14,
  kTypeVarchar = 15,
  kTypeBit = 16,
  kTypeTimestamp2 = 17,
  kTypeDatetime2 = 18,
  kTypeTime2 = 19,
  kTypeTypedArray = 20,
  kTypeVector = 242,  // MySQL 9 / MariaDB 11.7 VECTOR
  kTypeBlobCompressed = 140,   // MariaDB
  kTypeVarcharCompressed = 141,  // MariaDB
  kTypeJson = 245,
  kTypeNewDecimal = 246,
  kTypeEnum = 247,
  kTypeSet = 248,
  kTypeTinyBlob = 249,
  kTypeMediumBlob = 250,
  kTypeLongBlob = 251,
  kTypeBlob = 252,
  kTypeVarString = 253,
  kTypeString = 254,
  kTypeGeometry = 255,
};

// Human name for error messages ("DATETIME2", "NEWDECIMAL", ...).
std::string_view ColumnTypeName(uint8_t type);

// Bytes of a TINYINT .. BIGINT value in a row image (little-endian,
// sign by the column's flag); 0 for any other type.
inline size_t IntegerWidth(uint8_t type) {
  switch (type) {
    case kTypeTiny: return 1;
    case kTypeShort: return 2;
    case kTypeInt24: return 3;
    case kTypeLong: return 4;
    case kTypeLongLong: return 8;
    default: return 0;
  }
}

}  // namespace binrelay::protocol
