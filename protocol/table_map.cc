#include "protocol/table_map.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/column_type.h"
#include "protocol/event_type.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

std::string Where(const EventView& ev, std::string_view db, std::string_view table) {
  return absl::StrCat("TABLE_MAP at offset ", ev.offset, " for `", AV(db), "`.`", AV(table), "`");
}

std::string ColumnLabel(size_t i, uint8_t type) {
  return absl::StrCat("column ", i, " (", AV(ColumnTypeName(type)), ")");
}

// Reads the per-type metadata of one column (as sql/rpl_utility.cc
// table_def::table_def) into col->type/meta.
absl::Status ReadColumnMetadata(ByteCursor& c, uint8_t wire_type, ColumnDef* col) {
  col->type = wire_type;
  switch (wire_type) {
    case kTypeFloat:
    case kTypeDouble:
    case kTypeBlob:
    case kTypeTinyBlob:
    case kTypeMediumBlob:
    case kTypeLongBlob:
    case kTypeGeometry:
    case kTypeJson:
    case kTypeVector:
    case kTypeBlobCompressed:
    case kTypeTimestamp2:
    case kTypeDatetime2:
    case kTypeTime2:
      col->meta = c.U8();
      break;
    case kTypeVarchar:
    case kTypeVarString:
    case kTypeVarcharCompressed:
    case kTypeBit:  // bits-mod-8 then bytes: LE read gives bytes<<8|bits
      col->meta = c.U16();
      break;
    case kTypeNewDecimal: {
      const uint8_t precision = c.U8();
      const uint8_t scale = c.U8();
      col->meta = static_cast<uint16_t>(precision << 8 | scale);
      break;
    }
    case kTypeString:
    case kTypeEnum:
    case kTypeSet: {
      // b0 is the real type with long-CHAR length bits folded in (see
      // sql/log_event.cc log_event_print_value).
      const uint8_t b0 = c.U8();
      const uint8_t b1 = c.U8();
      if ((b0 & 0x30) != 0x30) {
        col->type = kTypeString;
        col->meta = static_cast<uint16_t>(b1 | (((b0 & 0x30) ^ 0x30) << 4));
      } else if (b0 == kTypeEnum || b0 == kTypeSet) {
        col->type = b0;
        col->meta = b1;  // pack length
      } else if (b0 == kTypeString) {
        col->meta = b1;
      } else {
        return absl::UnimplementedError(
            absl::StrCat("STRING metadata names unknown real type ", b0));
      }
      break;
    }
    case kTypeTypedArray: {
      // Element type, then that type's own metadata; decoding such columns is
      // unsupported, but the metadata must be consumed to reach later columns.
      // MySQL's element is a scalar (Field_typed_array); a nested one
      // would let each metadata byte recurse once more.
      const uint8_t element_type = c.U8();
      if (element_type == kTypeTypedArray) {
        return absl::DataLossError("TYPED_ARRAY whose element is itself a TYPED_ARRAY");
      }
      ColumnDef element;
      BR_RETURN_IF_ERROR(ReadColumnMetadata(c, element_type, &element));
      col->meta = element.type;
      break;
    }
    case kTypeDecimal:
    case kTypeTiny:
    case kTypeShort:
    case kTypeLong:
    case kTypeNull:
    case kTypeTimestamp:
    case kTypeLongLong:
    case kTypeInt24:
    case kTypeDate:
    case kTypeTime:
    case kTypeDatetime:
    case kTypeYear:
    case kTypeNewDate:
      col->meta = 0;
      break;
    default:
      return absl::UnimplementedError(absl::StrCat(
          "unknown column type code ", wire_type, ": its metadata size is unknown"));
  }
  return absl::OkStatus();
}

// Column indexes (into def.columns) that a TLV of `type` enumerates.
std::vector<size_t> Selected(const TableDef& def, bool mariadb, OptionalMetadataType type) {
  std::vector<size_t> out;
  for (size_t i = 0; i < def.columns.size(); ++i) {
    const uint8_t t = def.columns[i].type;
    bool take = false;
    switch (type) {
      case kOptSignedness: take = IsNumericColumn(t); break;
      case kOptDefaultCharset:
      case kOptColumnCharset: take = IsCharacterColumn(t, mariadb); break;
      case kOptSetStrValue: take = t == kTypeSet; break;
      case kOptEnumStrValue: take = t == kTypeEnum; break;
      case kOptGeometryType: take = t == kTypeGeometry; break;
      case kOptEnumAndSetDefaultCharset:
      case kOptEnumAndSetColumnCharset: take = t == kTypeEnum || t == kTypeSet; break;
      case kOptVectorDimensionality: take = t == kTypeVector; break;
      default: take = true;
    }
    if (take) out.push_back(i);
  }
  return out;
}

absl::Status CountMismatch(std::string_view what, size_t got, size_t expected) {
  return absl::DataLossError(absl::StrCat(AV(what), " lists ", got, " entries for ", expected,
                                          " eligible columns"));
}

// Bits MSB-first over `cols` (SIGNEDNESS, COLUMN_VISIBILITY).
absl::Status ReadMsbBits(std::string_view v, size_t count, std::vector<bool>* bits) {
  if (v.size() < (count + 7) / 8) {
    return absl::DataLossError(
        absl::StrCat("bitmap has ", v.size(), " bytes for ", count, " columns"));
  }
  bits->resize(count);
  for (size_t i = 0; i < count; ++i) {
    (*bits)[i] = (static_cast<uint8_t>(v[i / 8]) >> (7 - i % 8)) & 1;
  }
  return absl::OkStatus();
}

absl::Status ApplyCharsets(ByteCursor& c, bool default_form, const std::vector<size_t>& cols,
                           TableDef* def, std::string_view what) {
  if (default_form) {
    const uint64_t dflt = c.Lenenc();
    for (size_t i : cols) def->columns[i].collation = static_cast<uint32_t>(dflt);
    while (c.ok() && !c.empty()) {
      const uint64_t idx = c.Lenenc();
      const uint64_t coll = c.Lenenc();
      if (!c.ok()) break;
      if (idx >= cols.size()) {
        return absl::DataLossError(absl::StrCat(AV(what), " names character column ", idx,
                                                " of ", cols.size()));
      }
      def->columns[cols[idx]].collation = static_cast<uint32_t>(coll);
    }
  } else {
    size_t n = 0;
    while (c.ok() && !c.empty()) {
      const uint64_t coll = c.Lenenc();
      if (!c.ok()) break;
      if (n >= cols.size()) return CountMismatch(what, n + 1, cols.size());
      def->columns[cols[n++]].collation = static_cast<uint32_t>(coll);
    }
    if (c.ok() && n != cols.size()) return CountMismatch(what, n, cols.size());
  }
  return c.status(what);
}

absl::Status ApplyStrValues(ByteCursor& c, const std::vector<size_t>& cols, TableDef* def,
                            std::string_view what) {
  size_t n = 0;
  while (c.ok() && !c.empty()) {
    if (n >= cols.size()) return CountMismatch(what, n + 1, cols.size());
    const uint64_t count = c.Lenenc();
    if (count > c.remaining()) c.Fail();  // each member needs >= 1 byte
    std::vector<std::string>& members = def->columns[cols[n++]].members;
    members.clear();
    for (uint64_t k = 0; k < count && c.ok(); ++k) members.emplace_back(c.LenencString());
  }
  BR_RETURN_IF_ERROR(c.status(what));
  if (n != cols.size()) return CountMismatch(what, n, cols.size());
  return absl::OkStatus();
}

absl::Status ApplyOptional(uint8_t type, std::string_view v, bool mariadb, TableMap* tm) {
  TableDef& def = tm->def;
  ByteCursor c(v);
  const auto cols = Selected(def, mariadb, static_cast<OptionalMetadataType>(type));
  switch (type) {
    case kOptSignedness: {
      std::vector<bool> bits;
      BR_RETURN_IF_ERROR(Annotate(ReadMsbBits(v, cols.size(), &bits), "SIGNEDNESS"));
      for (size_t k = 0; k < cols.size(); ++k) {
        def.columns[cols[k]].is_unsigned = bits[k];
        def.columns[cols[k]].unsigned_known = true;
      }
      return absl::OkStatus();
    }
    case kOptDefaultCharset:
      return ApplyCharsets(c, true, cols, &def, "DEFAULT_CHARSET");
    case kOptColumnCharset:
      return ApplyCharsets(c, false, cols, &def, "COLUMN_CHARSET");
    case kOptEnumAndSetDefaultCharset:
      return ApplyCharsets(c, true, cols, &def, "ENUM_AND_SET_DEFAULT_CHARSET");
    case kOptEnumAndSetColumnCharset:
      return ApplyCharsets(c, false, cols, &def, "ENUM_AND_SET_COLUMN_CHARSET");
    case kOptColumnName: {
      for (ColumnDef& col : def.columns) col.name = std::string(c.LenencString());
      BR_RETURN_IF_ERROR(c.status("COLUMN_NAME"));
      def.names_known = true;
      return absl::OkStatus();
    }
    case kOptSetStrValue:
      return ApplyStrValues(c, cols, &def, "SET_STR_VALUE");
    case kOptEnumStrValue:
      return ApplyStrValues(c, cols, &def, "ENUM_STR_VALUE");
    case kOptGeometryType: {
      for (size_t i : cols) def.columns[i].geometry_type = static_cast<uint32_t>(c.Lenenc());
      return c.status("GEOMETRY_TYPE");
    }
    case kOptSimplePrimaryKey:
    case kOptPrimaryKeyWithPrefix: {
      def.primary_key.clear();
      tm->primary_key_prefix.clear();
      while (c.ok() && !c.empty()) {
        const uint64_t idx = c.Lenenc();
        const uint64_t prefix = type == kOptPrimaryKeyWithPrefix ? c.Lenenc() : 0;
        if (!c.ok()) break;
        if (idx >= def.columns.size()) {
          return absl::DataLossError(absl::StrCat("primary key names column ", idx, " of ",
                                                  def.columns.size()));
        }
        def.primary_key.push_back(static_cast<uint32_t>(idx));
        tm->primary_key_prefix.push_back(static_cast<uint32_t>(prefix));
        def.columns[idx].in_primary_key = true;
      }
      return c.status("PRIMARY_KEY");
    }
    case kOptColumnVisibility:
      return Annotate(ReadMsbBits(v, def.columns.size(), &tm->visible), "COLUMN_VISIBILITY");
    case kOptVectorDimensionality: {
      tm->vector_dimensions.assign(def.columns.size(), 0);
      for (size_t i : cols) tm->vector_dimensions[i] = static_cast<uint32_t>(c.Lenenc());
      return c.status("VECTOR_DIMENSIONALITY");
    }
    default:
      return absl::OkStatus();  // TLV: unknown types are safe to skip by length
  }
}

// Reads table id, flags, db and table (the part PeekTableMapIds needs).
absl::Status ReadIds(ByteCursor& c, const FormatDescription& fd, TableMapIds* ids,
                     uint16_t* flags) {
  ids->table_id = c.Fixed(TableIdWidth(fd));
  *flags = c.U16();
  const uint8_t db_len = c.U8();
  ids->db = c.Bytes(db_len);
  c.Skip(1);  // NUL
  const uint8_t table_len = c.U8();
  ids->table = c.Bytes(table_len);
  c.Skip(1);
  return c.status("TABLE_MAP table id and names");
}

}  // namespace

size_t TableIdWidth(const FormatDescription& fd) {
  return fd.PostHeaderLen(kTableMapEvent) == 6 ? 4 : 6;
}

bool IsNumericColumn(uint8_t t) {
  switch (t) {
    case kTypeTiny: case kTypeShort: case kTypeInt24: case kTypeLong: case kTypeLongLong:
    case kTypeFloat: case kTypeDouble: case kTypeNewDecimal:
      return true;
    default:
      return false;
  }
}

bool IsCharacterColumn(uint8_t t, bool mariadb) {
  switch (t) {
    case kTypeString: case kTypeVarString: case kTypeVarchar: case kTypeBlob:
    case kTypeTinyBlob: case kTypeMediumBlob: case kTypeLongBlob:
    case kTypeBlobCompressed: case kTypeVarcharCompressed:
    // MySQL 9 VECTOR is a blob-like binary-charset column and is counted
    // (vector.binlog: DEFAULT_CHARSET exceptions index the TEXT among vectors).
    case kTypeVector:
      return true;
    case kTypeGeometry:
      return mariadb;
    default:
      return false;
  }
}

absl::StatusOr<TableMapIds> PeekTableMapIds(const EventView& ev, const FormatDescription& fd) {
  ByteCursor c(ev.body);
  TableMapIds ids;
  uint16_t flags = 0;
  BR_RETURN_IF_ERROR(Annotate(ReadIds(c, fd, &ids, &flags),
                              absl::StrCat("TABLE_MAP at offset ", ev.offset)));
  return ids;
}

absl::StatusOr<TableMap> ParseTableMap(const EventView& ev, const FormatDescription& fd) {
  ByteCursor c(ev.body);
  TableMapIds ids;
  TableMap tm;
  BR_RETURN_IF_ERROR(Annotate(ReadIds(c, fd, &ids, &tm.flags),
                              absl::StrCat("TABLE_MAP at offset ", ev.offset)));
  TableDef& def = tm.def;
  def.table_id = ids.table_id;
  def.db = std::string(ids.db);
  def.table = std::string(ids.table);
  const std::string where = Where(ev, ids.db, ids.table);

  const uint64_t ncols = c.Lenenc();
  // Each column needs at least its type byte; refuse before allocating.
  if (!c.ok() || ncols > c.remaining()) {
    return absl::DataLossError(absl::StrCat(where, ": column count ", ncols, " exceeds the ",
                                            c.remaining(), " bytes left in the event"));
  }
  std::string_view types = c.Bytes(ncols);
  const uint64_t meta_len = c.Lenenc();
  std::string_view meta = c.Bytes(meta_len);
  if (!c.ok()) {
    return absl::DataLossError(absl::StrCat(where, ": metadata block of ", meta_len,
                                            " bytes exceeds the event (body byte ",
                                            c.position(), ")"));
  }
  def.columns.resize(ncols);
  ByteCursor mc(meta);
  for (size_t i = 0; i < ncols; ++i) {
    const uint8_t wire = static_cast<uint8_t>(types[i]);
    absl::Status s = ReadColumnMetadata(mc, wire, &def.columns[i]);
    if (s.ok()) s = mc.status("column metadata");
    if (!s.ok()) {
      return absl::Status(s.code() == absl::StatusCode::kOutOfRange ? absl::StatusCode::kDataLoss
                                                                    : s.code(),
                          absl::StrCat(where, ": ", ColumnLabel(i, wire), ": ", s.message()));
    }
  }
  if (!mc.empty()) {
    return absl::DataLossError(absl::StrCat(where, ": metadata block has ", mc.remaining(),
                                            " bytes left after ", ncols, " columns"));
  }
  std::string_view nulls = c.Bytes((ncols + 7) / 8);
  if (!c.ok()) {
    return absl::DataLossError(absl::StrCat(where, ": nullability bitmap truncated"));
  }
  for (size_t i = 0; i < ncols; ++i) {
    def.columns[i].nullable = (static_cast<uint8_t>(nulls[i / 8]) >> (i % 8)) & 1;
  }
  // Optional metadata TLVs run to the end of the event.
  while (!c.empty()) {
    const size_t at = c.position();
    const uint8_t type = c.U8();
    const uint64_t len = c.Lenenc();
    std::string_view value = c.Bytes(len);
    if (!c.ok()) {
      return absl::DataLossError(absl::StrCat(where, ": optional metadata field ", type,
                                              " at body byte ", at, " declares ", len,
                                              " bytes, more than the event holds"));
    }
    if (type < 64) tm.optional_metadata_seen |= uint64_t{1} << type;
    absl::Status s = ApplyOptional(type, value, fd.is_mariadb, &tm);
    if (!s.ok()) {
      return absl::DataLossError(absl::StrCat(where, ": optional metadata field ", type,
                                              " at body byte ", at, ": ", s.message()));
    }
  }
  return tm;
}

}  // namespace binrelay::protocol
