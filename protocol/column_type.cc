#include "protocol/column_type.h"

namespace binrelay::protocol {

std::string_view ColumnTypeName(uint8_t type) {
  switch (type) {
    case kTypeDecimal: return "DECIMAL";
    case kTypeTiny: return "TINY";
    case kTypeShort: return "SHORT";
    case kTypeLong: return "LONG";
    case kTypeFloat: return "FLOAT";
    case kTypeDouble: return "DOUBLE";
    case kTypeNull: return "NULL";
    case kTypeTimestamp: return "TIMESTAMP";
    case kTypeLongLong: return "LONGLONG";
    case kTypeInt24: return "INT24";
    case kTypeDate: return "DATE";
    case kTypeTime: return "TIME";
    case kTypeDatetime: return "DATETIME";
    case kTypeYear: return "YEAR";
    case kTypeNewDate: return "NEWDATE";
    case kTypeVarchar: return "VARCHAR";
    case kTypeBit: return "BIT";
    case kTypeTimestamp2: return "TIMESTAMP2";
    case kTypeDatetime2: return "DATETIME2";
    case kTypeTime2: return "TIME2";
    case kTypeTypedArray: return "TYPED_ARRAY";
    case kTypeVector: return "VECTOR";
    case kTypeBlobCompressed: return "BLOB_COMPRESSED";
    case kTypeVarcharCompressed: return "VARCHAR_COMPRESSED";
    case kTypeJson: return "JSON";
    case kTypeNewDecimal: return "NEWDECIMAL";
    case kTypeEnum: return "ENUM";
    case kTypeSet: return "SET";
    case kTypeTinyBlob: return "TINY_BLOB";
    case kTypeMediumBlob: return "MEDIUM_BLOB";
    case kTypeLongBlob: return "LONG_BLOB";
    case kTypeBlob: return "BLOB";
    case kTypeVarString: return "VAR_STRING";
    case kTypeString: return "STRING";
    case kTypeGeometry: return "GEOMETRY";
  }
  return "UNKNOWN";
}

}  // namespace binrelay::protocol
