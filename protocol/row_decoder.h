// RowDecoder: decodes the row images of a parsed rows event (rows_event.h)
// into JSON object text {"name":value,...} using protocol::DecodeValue and
// AppendValueJson (value.h). Names come from ColumnDef::name, or "@<1-based
// index>" when unknown. Columns absent from an image's present-bitmap are
// omitted and the image is flagged partial; NULLs come from each row's NULL
// bitmap, which covers PRESENT columns only (sql/rpl_record.cc unpack_row).
//
// PARTIAL_UPDATE_ROWS (39): after images start with value_options and, when
// PARTIAL_JSON_UPDATES is set, a bitmap over all the table's JSON columns;
// a flagged JSON column holds a diff list (sql/json_diff.cc
// Json_diff_vector::read_binary). Applying diffs needs
// protocol/json_diff.h (values branch, not yet available): such columns fail
// with Unimplemented "JSON partial update (diff) ..." instead of guessing.
//
// RowsEventsDecoded() counts rows events whose images were decoded, so a test
// can prove that unsubscribed tables never reach this code.
//
// Thread safety: a RowDecoder is used by one thread (it reuses buffers);
// RowsEventsDecoded() is safe from any thread.
// Lifetime: DecodedRow's views point into the decoder's buffers and are
// valid only during the callback.
#pragma once

#include <vector>

#include "protocol/byte_cursor.h"
#include "protocol/json_diff.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "protocol/column_def.h"
#include "protocol/rows_event.h"

namespace binrelay::protocol {

struct DecodedRow {
  size_t index = 0;  // 0-based row number within the event
  bool has_before = false;
  bool has_after = false;
  std::string_view before_json;
  std::string_view after_json;
  bool before_partial = false;  // some table column is absent from the image
  bool after_partial = false;
};

using RowCallback = absl::FunctionRef<absl::Status(const DecodedRow&)>;

class RowDecoder {
 public:
  // Decodes every row of `ev` against `table` (the TABLE_MAP in force for
  // ev.table_id). Stops at the first error or the first non-OK callback
  // status. Errors name db.table, row, column (index, name, type) and offset.
  absl::Status Decode(const RowsEventView& ev, const TableDef& table, RowCallback on_row);

 private:
  struct ImageContext;
  absl::Status DecodeImage(ImageContext& ctx, std::string_view present, bool after_image,
                           std::string* out, bool* partial);

  // Rebuilds a PARTIAL_UPDATE_ROWS JSON column from the before image's
  // document and the diffs at `c`.
  absl::Status AppendPatchedJson(ByteCursor& c, const ColumnDef& col, size_t json_index,
                                 std::string* out);

  std::vector<std::string> keys_;  // per column: JSON key and colon
  std::string before_;
  std::string after_;
  std::string scratch_;
  std::string inflated_;
  // PARTIAL_UPDATE_ROWS state, per JSON column of the table.
  std::vector<std::string> json_docs_;
  std::vector<bool> json_doc_present_;
  std::vector<JsonDiff> diffs_;
  std::string patched_;
};

// Process-wide count of rows events whose images were decoded.
uint64_t RowsEventsDecoded();

}  // namespace binrelay::protocol
