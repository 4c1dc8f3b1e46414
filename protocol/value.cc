// Row value decoding: a table of small per-type decoders indexed by the
// TABLE_MAP type code, and the JSON rendering of the decoded views.
#include "protocol/value.h"

#include <array>
#include <bit>
#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "protocol/charset.h"
#include "protocol/column_type.h"
#include "protocol/decimal.h"
#include "protocol/fixed_binary_text.h"
#include "protocol/json_binary.h"
#include "protocol/json_writer.h"
#include "protocol/mariadb_compressed.h"
#include "protocol/status_macros.h"
#include "protocol/temporal.h"

namespace binrelay::protocol {
namespace {

using DecodeFn = absl::Status (*)(ByteCursor&, const ColumnDef&, std::string*, ValueView*);

std::string TypeLabel(const ColumnDef& col) {
  return absl::StrCat(AV(ColumnTypeName(col.type)), " (type ", col.type, ")");
}

absl::Status Truncated(ByteCursor& in, const ColumnDef& col) {
  return in.status(absl::StrCat(AV(ColumnTypeName(col.type)), " value"));
}

absl::Status BadMeta(const ColumnDef& col, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("column metadata ", col.meta, " invalid for ", TypeLabel(col), ": ", AV(why)));
}

// Reads a `prefix`-byte LE length then that many bytes, checking the length
// against the bytes left before taking the view.
absl::Status ReadPrefixed(ByteCursor& in, const ColumnDef& col, size_t prefix,
                          std::string_view* bytes) {
  const size_t at = in.position();
  uint64_t n = in.Fixed(prefix);
  if (!in.ok()) return Truncated(in, col);
  if (n > in.remaining()) {
    return absl::OutOfRangeError(absl::StrCat(TypeLabel(col), " value length ", n,
                                              " (prefix at byte ", at, ") exceeds the ",
                                              in.remaining(), " bytes left"));
  }
  *bytes = in.Bytes(n);
  return absl::OkStatus();
}

void SetStringish(const ColumnDef& col, std::string_view bytes, ValueView* out) {
  out->bytes = bytes;
  out->collation = col.collation;
  out->kind = col.collation == kBinaryCollation ? ValueKind::kBinary : ValueKind::kText;
  out->fixed_binary = col.fixed_binary;
}

template <size_t W>
absl::Status DecodeInt(ByteCursor& in, const ColumnDef& col, std::string*, ValueView* out) {
  uint64_t v = in.Fixed(W);
  if (!in.ok()) return Truncated(in, col);
  if (col.is_unsigned) {
    out->kind = ValueKind::kUnsigned;
    out->u = v;
  } else {
    constexpr int kShift = 64 - 8 * static_cast<int>(W);
    out->kind = ValueKind::kSigned;
    out->i = static_cast<int64_t>(v << kShift) >> kShift;  // sign-extend
  }
  return absl::OkStatus();
}

absl::Status DecodeFloat(ByteCursor& in, const ColumnDef& col, std::string*, ValueView* out) {
  uint32_t v = in.U32();
  if (!in.ok()) return Truncated(in, col);
  out->kind = ValueKind::kFloat;
  out->d = std::bit_cast<float>(v);
  return absl::OkStatus();
}

absl::Status DecodeDouble(ByteCursor& in, const ColumnDef& col, std::string*, ValueView* out) {
  uint64_t v = in.U64();
  if (!in.ok()) return Truncated(in, col);
  out->kind = ValueKind::kDouble;
  out->d = std::bit_cast<double>(v);
  return absl::OkStatus();
}

absl::Status DecodeYear(ByteCursor& in, const ColumnDef& col, std::string*, ValueView* out) {
  uint8_t v = in.U8();
  if (!in.ok()) return Truncated(in, col);
  out->kind = ValueKind::kYear;
  out->u = v == 0 ? 0 : 1900u + v;
  return absl::OkStatus();
}

absl::Status DecodeNewDecimal(ByteCursor& in, const ColumnDef& col, std::string* scratch,
                              ValueView* out) {
  const int precision = col.meta >> 8, scale = col.meta & 0xFF;
  const size_t size = DecimalBinarySize(precision, scale);
  if (size == 0) return BadMeta(col, "expected precision << 8 | scale, precision 1..65");
  std::string_view packed = in.Bytes(size);
  if (!in.ok()) return Truncated(in, col);
  scratch->clear();
  // The context is built only on error: this runs for every DECIMAL value.
  if (absl::Status s = AppendDecimalText(packed, precision, scale, scratch); !s.ok()) {
    return Annotate(s, absl::StrCat("NEWDECIMAL at byte ", in.position() - size));
  }
  out->kind = ValueKind::kFormatted;
  out->bytes = *scratch;
  return absl::OkStatus();
}

absl::Status DecodeTemporal(ByteCursor& in, const ColumnDef& col, std::string* scratch,
                            ValueView* out) {
  scratch->clear();
  BR_RETURN_IF_ERROR(DecodeTemporalText(in, col.type, col.meta, scratch));
  out->kind = ValueKind::kFormatted;
  out->bytes = *scratch;
  return absl::OkStatus();
}

// VARCHAR / VAR_STRING: meta = max length in bytes.
absl::Status DecodeVarchar(ByteCursor& in, const ColumnDef& col, std::string*, ValueView* out) {
  std::string_view bytes;
  BR_RETURN_IF_ERROR(ReadPrefixed(in, col, col.meta < 256 ? 1 : 2, &bytes));
  if (bytes.size() > col.meta) {
    return absl::DataLossError(absl::StrCat(TypeLabel(col), " value of ", bytes.size(),
                                            " bytes exceeds the column maximum ", col.meta));
  }
  SetStringish(col, bytes, out);
  return absl::OkStatus();
}

// CHAR / BINARY: meta = max length in bytes (resolved from STRING metadata).
absl::Status DecodeString(ByteCursor& in, const ColumnDef& col, std::string* scratch,
                          ValueView* out) {
  std::string_view bytes;
  BR_RETURN_IF_ERROR(ReadPrefixed(in, col, col.meta < 256 ? 1 : 2, &bytes));
  if (bytes.size() > col.meta) {
    return absl::DataLossError(absl::StrCat(TypeLabel(col), " value of ", bytes.size(),
                                            " bytes exceeds the column maximum ", col.meta));
  }
  SetStringish(col, bytes, out);
  if (out->kind == ValueKind::kBinary) {
    // The writer strips BINARY(n)'s trailing 0x00; SELECT returns all n bytes.
    const size_t length = col.binary_length ? col.binary_length : col.meta;
    if (bytes.size() < length) {
      scratch->assign(bytes);
      scratch->append(length - bytes.size(), '\0');
      out->bytes = *scratch;
    }
  }
  return absl::OkStatus();
}

// Member names are stored in the column's charset; views carry UTF-8.
std::string_view MemberUtf8(const ColumnDef& col, const std::string& name, std::string* scratch) {
  Charset cs = CharsetForCollation(col.collation);
  if (cs == Charset::kUtf8 || cs == Charset::kBinary) return name;
  scratch->clear();
  AppendCollationUtf8(name, col.collation, scratch);
  return *scratch;
}

absl::Status DecodeEnum(ByteCursor& in, const ColumnDef& col, std::string* scratch,
                        ValueView* out) {
  if (col.meta != 1 && col.meta != 2) return BadMeta(col, "ENUM pack length must be 1 or 2");
  uint64_t index = in.Fixed(col.meta);
  if (!in.ok()) return Truncated(in, col);
  out->kind = ValueKind::kEnum;
  out->u = index;
  // Index 0 is the empty "error value"; an index past the members means the
  // schema we hold is stale, so fall back to the number rather than guess.
  if (!col.members.empty() && index <= col.members.size()) {
    out->names_known = true;
    out->bytes = index == 0 ? std::string_view() : MemberUtf8(col, col.members[index - 1], scratch);
  }
  return absl::OkStatus();
}

absl::Status DecodeSet(ByteCursor& in, const ColumnDef& col, std::string* scratch,
                       ValueView* out) {
  if (col.meta < 1 || col.meta > 8 || col.meta == 5 || col.meta == 6 || col.meta == 7) {
    return BadMeta(col, "SET pack length must be 1, 2, 3, 4 or 8");
  }
  uint64_t mask = in.Fixed(col.meta);
  if (!in.ok()) return Truncated(in, col);
  out->kind = ValueKind::kSet;
  out->u = mask;
  const size_t count = col.members.size();
  if (count == 0 || (count < 64 && (mask >> count) != 0)) return absl::OkStatus();
  const Charset cs = CharsetForCollation(col.collation);
  scratch->clear();
  for (size_t i = 0; i < count; ++i) {
    if (!((mask >> i) & 1)) continue;
    if (!scratch->empty()) scratch->push_back(',');
    if (cs == Charset::kUtf8 || cs == Charset::kBinary) {
      scratch->append(col.members[i]);
    } else {
      AppendCollationUtf8(col.members[i], col.collation, scratch);
    }
  }
  out->names_known = true;
  out->bytes = *scratch;
  return absl::OkStatus();
}

// BIT(n): meta = (whole bytes << 8) | (n % 8), as TABLE_MAP's two bytes read LE.
absl::Status DecodeBit(ByteCursor& in, const ColumnDef& col, std::string*, ValueView* out) {
  const unsigned bits = col.meta & 0xFF, whole = col.meta >> 8;
  const unsigned len = whole + (bits ? 1 : 0);
  if (bits > 7 || len == 0 || len > 8) {
    return BadMeta(col, "BIT expects (bytes << 8) | (bits % 8) for 1..64 bits");
  }
  out->bytes = in.Bytes(len);
  if (!in.ok()) return Truncated(in, col);
  out->kind = ValueKind::kBinary;
  return absl::OkStatus();
}

// BLOB/TEXT family, GEOMETRY, JSON, VECTOR: meta = length-prefix size 1..4.
absl::Status ReadBlob(ByteCursor& in, const ColumnDef& col, std::string_view* bytes) {
  if (col.meta < 1 || col.meta > 4) return BadMeta(col, "length-prefix size must be 1..4");
  return ReadPrefixed(in, col, col.meta, bytes);
}

absl::Status DecodeBlob(ByteCursor& in, const ColumnDef& col, std::string*, ValueView* out) {
  std::string_view bytes;
  BR_RETURN_IF_ERROR(ReadBlob(in, col, &bytes));
  SetStringish(col, bytes, out);
  return absl::OkStatus();
}

absl::Status DecodeRawBlob(ByteCursor& in, const ColumnDef& col, std::string*, ValueView* out) {
  BR_RETURN_IF_ERROR(ReadBlob(in, col, &out->bytes));
  out->kind = ValueKind::kBinary;
  return absl::OkStatus();
}

absl::Status DecodeJson(ByteCursor& in, const ColumnDef& col, std::string* scratch,
                        ValueView* out) {
  std::string_view doc;
  BR_RETURN_IF_ERROR(ReadBlob(in, col, &doc));
  out->kind = ValueKind::kJsonText;
  if (doc.empty()) {
    out->bytes = "null";
    return absl::OkStatus();
  }
  scratch->clear();
  if (absl::Status s = AppendJsonBinaryText(doc, scratch); !s.ok()) {
    return Annotate(s, absl::StrCat("JSON value at byte ", in.position() - doc.size()));
  }
  out->bytes = *scratch;
  return absl::OkStatus();
}

absl::Status FinishCompressed(ByteCursor& in, const ColumnDef& col, std::string_view stored,
                              std::string* scratch, ValueView* out) {
  std::string_view plain;
  if (absl::Status s = DecompressMariadbColumn(stored, scratch, &plain); !s.ok()) {
    return Annotate(s, absl::StrCat(TypeLabel(col), " value ending at byte ", in.position()));
  }
  SetStringish(col, plain, out);
  return absl::OkStatus();
}

absl::Status DecodeBlobCompressed(ByteCursor& in, const ColumnDef& col, std::string* scratch,
                                  ValueView* out) {
  std::string_view stored;
  BR_RETURN_IF_ERROR(ReadBlob(in, col, &stored));
  return FinishCompressed(in, col, stored, scratch, out);
}

absl::Status DecodeVarcharCompressed(ByteCursor& in, const ColumnDef& col, std::string* scratch,
                                     ValueView* out) {
  std::string_view stored;
  BR_RETURN_IF_ERROR(ReadPrefixed(in, col, col.meta < 256 ? 1 : 2, &stored));
  return FinishCompressed(in, col, stored, scratch, out);
}

absl::Status DecodeNullType(ByteCursor&, const ColumnDef&, std::string*, ValueView* out) {
  out->kind = ValueKind::kNull;  // MYSQL_TYPE_NULL stores nothing
  return absl::OkStatus();
}

absl::Status DecodeUnknown(ByteCursor& in, const ColumnDef& col, std::string*, ValueView*) {
  return absl::UnimplementedError(absl::StrCat("cannot decode column type ", col.type, " (",
                                               AV(ColumnTypeName(col.type)), ") at byte ",
                                               in.position(), "; this type is not supported"));
}

constexpr std::array<DecodeFn, 256> MakeTable() {
  std::array<DecodeFn, 256> t{};
  for (auto& f : t) f = &DecodeUnknown;
  t[kTypeTiny] = &DecodeInt<1>;
  t[kTypeShort] = &DecodeInt<2>;
  t[kTypeInt24] = &DecodeInt<3>;
  t[kTypeLong] = &DecodeInt<4>;
  t[kTypeLongLong] = &DecodeInt<8>;
  t[kTypeFloat] = &DecodeFloat;
  t[kTypeDouble] = &DecodeDouble;
  t[kTypeYear] = &DecodeYear;
  t[kTypeNull] = &DecodeNullType;
  t[kTypeNewDecimal] = &DecodeNewDecimal;
  for (uint8_t ty : {kTypeDate, kTypeNewDate, kTypeTime, kTypeDatetime, kTypeTimestamp,
                     kTypeTimestamp2, kTypeDatetime2, kTypeTime2}) {
    t[ty] = &DecodeTemporal;
  }
  t[kTypeVarchar] = &DecodeVarchar;
  t[kTypeVarString] = &DecodeVarchar;
  t[kTypeString] = &DecodeString;
  t[kTypeEnum] = &DecodeEnum;
  t[kTypeSet] = &DecodeSet;
  t[kTypeBit] = &DecodeBit;
  for (uint8_t ty : {kTypeTinyBlob, kTypeMediumBlob, kTypeLongBlob, kTypeBlob}) t[ty] = &DecodeBlob;
  t[kTypeGeometry] = &DecodeRawBlob;
  t[kTypeVector] = &DecodeRawBlob;
  t[kTypeJson] = &DecodeJson;
  t[kTypeBlobCompressed] = &DecodeBlobCompressed;
  t[kTypeVarcharCompressed] = &DecodeVarcharCompressed;
  return t;
}

constexpr std::array<DecodeFn, 256> kDecoders = MakeTable();

void AppendFloating(double d, bool is_float, std::string* out) {
  // JSON has no inf/nan; the server cannot store them, so this is corrupt data.
  if (!std::isfinite(d)) {
    out->append("null");
    return;
  }
  char buf[64];
  auto r = is_float ? std::to_chars(buf, buf + sizeof(buf), static_cast<float>(d))
                    : std::to_chars(buf, buf + sizeof(buf), d);
  out->append(buf, r.ptr);
}

template <typename T>
void AppendInteger(T v, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

}  // namespace

absl::Status SkipValue(ByteCursor& in, const ColumnDef& col, std::string* scratch) {
  auto fixed = [&](size_t n) {
    in.Skip(n);
    return in.ok() ? absl::OkStatus() : Truncated(in, col);
  };
  std::string_view bytes;
  switch (col.type) {
    case kTypeTiny:
    case kTypeYear:
      return fixed(1);
    case kTypeShort:
      return fixed(2);
    case kTypeInt24:
      return fixed(3);
    case kTypeLong:
    case kTypeFloat:
      return fixed(4);
    case kTypeLongLong:
    case kTypeDouble:
      return fixed(8);
    case kTypeNull:
      return absl::OkStatus();
    case kTypeNewDecimal: {
      const int precision = col.meta >> 8, scale = col.meta & 0xFF;
      const size_t size = DecimalBinarySize(precision, scale);
      if (size == 0) return BadMeta(col, "expected precision << 8 | scale, precision 1..65");
      std::string_view packed = in.Bytes(size);
      if (!in.ok()) return Truncated(in, col);
      if (absl::Status s = CheckDecimalBinary(packed, precision, scale); !s.ok()) {
        return Annotate(s, absl::StrCat("NEWDECIMAL at byte ", in.position() - size));
      }
      return absl::OkStatus();
    }
    case kTypeDate:
    case kTypeNewDate:
    case kTypeTime:
    case kTypeDatetime:
    case kTypeTimestamp:
    case kTypeTimestamp2:
    case kTypeDatetime2:
    case kTypeTime2:
      return SkipTemporal(in, col.type, col.meta);
    case kTypeVarchar:
    case kTypeVarString:
    case kTypeString:
      BR_RETURN_IF_ERROR(ReadPrefixed(in, col, col.meta < 256 ? 1 : 2, &bytes));
      if (bytes.size() > col.meta) {
        return absl::DataLossError(absl::StrCat(TypeLabel(col), " value of ", bytes.size(),
                                                " bytes exceeds the column maximum ", col.meta));
      }
      return absl::OkStatus();
    case kTypeVarcharCompressed:
    case kTypeJson:
    case kTypeBlobCompressed: {
      // Their content is checked by decoding it (rare types: the cost of
      // inflating or rendering once more is accepted).
      ValueView v;
      return kDecoders[col.type](in, col, scratch, &v);
    }
    case kTypeEnum:
      if (col.meta != 1 && col.meta != 2) return BadMeta(col, "ENUM pack length must be 1 or 2");
      return fixed(col.meta);
    case kTypeSet:
      if (col.meta < 1 || col.meta > 8 || col.meta == 5 || col.meta == 6 || col.meta == 7) {
        return BadMeta(col, "SET pack length must be 1, 2, 3, 4 or 8");
      }
      return fixed(col.meta);
    case kTypeBit: {
      const unsigned bits = col.meta & 0xFF, whole = col.meta >> 8;
      const unsigned len = whole + (bits ? 1 : 0);
      if (bits > 7 || len == 0 || len > 8) {
        return BadMeta(col, "BIT expects (bytes << 8) | (bits % 8) for 1..64 bits");
      }
      return fixed(len);
    }
    case kTypeTinyBlob:
    case kTypeMediumBlob:
    case kTypeLongBlob:
    case kTypeBlob:
    case kTypeGeometry:
    case kTypeVector:
      return ReadBlob(in, col, &bytes);
    default:
      return DecodeUnknown(in, col, nullptr, nullptr);
  }
}

absl::Status DecodeValue(ByteCursor& in, const ColumnDef& col, std::string* scratch,
                         ValueView* out) {
  if (scratch == nullptr || out == nullptr) {
    return absl::InvalidArgumentError("DecodeValue needs non-null scratch and out");
  }
  *out = ValueView();
  return kDecoders[col.type](in, col, scratch, out);
}

void AppendValueJson(const ValueView& v, std::string* out) {
  switch (v.kind) {
    case ValueKind::kNull:
      out->append("null");
      return;
    case ValueKind::kSigned:
      AppendInteger(v.i, out);
      return;
    case ValueKind::kUnsigned:
    case ValueKind::kYear:
      AppendInteger(v.u, out);
      return;
    case ValueKind::kFloat:
      AppendFloating(v.d, true, out);
      return;
    case ValueKind::kDouble:
      AppendFloating(v.d, false, out);
      return;
    case ValueKind::kText:
      AppendCollationTextJson(v.bytes, v.collation, out);
      return;
    case ValueKind::kBinary:
      out->push_back('"');
      // A UUID/INET value of the wrong size (a stale schema) stays base64.
      if (v.fixed_binary == FixedBinaryType::kNone ||
          !AppendFixedBinaryText(v.fixed_binary, v.bytes, out)) {
        AppendBase64(v.bytes, out);
      }
      out->push_back('"');
      return;
    case ValueKind::kFormatted:
      // Our own ASCII (digits, sign, point, date and time separators):
      // nothing in it needs escaping, and this runs for every such value.
      out->push_back('"');
      out->append(v.bytes);
      out->push_back('"');
      return;
    case ValueKind::kJsonText:
      AppendJsonString(v.bytes, out);
      return;
    case ValueKind::kEnum:
    case ValueKind::kSet:
      if (v.names_known) {
        AppendJsonString(v.bytes, out);
      } else {
        AppendInteger(v.u, out);
      }
      return;
  }
}

}  // namespace binrelay::protocol
