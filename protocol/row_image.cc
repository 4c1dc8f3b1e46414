#include "protocol/row_image.h"

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/column_type.h"
#include "protocol/event_type.h"
#include "protocol/json_binary_writer.h"
#include "protocol/json_diff.h"
#include "protocol/mariadb_event_compression.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

bool Bit(std::string_view bitmap, size_t i) {
  return (static_cast<uint8_t>(bitmap[i / 8]) >> (i % 8)) & 1;
}

constexpr uint64_t kPartialJsonUpdates = 0x1;  // value_options bit

}  // namespace

absl::Status RowImageSplitter::Walk(const RowsEventView& ev, const TableDef& table,
                                    ByteCursor& c, std::string_view present, size_t row,
                                    bool after, std::string_view* image, bool* full) {
  // Built only on error: this runs for every row image.
  auto where = [&](size_t column) {
    std::string s = absl::StrCat(AV(EventTypeName(ev.type)), " event at offset ",
                                 ev.event_offset, " for `", AV(table.db), "`.`", AV(table.table),
                                 "` row ", row, after ? " after image" : " before image");
    if (column < table.columns.size()) {
      absl::StrAppend(&s, ", column ", column + 1, " `", AV(table.columns[column].name), "` (",
                      AV(ColumnTypeName(table.columns[column].type)), ")");
    }
    return s;
  };
  const size_t width = ev.column_count;
  std::string_view partial_bits;  // JSON columns whose after value is a diff
  if (ev.partial_json && after) {
    const uint64_t options = c.Lenenc();
    if (options & kPartialJsonUpdates) partial_bits = c.Bytes((json_columns_ + 7) / 8);
  }
  size_t n_present = 0;
  *full = width == table.columns.size();
  for (size_t i = 0; i < width; ++i) {
    if (Bit(present, i)) {
      ++n_present;
    } else {
      *full = false;
    }
  }
  const size_t start = c.position();
  std::string_view nulls = c.Bytes((n_present + 7) / 8);
  if (!c.ok()) {
    return absl::OutOfRangeError(absl::StrCat(where(SIZE_MAX), ": NULL bitmap truncated"));
  }
  if (!partial_bits.empty()) {
    // The image is rebuilt: diffs become the patched documents.
    synthesized_.assign(nulls);
  }
  size_t ordinal = 0;
  size_t json_ordinal = 0;  // among the table's JSON columns
  for (size_t i = 0; i < width; ++i) {
    const bool is_json = table.columns[i].type == kTypeJson;
    const size_t this_json = json_ordinal;
    if (is_json) ++json_ordinal;
    if (!Bit(present, i)) continue;
    if (Bit(nulls, ordinal++)) continue;
    const size_t at = c.position();
    absl::Status s;
    if (is_json && !partial_bits.empty() && Bit(partial_bits, this_json)) {
      s = AppendPatchedJson(c, table.columns[i], this_json);
    } else {
      // Checked but not formatted: the values are rendered when the image is
      // flushed, so formatting them here would be wasted.
      s = SkipValue(c, table.columns[i], &scratch_);
      if (s.ok() && !partial_bits.empty()) synthesized_.append(c.data().substr(at, c.position() - at));
    }
    if (!s.ok()) return Annotate(s, where(i));
    // PARTIAL_UPDATE_ROWS: the before image's documents, which the after
    // image's diffs patch.
    if (is_json && ev.partial_json && !after) json_before_[this_json] = c.data().substr(at, c.position() - at);
  }
  if (!partial_bits.empty()) {
    *image = synthesized_;
    return absl::OkStatus();
  }
  *image = c.data().substr(start, c.position() - start);
  return absl::OkStatus();
}

absl::Status RowImageSplitter::AppendPatchedJson(ByteCursor& c, const ColumnDef& col,
                                                 size_t json_index) {
  BR_RETURN_IF_ERROR(ReadJsonDiffColumn(c, col, &diffs_));
  if (json_before_[json_index].data() == nullptr) {
    return absl::FailedPreconditionError(
        "a JSON partial update (binlog_row_value_options=PARTIAL_JSON) whose before image "
        "lacks the column (or holds NULL there, against which MySQL never logs a diff: a "
        "damaged event) cannot be applied: the document it patches is not in the binlog; "
        "the source must log full images (binlog_row_image=FULL) or whole JSON values "
        "(binlog_row_value_options='')");
  }
  ByteCursor before(json_before_[json_index]);
  ValueView doc;
  BR_RETURN_IF_ERROR(DecodeValue(before, col, &scratch_, &doc));
  BR_RETURN_IF_ERROR(ApplyJsonDiffs(doc.bytes, diffs_, &patched_text_));
  patched_binary_.clear();
  BR_RETURN_IF_ERROR(EncodeJsonTextAsBinary(patched_text_, &patched_binary_));
  // The column's own length prefix (pack length from the TABLE_MAP).
  const size_t width = col.meta;
  if (width < 1 || width > 4 || (width < 4 && patched_binary_.size() >= (size_t{1} << (8 * width)))) {
    return absl::OutOfRangeError(absl::StrCat("the patched JSON document of ", patched_binary_.size(),
                                              " bytes does not fit the column's ", width,
                                              "-byte length"));
  }
  AppendFixed(&synthesized_, patched_binary_.size(), width);
  synthesized_.append(patched_binary_);
  return absl::OkStatus();
}

absl::Status RowImageSplitter::Split(const RowsEventView& ev, const TableDef& table,
                                     absl::FunctionRef<absl::Status(const RawRowImages&)> on_row) {
  if (ev.column_count > table.columns.size()) {
    return absl::DataLossError(absl::StrCat(
        AV(EventTypeName(ev.type)), " event at offset ", ev.event_offset, " has ",
        ev.column_count, " columns but TABLE_MAP for `", AV(table.db), "`.`", AV(table.table),
        "` has ", table.columns.size()));
  }
  std::string_view rows = ev.rows;
  if (ev.compressed) {
    absl::Status s = UncompressMariadbEventField(rows, &inflated_);
    if (!s.ok()) {
      return Annotate(s, absl::StrCat(AV(EventTypeName(ev.type)), " event at offset ",
                                      ev.event_offset, " for `", AV(table.db), "`.`",
                                      AV(table.table), "`"));
    }
    rows = inflated_;
  }
  // One huge document must not keep its buffers for the reader's life.
  for (std::string* buf : {&patched_text_, &patched_binary_, &synthesized_}) {
    if (buf->capacity() > (size_t{16} << 20)) std::string().swap(*buf);
  }
  json_columns_ = 0;
  if (ev.partial_json) {
    for (const ColumnDef& col : table.columns) json_columns_ += col.type == kTypeJson;
  }
  ByteCursor c(rows);
  RawRowImages r;
  for (size_t index = 0; !c.empty(); ++index) {
    const size_t row_start = c.position();
    r.index = index;
    if (ev.partial_json) json_before_.assign(json_columns_, std::string_view());
    r.before = {};
    r.after = {};
    r.before_full = r.after_full = true;
    if (ev.has_before()) {
      BR_RETURN_IF_ERROR(Walk(ev, table, c, ev.columns_before, index, false, &r.before,
                              &r.before_full));
    }
    if (ev.has_after()) {
      BR_RETURN_IF_ERROR(Walk(ev, table, c, ev.columns_after, index, true, &r.after,
                              &r.after_full));
    }
    // Every row must advance, or an empty column bitmap loops forever.
    if (c.position() == row_start) return RowWithoutBytesError(ev, table.db, table.table, index);
    BR_RETURN_IF_ERROR(on_row(r));
  }
  return absl::OkStatus();
}

absl::Status ForEachImageValue(std::string_view image, const TableDef& table,
                               std::string* scratch,
                               absl::FunctionRef<bool(size_t, const ValueView*)> on_value,
                               ImageValues mode) {
  ByteCursor c(image);
  const size_t n = table.columns.size();
  std::string_view nulls = c.Bytes((n + 7) / 8);
  if (!c.ok()) {
    return absl::DataLossError(absl::StrCat("row image of `", AV(table.db), "`.`",
                                            AV(table.table), "` is shorter than its NULL bitmap"));
  }
  for (size_t i = 0; i < n; ++i) {
    if (Bit(nulls, i)) {
      if (!on_value(i, nullptr)) return absl::OkStatus();
      continue;
    }
    ValueView v;
    const ColumnDef& col = table.columns[i];
    absl::Status s;
    if (mode == ImageValues::kTemporalParts && IsTemporalType(col.type)) {
      s = DecodeTemporalParts(c, col.type, col.meta, &v.temporal, &v.temporal_form);
      v.kind = ValueKind::kFormatted;
      v.has_temporal = true;
    } else {
      s = DecodeValue(c, col, scratch, &v);
    }
    if (!s.ok()) {
      return Annotate(s, absl::StrCat("row image of `", AV(table.db), "`.`", AV(table.table),
                                      "`, column ", i + 1, " `", AV(table.columns[i].name), "`"));
    }
    if (!on_value(i, &v)) return absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace binrelay::protocol
