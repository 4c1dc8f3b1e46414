#include "protocol/row_decoder.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/column_type.h"
#include "protocol/event_header.h"
#include "protocol/event_type.h"
#include "protocol/json_diff.h"
#include "protocol/json_writer.h"
#include "protocol/mariadb_event_compression.h"
#include "protocol/status_macros.h"
#include "protocol/value.h"

namespace binrelay::protocol {
namespace {

std::atomic<uint64_t> g_rows_events_decoded{0};

constexpr uint64_t kPartialJsonUpdates = 0x1;  // value_options bit

bool Bit(std::string_view bitmap, size_t i) {
  return (static_cast<uint8_t>(bitmap[i / 8]) >> (i % 8)) & 1;
}

size_t CountBits(std::string_view bitmap, size_t n) {
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) count += Bit(bitmap, i);
  return count;
}

}  // namespace

struct RowDecoder::ImageContext {
  const RowsEventView& ev;
  const TableDef& table;
  ByteCursor& rows;
  size_t row_index;
  size_t json_columns;  // JSON columns in the whole table (partial bitmap width)

  // Where byte `pos` of the rows area lives, for messages.
  std::string Locate(size_t pos) const {
    if (ev.compressed) return absl::StrCat("decompressed rows byte ", pos);
    return absl::StrCat("file offset ", ev.event_offset + kEventHeaderLen + ev.rows_body_offset + pos);
  }
  std::string Table() const { return absl::StrCat("`", AV(table.db), "`.`", AV(table.table), "`"); }
  std::string Column(size_t i) const {
    const ColumnDef& col = table.columns[i];
    return absl::StrCat("column ", i + 1, col.name.empty() ? "" : " `", AV(col.name),
                        col.name.empty() ? "" : "`", " (", AV(ColumnTypeName(col.type)), ")");
  }
};

absl::Status RowDecoder::DecodeImage(ImageContext& ctx, std::string_view present, bool after_image,
                                     std::string* out, bool* partial) {
  ByteCursor& c = ctx.rows;
  const size_t width = ctx.ev.column_count;
  // Built only on error: this function runs for every row image.
  auto where = [&] {
    return absl::StrCat(AV(EventTypeName(ctx.ev.type)), " event at offset ", ctx.ev.event_offset,
                        " for ", ctx.Table(), " row ", ctx.row_index,
                        after_image ? " after image" : " before image");
  };
  std::string_view partial_bits;
  if (ctx.ev.partial_json && after_image) {
    const uint64_t options = c.Lenenc();
    if (options & kPartialJsonUpdates) partial_bits = c.Bytes((ctx.json_columns + 7) / 8);
  }
  const size_t n_present = CountBits(present, width);
  const size_t null_at = c.position();
  std::string_view nulls = c.Bytes((n_present + 7) / 8);
  if (!c.ok()) {
    return absl::OutOfRangeError(absl::StrCat(where(), ": NULL bitmap truncated at ",
                                              ctx.Locate(null_at)));
  }
  *partial = width < ctx.table.columns.size();
  out->clear();
  out->push_back('{');
  bool first = true;
  size_t ordinal = 0;      // among present columns
  size_t json_ordinal = 0;  // among the table's JSON columns
  for (size_t i = 0; i < width; ++i) {
    const ColumnDef& col = ctx.table.columns[i];
    const bool is_json = col.type == kTypeJson;
    const size_t this_json = json_ordinal;
    if (is_json) ++json_ordinal;
    if (!Bit(present, i)) {
      *partial = true;
      continue;
    }
    if (!first) out->push_back(',');
    first = false;
    out->append(keys_[i]);  // "name": prepared once per event
    const bool is_null = Bit(nulls, ordinal++);
    if (is_null) {
      out->append("null");
      continue;
    }
    const size_t at = c.position();
    if (is_json && !partial_bits.empty() && Bit(partial_bits, this_json)) {
      absl::Status s = AppendPatchedJson(c, col, this_json, out);
      if (!s.ok()) {
        return Annotate(s, absl::StrCat(where(), ": ", ctx.Column(i), " at ", ctx.Locate(at)));
      }
      continue;
    }
    ValueView v;
    absl::Status s = DecodeValue(c, col, &scratch_, &v);
    if (!s.ok()) {
      return Annotate(s, absl::StrCat(where(), ": ", ctx.Column(i), " at ", ctx.Locate(at)));
    }
    // PARTIAL_UPDATE_ROWS: keep each JSON document of the before image; the
    // after image may carry only diffs against it.
    if (is_json && ctx.ev.partial_json && !after_image) {
      json_docs_[this_json].assign(v.bytes);
      json_doc_present_[this_json] = true;
    }
    AppendValueJson(v, out);
  }
  out->push_back('}');
  return absl::OkStatus();
}

absl::Status RowDecoder::AppendPatchedJson(ByteCursor& c, const ColumnDef& col, size_t json_index,
                                           std::string* out) {
  BR_RETURN_IF_ERROR(ReadJsonDiffColumn(c, col, &diffs_));
  if (!json_doc_present_[json_index]) {
    // MINIMAL before image: the document cannot be rebuilt. Hand over the
    // diffs as an object (documents are strings, so the two cannot be
    // confused); the row is already flagged partial.
    out->append("{\"json_diffs\":");
    BR_RETURN_IF_ERROR(AppendJsonDiffsJson(diffs_, out));
    out->push_back('}');
    return absl::OkStatus();
  }
  BR_RETURN_IF_ERROR(ApplyJsonDiffs(json_docs_[json_index], diffs_, &patched_));
  AppendJsonString(patched_, out);
  return absl::OkStatus();
}

absl::Status RowDecoder::Decode(const RowsEventView& ev, const TableDef& table,
                                RowCallback on_row) {
  if (ev.table_id != table.table_id) {
    return absl::InvalidArgumentError(absl::StrCat(
        AV(EventTypeName(ev.type)), " event at offset ", ev.event_offset, " is for table id ",
        ev.table_id, " but the table map given is for id ", table.table_id, " (`",
        AV(table.db), "`.`", AV(table.table), "`)"));
  }
  if (ev.column_count > table.columns.size()) {
    return absl::DataLossError(absl::StrCat(
        AV(EventTypeName(ev.type)), " event at offset ", ev.event_offset, " has ",
        ev.column_count, " columns but TABLE_MAP for `", AV(table.db), "`.`", AV(table.table),
        "` has ", table.columns.size()));
  }
  g_rows_events_decoded.fetch_add(1, std::memory_order_relaxed);
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
  size_t json_columns = 0;
  if (ev.partial_json) {
    for (const ColumnDef& col : table.columns) json_columns += col.type == kTypeJson;
  }
  // JSON keys ("name": or "@N":) once per event rather than per row image.
  keys_.resize(table.columns.size());
  for (size_t i = 0; i < table.columns.size(); ++i) {
    std::string& key = keys_[i];
    key.clear();
    if (table.columns[i].name.empty()) {
      absl::StrAppend(&key, "\"@", i + 1, "\"");
    } else {
      AppendJsonString(table.columns[i].name, &key);
    }
    key.push_back(':');
  }
  ByteCursor c(rows);
  DecodedRow row;
  row.has_before = ev.has_before();
  row.has_after = ev.has_after();
  for (size_t index = 0; !c.empty(); ++index) {
    const size_t row_start = c.position();
    ImageContext ctx{ev, table, c, index, json_columns};
    row.index = index;
    if (ev.partial_json) {
      json_docs_.resize(json_columns);
      json_doc_present_.assign(json_columns, false);
    }
    if (row.has_before) {
      BR_RETURN_IF_ERROR(DecodeImage(ctx, ev.columns_before, false, &before_, &row.before_partial));
      row.before_json = before_;
    }
    if (row.has_after) {
      BR_RETURN_IF_ERROR(DecodeImage(ctx, ev.columns_after, true, &after_, &row.after_partial));
      row.after_json = after_;
    }
    // A row with no present column (an empty column bitmap) holds no bytes,
    // so the loop would never reach the end; no server logs such a row.
    if (c.position() == row_start) return RowWithoutBytesError(ev, table.db, table.table, index);
    BR_RETURN_IF_ERROR(on_row(row));
  }
  return absl::OkStatus();
}

uint64_t RowsEventsDecoded() { return g_rows_events_decoded.load(std::memory_order_relaxed); }

}  // namespace binrelay::protocol
