#include "protocol/event_header.h"

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/event_type.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {

absl::StatusOr<EventHeader> ParseEventHeader(std::string_view bytes) {
  if (bytes.size() < kEventHeaderLen) {
    return absl::OutOfRangeError(absl::StrCat("event header needs ", kEventHeaderLen,
                                              " bytes, ", bytes.size(), " available"));
  }
  ByteCursor c(bytes);
  EventHeader h;
  h.timestamp = c.U32();
  h.type = c.U8();
  h.server_id = c.U32();
  h.event_size = c.U32();
  h.log_pos = c.U32();
  h.flags = c.U16();
  if (h.event_size < kEventHeaderLen) {
    return absl::DataLossError(absl::StrCat("event_size ", h.event_size, " of ",
                                            AV(EventTypeName(h.type)),
                                            " event is smaller than the 19-byte header"));
  }
  return h;
}

absl::StatusOr<EventView> MakeEventView(std::string_view event, bool has_checksum,
                                        uint64_t offset) {
  BR_ASSIGN_OR_RETURN(EventHeader h, ParseEventHeader(event));
  if (h.event_size != event.size()) {
    return absl::DataLossError(absl::StrCat(AV(EventTypeName(h.type)), " event at offset ", offset,
                                            ": header says ", h.event_size, " bytes, frame has ",
                                            event.size()));
  }
  const size_t trailer = has_checksum ? kChecksumLen : 0;
  if (event.size() < kEventHeaderLen + trailer) {
    return absl::DataLossError(absl::StrCat(AV(EventTypeName(h.type)), " event at offset ", offset,
                                            ": event_size ", h.event_size,
                                            " leaves no room for the CRC32 trailer"));
  }
  EventView v;
  v.header = h;
  v.bytes = event;
  v.body = event.substr(kEventHeaderLen, event.size() - kEventHeaderLen - trailer);
  v.has_checksum = has_checksum;
  v.offset = offset;
  return v;
}

}  // namespace binrelay::protocol
