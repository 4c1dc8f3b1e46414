// JSON diffs of PARTIAL_UPDATE_ROWS (MySQL binlog_row_value_options=
// PARTIAL_JSON, sql/json_diff.cc Json_diff_vector::read_binary): parsing the
// diff list stored in place of
// a JSON column's after-image, and applying it to the before-image document.
//
// Diff list = repeated { op(1): 0 REPLACE, 1 INSERT, 2 REMOVE;
//   path length (packed) + path text ("$.a[1]"); for REPLACE/INSERT value
//   length (packed) + binary JSON value (type byte + data) }.
//
// Application works on document TEXT (as AppendJsonBinaryText prints it):
// the text is parsed into a small DOM, each diff is applied by path, and the
// result is printed back in MySQL's format (", " / ": ", object keys kept in
// MySQL's order: shorter keys first, then bytewise). Numbers keep their text.
//
// Thread safety: stateless functions.
// Lifetime: JsonDiff views point into the bytes given to ParseJsonDiffs (the
// event buffer); they are valid as long as that buffer is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "protocol/byte_cursor.h"
#include "protocol/column_def.h"

namespace binrelay::protocol {

enum class JsonDiffOp : uint8_t { kReplace = 0, kInsert = 1, kRemove = 2 };

struct JsonDiff {
  JsonDiffOp op = JsonDiffOp::kReplace;
  std::string_view path;   // MySQL JSON path text, e.g. $.a[1] or $."k y"
  std::string_view value;  // binary JSON value; empty for kRemove
};

// Parses a whole diff list. DataLoss for an unknown operation; OutOfRange for
// a path or value length that runs past the list.
absl::Status ParseJsonDiffs(std::string_view bytes, std::vector<JsonDiff>* out);

// Reads a partial JSON column value from a row image: the column's usual
// length prefix (col.meta bytes) then the diff list.
absl::Status ReadJsonDiffColumn(ByteCursor& in, const ColumnDef& col, std::vector<JsonDiff>* out);

// Applies `diffs` in order to `document` (JSON text) and writes the new text
// to *out. DataLoss when a path does not exist where the operation needs it
// (the diff does not belong to this before-image) or a value is corrupt;
// InvalidArgument when `document` or a path is not valid JSON / path syntax.
absl::Status ApplyJsonDiffs(std::string_view document, const std::vector<JsonDiff>& diffs,
                            std::string* out);

// Appends the diffs as a JSON array, for consumers that lack the
// before-image: [{"op": "replace", "path": "$.a", "value": 1}, ...].
absl::Status AppendJsonDiffsJson(const std::vector<JsonDiff>& diffs, std::string* out);

}  // namespace binrelay::protocol
