#include "protocol/packet_capture_reader.h"

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/event_header.h"
#include "protocol/event_type.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {

absl::Status PacketCaptureReader::Error(absl::Status s) const {
  return name_.empty() ? s : Annotate(s, name_);
}

absl::StatusOr<bool> PacketCaptureReader::Next(EventView* out) {
  while (true) {
    if (ended_ || pos_ == data_.size()) return false;
    const uint64_t record = pos_;
    const uint64_t remain = data_.size() - pos_;
    if (remain < 4) {
      return Error(absl::OutOfRangeError(absl::StrCat(
          "truncated packet length at offset ", record, ": ", remain, " bytes remain, 4 needed")));
    }
    ByteCursor c(data_.substr(pos_, 4));
    const uint32_t len = c.U32();
    if (len > remain - 4) {
      return Error(absl::OutOfRangeError(absl::StrCat("truncated packet at offset ", record,
                                                      ": length says ", len, " bytes, ",
                                                      remain - 4, " remain")));
    }
    std::string_view payload = data_.substr(pos_ + 4, len);
    pos_ += 4 + static_cast<uint64_t>(len);
    ++packets_;
    if (payload.empty()) {
      return Error(absl::DataLossError(absl::StrCat("empty packet at offset ", record)));
    }
    const uint8_t marker = static_cast<uint8_t>(payload[0]);
    if (marker == 0xFE && payload.size() < 9) {  // EOF: the dump ended
      ended_ = true;
      return false;
    }
    if (marker == 0xFF) {
      ByteCursor err(payload.substr(1));
      const uint16_t code = err.U16();
      std::string_view msg = err.Rest();
      if (!msg.empty() && msg[0] == '#') msg.remove_prefix(std::min<size_t>(6, msg.size()));
      return Error(absl::UnavailableError(absl::StrCat("ERR packet at offset ", record, ": ",
                                                       code, " ", AV(msg))));
    }
    if (marker != 0x00) {
      return Error(absl::DataLossError(absl::StrCat("packet at offset ", record,
                                                    " starts with 0x", absl::Hex(marker),
                                                    ", expected the 0x00 event marker")));
    }
    std::string_view event = payload.substr(1);
    const uint64_t event_offset = record + 4 + 1;
    auto h = ParseEventHeader(event);
    if (!h.ok()) return Error(Annotate(h.status(), absl::StrCat("event at offset ", event_offset)));
    if (h->event_size != event.size()) {
      return Error(absl::DataLossError(absl::StrCat(
          AV(EventTypeName(h->type)), " event at offset ", event_offset, ": header says ",
          h->event_size, " bytes, packet carries ", event.size())));
    }
    auto ev = framer_.Frame(event, event_offset);
    if (!ev.ok()) return Error(ev.status());
    if (!IsKnownEventType(ev->type())) {
      ++skipped_;
      continue;
    }
    *out = *ev;
    return true;
  }
}

}  // namespace binrelay::protocol
