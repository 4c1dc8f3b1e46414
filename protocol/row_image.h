// Row images as bytes: cuts a rows event (rows_event.h) into its row images
// without rendering them, and reads the values of one such image later.
//
// An image here is the binlog's own bytes for one row: the NULL bitmap over
// the present columns followed by the non-NULL values, exactly as
// log_event.cc's Rows_log_event::write_row writes them. Apply pipelines keep
// these bytes (not text) in their buffers and render SQL only at flush.
//
// Only full images are accepted by the apply path, so an image's present
// bitmap is all ones; `full` says whether it was.
//
// Thread safety: RowImageSplitter is used by one thread (it reuses a buffer);
// ForEachImageValue is a pure function.
// Lifetime: views passed to callbacks are valid only during the callback.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "protocol/byte_cursor.h"
#include "protocol/column_def.h"
#include "protocol/json_diff.h"
#include "protocol/rows_event.h"
#include "protocol/value.h"

namespace binrelay::protocol {

struct RawRowImages {
  size_t index = 0;  // 0-based row number within the event
  std::string_view before;  // empty if the event has no before image
  std::string_view after;
  bool before_full = true;  // every table column is present
  bool after_full = true;
};

class RowImageSplitter {
 public:
  // Calls `on_row` for every row of `ev` (decompressing MariaDB compressed
  // rows first). Every value is checked (value.h SkipValue) while finding
  // where the image ends, so a malformed event fails here, naming db.table,
  // row, column and offset, before any of it reaches a buffer.
  // PARTIAL_UPDATE_ROWS events whose after images carry JSON diffs
  // (MySQL binlog_row_value_options=PARTIAL_JSON) get a rebuilt after image:
  // each diff is applied to the before image's document and the column holds
  // the patched document in binary form, so consumers see a plain full image.
  // FailedPrecondition when the before image lacks a patched column.
  absl::Status Split(const RowsEventView& ev, const TableDef& table,
                     absl::FunctionRef<absl::Status(const RawRowImages&)> on_row);

 private:
  absl::Status Walk(const RowsEventView& ev, const TableDef& table, ByteCursor& c,
                    std::string_view present, size_t row, bool after, std::string_view* image,
                    bool* full);
  absl::Status AppendPatchedJson(ByteCursor& c, const ColumnDef& col, size_t json_index);

  std::string inflated_;
  std::string scratch_;  // SkipValue's, for JSON and compressed columns
  // PARTIAL_UPDATE_ROWS: per JSON column of the table, the current row's
  // before-image value (length prefix included; null data when absent), and
  // the rebuilt after image.
  size_t json_columns_ = 0;
  std::vector<std::string_view> json_before_;
  std::vector<JsonDiff> diffs_;
  std::string patched_text_;
  std::string patched_binary_;
  std::string synthesized_;
};

// How ForEachImageValue hands out temporal values: as their text (as
// DecodeValue does), or split into parts without formatting (ValueView's
// `temporal`), for writers that send them in binary form.
enum class ImageValues : uint8_t { kText, kTemporalParts };

// Calls `on_value(i, v)` for the table's columns in order, stopping early
// when it returns false; v is null for SQL NULL. `image` must be a full
// image of `table` (as RowImageSplitter produced it). `scratch` is reused.
absl::Status ForEachImageValue(std::string_view image, const TableDef& table,
                               std::string* scratch,
                               absl::FunctionRef<bool(size_t, const ValueView*)> on_value,
                               ImageValues mode = ImageValues::kText);

}  // namespace binrelay::protocol
