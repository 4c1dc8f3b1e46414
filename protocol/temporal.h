// Temporal column values (DATE, TIME, TIME2, DATETIME, DATETIME2, TIMESTAMP,
// TIMESTAMP2, and MariaDB's pre-10.1 "hires" TIME/DATETIME/TIMESTAMP) decoded
// from a row image and formatted exactly as SELECT prints them in a session
// with time_zone='+00:00' (mysys/my_time.cc my_datetime_packed_from_binary,
// my_time_packed_from_binary, my_timestamp_from_binary).
//
// Formats: DATE "YYYY-MM-DD"; DATETIME/TIMESTAMP "YYYY-MM-DD hh:mm:ss[.f]";
// TIME "[-]hh:mm:ss[.f]" with hours >= 100 allowed. The fraction has exactly
// fsp digits; fsp comes from the column metadata. Zero dates are printed as
// stored ("0000-00-00"); nothing is validated against a calendar because the
// server accepts such values too.
//
// Thread safety: stateless functions.
// Lifetime: text is appended to caller-owned strings; nothing points into input.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "protocol/byte_cursor.h"

namespace binrelay::protocol {

struct TemporalParts {
  bool negative = false;  // TIME only
  uint32_t year = 0, month = 0, day = 0;
  uint32_t hour = 0, minute = 0, second = 0;  // hour may exceed 23 for TIME
  uint32_t micro = 0;
};

// True for the types DecodeTemporalText reads.
bool IsTemporalType(uint8_t type);

// Reads one value of temporal column type `type` (7, 10, 11, 12, 14, 17, 18,
// 19) with metadata `meta` and appends its text to `out`.
//
// `meta` is the fsp (0..6) for TIMESTAMP2/DATETIME2/TIME2. For the old types
// 7/11/12 it is 0 (classic 4/3/8-byte layouts) unless the caller knows from
// the schema that the column is a MariaDB 5.3-format "hires" column with
// fsp > 0: MariaDB writes no TABLE_MAP metadata for those, so meta = fsp must
// come from information_schema (DATETIME_PRECISION).
// OutOfRange when the input is short; InvalidArgument for fsp > 6 or a type
// that is not temporal.
absl::Status DecodeTemporalText(ByteCursor& in, uint8_t type, uint16_t meta, std::string* out);

// How a temporal value prints: DATE; DATETIME (also TIMESTAMP, as its UTC
// civil time, the zero timestamp as the zero datetime); TIME.
enum class TemporalForm : uint8_t { kDate, kDatetime, kTime };
// Reads one value as DecodeTemporalText does (same checks, same errors),
// into its parts; the text is `form`'s rendering of them with fsp = meta.
absl::Status DecodeTemporalParts(ByteCursor& in, uint8_t type, uint16_t meta, TemporalParts* out,
                                 TemporalForm* form);

// The stored size of one value of that type and metadata, for walking a row
// image without formatting it: the layouts DecodeTemporalText reads.
// InvalidArgument for fsp > 6 or a type that is not temporal.
absl::StatusOr<size_t> TemporalBinarySize(uint8_t type, uint16_t meta);

// Steps over one value with every check DecodeTemporalText makes (sizes,
// fraction ranges), without formatting it.
absl::Status SkipTemporal(ByteCursor& in, uint8_t type, uint16_t meta);

// Formatting of already-split values.
void AppendDateText(const TemporalParts& t, std::string* out);
void AppendDatetimeText(const TemporalParts& t, int fsp, std::string* out);
void AppendTimeText(const TemporalParts& t, int fsp, std::string* out);

// MySQL's in-memory "packed" longlong forms, as stored in binary JSON opaque
// values (mysys/my_time.cc TIME_from_longlong_datetime_packed /
// TIME_from_longlong_time_packed). Datetime/date:
// ((ymd << 17 | hms) << 24) + µs; time:
// ((h << 12 | m << 6 | s) << 24) + µs; both negated for negative values.
TemporalParts UnpackDatetimePacked(int64_t packed);
TemporalParts UnpackTimePacked(int64_t packed);

// UTC civil time of `seconds` since the Unix epoch (TIMESTAMP values).
TemporalParts CivilFromEpochSeconds(uint64_t seconds);

}  // namespace binrelay::protocol
