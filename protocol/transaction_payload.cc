#include "protocol/transaction_payload.h"

#include <memory>

#include <zstd.h>

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/event_type.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

enum PayloadField : uint64_t { kEndMark = 0, kPayloadSize = 1, kCompressionType = 2, kUncompressedSize = 3 };

std::string Where(uint64_t offset) {
  return absl::StrCat("TRANSACTION_PAYLOAD event at offset ", offset);
}

}  // namespace

absl::StatusOr<TransactionPayload> ParseTransactionPayload(const EventView& ev) {
  if (ev.type() != kTransactionPayloadEvent) {
    return absl::InvalidArgumentError(absl::StrCat(AV(EventTypeName(ev.type())), " at offset ",
                                                   ev.offset, " is not TRANSACTION_PAYLOAD"));
  }
  TransactionPayload tp;
  tp.event_offset = ev.offset;
  ByteCursor c(ev.body);  // TLVs start right after the common header (codecs/binary.cpp)
  bool have_size = false;
  while (c.ok()) {
    const uint64_t type = c.Lenenc();
    if (!c.ok() || type == kEndMark) break;
    std::string_view value = c.Bytes(c.Lenenc());
    ByteCursor v(value);
    const uint64_t n = v.Lenenc();
    switch (type) {
      case kPayloadSize: tp.payload_size = n; have_size = true; break;
      case kCompressionType: tp.compression = n; break;
      case kUncompressedSize: tp.uncompressed_size = n; break;
      default: continue;  // unknown fields are skipped by length
    }
    if (!v.ok()) c.Fail();
  }
  if (!c.ok()) {
    return absl::DataLossError(absl::StrCat(Where(ev.offset), ": header fields truncated at body byte ",
                                            c.position()));
  }
  if (!have_size || tp.payload_size != c.remaining()) {
    return absl::DataLossError(absl::StrCat(Where(ev.offset), ": payload size ", tp.payload_size,
                                            " but ", c.remaining(), " bytes follow the header"));
  }
  tp.payload = c.Rest();
  return tp;
}

absl::Status DecompressTransactionPayload(const TransactionPayload& tp, std::string* out,
                                          size_t max_size) {
  out->clear();
  if (tp.compression == kPayloadCompressionNone) {
    out->assign(tp.payload);
    return absl::OkStatus();
  }
  if (tp.compression != kPayloadCompressionZstd) {
    return absl::UnimplementedError(absl::StrCat(Where(tp.event_offset), ": compression type ",
                                                 tp.compression, " is unknown"));
  }
  if (tp.uncompressed_size > max_size) {
    return absl::DataLossError(absl::StrCat(Where(tp.event_offset), ": uncompressed size ",
                                            tp.uncompressed_size, " above the ", max_size,
                                            "-byte limit"));
  }
  // One decompression context per thread, reset for each payload (creating
  // one per transaction cost an allocation of ~100 KiB each time).
  struct FreeDCtx {
    void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
  };
  thread_local std::unique_ptr<ZSTD_DCtx, FreeDCtx> cached;
  if (cached == nullptr) cached.reset(ZSTD_createDCtx());
  ZSTD_DCtx* dctx = cached.get();
  if (dctx == nullptr) return absl::ResourceExhaustedError("ZSTD_createDCtx failed");
  ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
  out->resize(tp.uncompressed_size > 0 ? tp.uncompressed_size : 4 * tp.payload.size() + 1024);
  ZSTD_inBuffer in{tp.payload.data(), tp.payload.size(), 0};
  size_t produced = 0;
  absl::Status status;
  // Several frames may follow each other; loop until input is consumed.
  while (in.pos < in.size) {
    if (produced == out->size()) {
      if (tp.uncompressed_size > 0 || out->size() >= max_size) {
        status = absl::DataLossError(absl::StrCat(Where(tp.event_offset),
                                                  ": payload inflates beyond the declared ",
                                                  tp.uncompressed_size, " bytes"));
        break;
      }
      out->resize(std::min(max_size, out->size() * 2));
    }
    ZSTD_outBuffer ob{out->data(), out->size(), produced};
    const size_t rc = ZSTD_decompressStream(dctx, &ob, &in);
    produced = ob.pos;
    if (ZSTD_isError(rc)) {
      status = absl::DataLossError(absl::StrCat(Where(tp.event_offset), ": zstd: ",
                                                ZSTD_getErrorName(rc)));
      break;
    }
    if (rc != 0 && in.pos == in.size && produced < out->size()) {
      status = absl::DataLossError(absl::StrCat(Where(tp.event_offset), ": zstd frame truncated"));
      break;
    }
  }
  // A context keeps buffers as large as the largest window it has seen;
  // beyond a few MiB it is not worth keeping for the thread's lifetime.
  if (!status.ok() || ZSTD_sizeof_DCtx(dctx) > (size_t{8} << 20)) cached.reset();
  if (status.ok() && tp.uncompressed_size > 0 && produced != tp.uncompressed_size) {
    status = absl::DataLossError(absl::StrCat(Where(tp.event_offset), ": inflated ", produced,
                                              " bytes, header declares ", tp.uncompressed_size));
  }
  if (!status.ok()) {
    out->clear();
    return status;
  }
  out->resize(produced);
  return absl::OkStatus();
}

absl::StatusOr<bool> PayloadEventIterator::Next(EventView* out) {
  if (pos_ == data_.size()) return false;
  // Built only on error: this runs for every inner event.
  auto where = [&] {
    return absl::StrCat(Where(outer_offset_), ": inner event at payload byte ", pos_);
  };
  const uint64_t remain = data_.size() - pos_;
  auto h = ParseEventHeader(data_.substr(pos_));
  if (!h.ok()) return Annotate(h.status(), where());
  if (h->event_size > remain) {
    return absl::DataLossError(absl::StrCat(where(), ": header says ", h->event_size, " bytes, ",
                                            remain, " remain"));
  }
  if (!IsKnownEventType(h->type)) {
    return absl::UnimplementedError(absl::StrCat(where(), ": unknown inner event type ", h->type));
  }
  auto ev = MakeEventView(data_.substr(pos_, h->event_size), /*has_checksum=*/false, pos_);
  if (!ev.ok()) return Annotate(ev.status(), where());
  pos_ += h->event_size;
  *out = *ev;
  return true;
}

}  // namespace binrelay::protocol
