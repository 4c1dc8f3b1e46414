// JSON text to MySQL binary JSON (column type 245), the inverse of
// json_binary.h: the layout of sql-common/json_binary.cc serialize_json_value
// (small containers with 2-byte offsets while they fit in 64 KiB, large ones
// with 4-byte offsets otherwise; literals and 16-bit integers inlined in
// value entries, 32-bit integers too in large containers; each integer in the
// smallest type that holds it).
//
// Used to rebuild a full after image from a PARTIAL_UPDATE_ROWS JSON diff
// (row_image.h): the patched document exists as text (json_diff.h), and the
// rebuilt image must hold it in the column's own binary form.
//
// The contract is on text: AppendJsonBinaryText(EncodeJsonTextAsBinary(t))
// gives t back for any t that AppendJsonBinaryText printed. Value types need
// not survive (a DECIMAL 1.5 comes back a DOUBLE, an opaque DATE a string):
// the apply path writes documents as text, which the target parses anyway.
// Do not forward a rebuilt image as binlog. Numbers keep
// their text: integers as integers, a number whose text a double prints back
// exactly as a double, any other decimal text ("1.50") as an opaque DECIMAL
// with its digits and scale, as MySQL stores a DECIMAL inside JSON.
//
// Thread safety: stateless functions.
// Lifetime: output is appended to caller-owned strings.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "protocol/json_text_dom.h"

namespace binrelay::protocol {

// Appends the binary form of `doc` (type byte + value). InvalidArgument when
// it nests deeper than 100 levels (MySQL's JSON_DOCUMENT_MAX_DEPTH), an object
// key is longer than 65535 bytes, or a container exceeds 4 GiB.
absl::Status EncodeJsonBinary(const JsonNode& doc, std::string* out);

// Parses JSON text (json_text_dom.h) and encodes it.
absl::Status EncodeJsonTextAsBinary(std::string_view text, std::string* out);

}  // namespace binrelay::protocol
