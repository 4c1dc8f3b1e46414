// Row value decoding: one column value of a row image, read from the event
// buffer without copying, and its rendering as JSON.
//
// Rendering rules (binrelay tail's contract): NULL -> null; integers -> JSON
// numbers with every digit; FLOAT/DOUBLE -> shortest JSON number that
// round-trips the stored binary value; DECIMAL and temporal types -> strings
// exactly as SELECT prints them with time_zone='+00:00'; YEAR -> number;
// text, ENUM, SET -> UTF-8 strings (ENUM/SET as member names when known,
// otherwise the numeric value); BINARY (re-padded with 0x00 to its length),
// VARBINARY, BLOB, BIT, GEOMETRY, VECTOR -> base64 of the bytes SELECT
// returns; MariaDB UUID, INET4, INET6 (known from the schema) -> their text as
// SELECT prints it; JSON -> a string holding the document's text.
//
// Thread safety: stateless functions.
// Lifetime: a ValueView points into the event buffer or into `scratch`; it is
// valid until the next DecodeValue call with the same scratch.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "protocol/byte_cursor.h"
#include "protocol/column_def.h"
#include "protocol/temporal.h"

namespace binrelay::protocol {

enum class ValueKind : uint8_t {
  kNull,
  kSigned,     // i
  kUnsigned,   // u
  kFloat,      // d holds the float widened to double
  kDouble,     // d
  kYear,       // u
  kText,       // bytes in `collation`'s charset
  kBinary,     // raw bytes (base64 in JSON)
  kFormatted,  // ASCII text (DECIMAL, dates, times): JSON string
  kJsonText,   // UTF-8 JSON document text: JSON string
  kEnum,       // u = 1-based index; bytes = member name (UTF-8) if known
  kSet,        // u = bitmask; bytes = comma-joined names (UTF-8) if known
};

struct ValueView {
  ValueKind kind = ValueKind::kNull;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string_view bytes;
  uint32_t collation = 0;
  // kBinary of a MariaDB UUID/INET4/INET6 column: JSON prints its text.
  FixedBinaryType fixed_binary = FixedBinaryType::kNone;
  bool names_known = false;  // for kEnum/kSet: bytes holds member name(s)
  // Temporal values read with ImageValues::kTemporalParts: kind is
  // kFormatted, bytes is empty and the value is in `temporal`.
  bool has_temporal = false;
  TemporalForm temporal_form = TemporalForm::kDatetime;
  TemporalParts temporal;
};

// Reads one non-NULL value of column `col` from `in` (metadata conventions in
// column_def.h). On malformed or truncated input returns DataLoss/OutOfRange
// naming the column type and byte offset; InvalidArgument for metadata that
// cannot describe the type; Unimplemented for a type code binrelay does not
// decode (pre-5.0 DECIMAL, TYPED_ARRAY, unknown codes). The caller adds
// table, column and file:pos. `scratch` is cleared and reused when the value
// must be materialised (DECIMAL, temporal, JSON, BINARY padding, SET names,
// decompression); otherwise the view points into `in`'s buffer.
absl::Status DecodeValue(ByteCursor& in, const ColumnDef& col, std::string* scratch,
                         ValueView* out);

// Appends the JSON rendering of `v` (see header comment) to `out`.
// Steps over one value with every check DecodeValue makes (lengths,
// metadata, DECIMAL digit groups, temporal fraction ranges, JSON and
// compressed content), without formatting DECIMAL or temporal values: for
// walking row images whose values are rendered later (the apply path keeps
// raw images), so a bad value fails where it was read, not at flush.
// `scratch` is used for JSON and compressed columns.
absl::Status SkipValue(ByteCursor& in, const ColumnDef& col, std::string* scratch);

void AppendValueJson(const ValueView& v, std::string* out);

}  // namespace binrelay::protocol
