#include "protocol/rows_event.h"

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/event_type.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

struct RowsType {
  RowsKind kind;
  uint8_t version;
  bool compressed;
  bool partial;
};

bool Classify(uint8_t type, RowsType* out) {
  switch (type) {
    case kPreGaWriteRowsEvent: *out = {RowsKind::kWrite, 0, false, false}; return true;
    case kPreGaUpdateRowsEvent: *out = {RowsKind::kUpdate, 0, false, false}; return true;
    case kPreGaDeleteRowsEvent: *out = {RowsKind::kDelete, 0, false, false}; return true;
    case kWriteRowsEventV1: *out = {RowsKind::kWrite, 1, false, false}; return true;
    case kUpdateRowsEventV1: *out = {RowsKind::kUpdate, 1, false, false}; return true;
    case kDeleteRowsEventV1: *out = {RowsKind::kDelete, 1, false, false}; return true;
    case kWriteRowsEvent: *out = {RowsKind::kWrite, 2, false, false}; return true;
    case kUpdateRowsEvent: *out = {RowsKind::kUpdate, 2, false, false}; return true;
    case kDeleteRowsEvent: *out = {RowsKind::kDelete, 2, false, false}; return true;
    case kPartialUpdateRowsEvent: *out = {RowsKind::kUpdate, 2, false, true}; return true;
    case kWriteRowsCompressedEventV1: *out = {RowsKind::kWrite, 1, true, false}; return true;
    case kUpdateRowsCompressedEventV1: *out = {RowsKind::kUpdate, 1, true, false}; return true;
    case kDeleteRowsCompressedEventV1: *out = {RowsKind::kDelete, 1, true, false}; return true;
    case kWriteRowsCompressedEvent: *out = {RowsKind::kWrite, 2, true, false}; return true;
    case kUpdateRowsCompressedEvent: *out = {RowsKind::kUpdate, 2, true, false}; return true;
    case kDeleteRowsCompressedEvent: *out = {RowsKind::kDelete, 2, true, false}; return true;
    default: return false;
  }
}

// Post-header length from the FDE; falls back to the standard sizes when
// the FDE's array does not cover the type (older MariaDB arrays).
size_t PostHeaderLen(uint8_t type, uint8_t version, const FormatDescription& fd) {
  const size_t n = fd.PostHeaderLen(type);
  if (n != 0) return n;
  return version == 2 ? 10 : 8;
}

std::string Where(const EventView& ev) {
  return absl::StrCat(AV(EventTypeName(ev.type())), " event at offset ", ev.offset);
}

void ParseExtraData(std::string_view extra, RowsEventView* out) {
  ByteCursor c(extra);
  while (c.ok() && !c.empty()) {
    const uint8_t type = c.U8();
    if (type == 0) {  // NDB info: length byte covers the whole item
      const uint8_t len = c.U8();
      c.Skip(1);  // format
      out->ndb_info = c.Bytes(len >= 2 ? len - 2 : 0);
    } else if (type == 1) {  // partition info
      out->has_partition = true;
      out->partition_id = c.U16();
      if (out->kind == RowsKind::kUpdate) out->source_partition_id = c.U16();
    } else {
      return;  // unknown tag: its length is unknown; the raw view stays available
    }
  }
}

}  // namespace

absl::StatusOr<uint64_t> PeekRowsTableId(const EventView& ev, const FormatDescription& fd) {
  RowsType rt;
  if (!Classify(ev.type(), &rt)) {
    return absl::InvalidArgumentError(absl::StrCat(Where(ev), " is not a rows event"));
  }
  ByteCursor c(ev.body);
  const uint64_t id = c.Fixed(PostHeaderLen(ev.type(), rt.version, fd) == 6 ? 4 : 6);
  if (!c.ok()) return absl::DataLossError(absl::StrCat(Where(ev), ": body too short for table id"));
  return id;
}

absl::StatusOr<RowsEventView> ParseRowsEvent(const EventView& ev, const FormatDescription& fd) {
  RowsType rt;
  if (!Classify(ev.type(), &rt)) {
    return absl::InvalidArgumentError(absl::StrCat(Where(ev), " is not a rows event"));
  }
  RowsEventView r;
  r.type = ev.type();
  r.kind = rt.kind;
  r.version = rt.version;
  r.compressed = rt.compressed;
  r.partial_json = rt.partial;
  r.event_offset = ev.offset;
  const size_t post = PostHeaderLen(ev.type(), rt.version, fd);
  ByteCursor c(ev.body);
  r.table_id = c.Fixed(post == 6 ? 4 : 6);
  r.flags = c.U16();
  if (post == 10) {
    const uint16_t extra_len = c.U16();
    if (c.ok() && extra_len < 2) {
      return absl::DataLossError(
          absl::StrCat(Where(ev), ": extra-data length ", extra_len, " is below its own 2 bytes"));
    }
    r.extra_data = c.Bytes(extra_len - 2);
    if (!c.ok()) {
      return absl::DataLossError(absl::StrCat(Where(ev), ": extra-data length ", extra_len,
                                              " exceeds the event"));
    }
    ParseExtraData(r.extra_data, &r);
  } else if (post > 8) {
    c.Skip(post - 8);  // post-header fields this reader does not know
  }
  r.column_count = c.Lenenc();
  if (!c.ok()) return absl::DataLossError(absl::StrCat(Where(ev), ": truncated before column count"));
  // Each bitmap needs (width+7)/8 bytes; check before any arithmetic overflow.
  if (r.column_count > uint64_t{8} * c.remaining()) {
    return absl::DataLossError(absl::StrCat(Where(ev), ": column count ", r.column_count,
                                            " needs more bitmap bytes than the ", c.remaining(),
                                            " left"));
  }
  const size_t bitmap_len = (r.column_count + 7) / 8;
  r.columns_before = c.Bytes(bitmap_len);
  r.columns_after = r.columns_before;
  if (r.kind == RowsKind::kUpdate) r.columns_after = c.Bytes(bitmap_len);
  if (!c.ok()) {
    return absl::DataLossError(absl::StrCat(Where(ev), ": columns bitmaps (", bitmap_len,
                                            " bytes each) exceed the event"));
  }
  r.rows_body_offset = c.position();
  r.rows = c.Rest();
  return r;
}

absl::Status RowWithoutBytesError(const RowsEventView& ev, std::string_view db,
                                  std::string_view table, size_t row_index) {
  return absl::DataLossError(absl::StrCat(
      AV(EventTypeName(ev.type)), " event at offset ", ev.event_offset, " for `", AV(db), "`.`",
      AV(table), "`: row ", row_index, " occupies no bytes (", ev.column_count,
      " column(s), none present in its image); the event is damaged"));
}

}  // namespace binrelay::protocol
