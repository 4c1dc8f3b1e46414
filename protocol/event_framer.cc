#include "protocol/event_framer.h"

#include "absl/strings/str_cat.h"
#include "protocol/checksum.h"
#include "protocol/event_type.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

bool FollowsClientChecksum(const EventHeader& h) {
  if (h.type == kHeartbeatEvent || h.type == kHeartbeatEventV2) return true;
  return h.type == kRotateEvent && h.artificial();
}

}  // namespace

absl::StatusOr<bool> EventFramer::HasChecksum(const EventHeader& h, std::string_view event,
                                              uint64_t offset) {
  if (h.type == kFormatDescriptionEvent) {
    auto fd = ParseFormatDescription(event);
    if (!fd.ok()) return Annotate(fd.status(), absl::StrCat("event at offset ", offset));
    const bool aware = fd->checksum_aware;
    format_ = std::move(*fd);
    return aware;
  }
  if (h.type == kStartEventV3) {
    auto fd = ParseStartEventV3(event);
    if (!fd.ok()) return Annotate(fd.status(), absl::StrCat("event at offset ", offset));
    format_ = std::move(*fd);
    return false;
  }
  if (!format_.has_value() || FollowsClientChecksum(h)) {
    switch (options_.out_of_band_checksum) {
      case OutOfBandChecksum::kCrc32: return true;
      case OutOfBandChecksum::kOff: return false;
      case OutOfBandChecksum::kDetect: return EventCrcMatches(event);
    }
  }
  return format_->events_have_crc();
}

absl::StatusOr<EventView> EventFramer::Frame(std::string_view event, uint64_t offset) {
  auto header = ParseEventHeader(event);
  if (!header.ok()) return Annotate(header.status(), absl::StrCat("event at offset ", offset));
  const EventHeader& h = *header;
  if (encrypted_ && h.type != kFormatDescriptionEvent) {
    return absl::FailedPreconditionError(absl::StrCat(
        "event at offset ", offset,
        " follows START_ENCRYPTION: the file is encrypted; read it through the server's dump "
        "thread (which decrypts) instead"));
  }
  if (!IsKnownEventType(h.type) && !h.ignorable()) {
    // Built only on this error path. The FDE names the release that wrote it.
    return absl::UnimplementedError(absl::StrCat(
        "unknown event type ", h.type, " (", h.event_size, " bytes) at offset ", offset,
        " in a binlog written by ",
        format_.has_value() && !format_->server_version.empty()
            ? absl::StrCat("server ", format_->server_version)
            : std::string("an unknown server (no FORMAT_DESCRIPTION yet)"),
        ", without the IGNORABLE flag: binrelay cannot skip it safely and stops before it "
        "(nothing from this event on is stored or passed on); run a binrelay that knows this "
        "release's events"));
  }
  BR_ASSIGN_OR_RETURN(bool has_crc, HasChecksum(h, event, offset));
  // An FDE declaring checksums OFF still carries a CRC field, but servers
  // do not keep it valid: MariaDB's dump thread rewrites the FDE's header
  // (log_pos, flags) when a dump starts mid-file and refreshes the CRC only
  // when checksums are on. MySQL's reader likewise checks an FDE's own CRC
  // only when that FDE says CRC32.
  const bool fde_without_checksums = h.type == kFormatDescriptionEvent &&
                                     format_.has_value() &&
                                     format_->checksum_alg != ChecksumAlg::kCrc32;
  if (has_crc && options_.verify_checksums && !fde_without_checksums) {
    BR_RETURN_IF_ERROR(VerifyEventChecksum(event, offset));
    ++crc_checked_;
  }
  auto view = MakeEventView(event, has_crc, offset);
  if (!view.ok()) return view.status();
  if (h.type == kFormatDescriptionEvent) encrypted_ = false;
  if (h.type == kStartEncryptionEvent) encrypted_ = true;
  return view;
}

}  // namespace binrelay::protocol
