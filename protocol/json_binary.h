// MySQL binary JSON (column type 245, sql-common json_binary.cc format) to
// JSON text exactly as MySQL prints it (Json_wrapper::to_string, json_dom.cc):
//   {"a": 1, "b": [1, 2.5, "x", null, true]}
// i.e. ", " between members, ": " after keys, keys in stored order (sorted by
// length then bytes), doubles as MySQL's my_gcvt prints them (with ".0"
// appended to integral values, "1e300" style exponents), opaque DECIMAL /
// DATE / TIME / DATETIME / TIMESTAMP as quoted strings in MySQL's JSON text
// format, and any other opaque value as "base64:type<N>:<base64>".
//
// Thread safety: stateless functions.
// Lifetime: text is appended to caller-owned strings; nothing points into input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace binrelay::protocol {

// The text of a document is at most this many times its binary size (plus
// 4 KiB). A well-formed document stays far below (6x for a string of control
// characters, each printed as \u00XX); a damaged one whose entries share
// values could otherwise grow exponentially.
inline constexpr size_t kMaxJsonTextExpansion = 16;

// Appends the text of the binary JSON document `doc` (type byte + value) to
// `out`. An empty `doc` is JSON null (how MySQL stores a NULL-ish empty
// value). DataLoss on any offset/length that points outside the document or
// into a container's own header and entries, an unknown type byte, or
// nesting deeper than 100 levels (MySQL's own limit), or text that would
// exceed kMaxJsonTextExpansion times the document (DataLoss: not retryable).
absl::Status AppendJsonBinaryText(std::string_view doc, std::string* out);

// Appends the text of one binary JSON value of type byte `type` whose data
// starts at `data` (used by JSON diffs, whose values are stored that way).
absl::Status AppendJsonBinaryValueText(uint8_t type, std::string_view data, std::string* out);

// Appends `d` as MySQL prints a JSON double.
void AppendMysqlJsonDouble(double d, std::string* out);

}  // namespace binrelay::protocol
