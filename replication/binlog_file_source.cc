#include "replication/binlog_file_source.h"

#include "replication/binlog_file_bytes.h"

#include "absl/strings/str_cat.h"
#include "protocol/control_events.h"
#include "protocol/binlog_file_reader.h"
#include "protocol/byte_cursor.h"
#include "protocol/event_type.h"
#include "protocol/packet_capture_reader.h"
#include "protocol/status_macros.h"
#include "replication/stream_consumer.h"
#include "replication/transaction_boundary.h"

namespace binrelay::replication {
namespace {

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Tracks the end of the last complete transaction so a file that stops
// mid-transaction can be cut there.
class BoundaryTap {
 public:
  explicit BoundaryTap(StreamConsumer& consumer) : consumer_(consumer) {}
  absl::Status OnEvent(const protocol::EventView& ev, const protocol::FormatDescription& fde,
                       const BinlogPosition& end) {
    BR_ASSIGN_OR_RETURN(bool ends, boundary_.OnEvent(ev, fde, end));
    absl::Status s = consumer_.OnEvent({ev, fde, end, ends});
    return s.ok() ? s : Annotate(s, end.ToString());
  }
  void Finish() {
    if (boundary_.in_transaction()) consumer_.OnStreamRestart(boundary_.last_boundary());
  }

 private:
  StreamConsumer& consumer_;
  TransactionBoundary boundary_;
};

}  // namespace

absl::Status FeedBinlogFile(const std::string& path, StreamConsumer& consumer) {
  BR_ASSIGN_OR_RETURN(BinlogFileBytes bytes, BinlogFileBytes::Open(path));
  return FeedBinlogBytes(bytes.data(), path, consumer);
}

absl::Status FeedBinlogBytes(std::string_view data, const std::string& path,
                             StreamConsumer& consumer) {
  const std::string name = BaseName(path);
  BR_ASSIGN_OR_RETURN(protocol::BinlogFileReader reader,
                      protocol::BinlogFileReader::Open(data, path));
  BoundaryTap tap(consumer);
  protocol::EventView ev;
  BinlogPosition end{name, 0};
  const protocol::FormatDescription no_format;  // until the file's FDE
  while (true) {
    BR_ASSIGN_OR_RETURN(bool more, reader.Next(&ev));
    if (!more) break;
    end.offset = ev.offset + ev.header.event_size;
    BR_RETURN_IF_ERROR(tap.OnEvent(
        ev, reader.framer().has_format() ? reader.framer().format() : no_format, end));
  }
  tap.Finish();
  return absl::OkStatus();
}

absl::Status FeedPacketCapture(const std::string& path, StreamConsumer& consumer) {
  BR_ASSIGN_OR_RETURN(BinlogFileBytes bytes, BinlogFileBytes::Open(path));
  protocol::PacketCaptureReader reader(bytes.data(), path);
  protocol::FormatDescription no_format;
  BoundaryTap tap(consumer);
  std::string file;
  protocol::EventView ev;
  while (true) {
    BR_ASSIGN_OR_RETURN(bool more, reader.Next(&ev));
    if (!more) break;
    const protocol::FormatDescription& fde =
        reader.framer().has_format() ? reader.framer().format() : no_format;
    BinlogPosition end{file, ev.header.artificial() ? 0 : ev.header.log_pos};
    if (ev.type() == protocol::kRotateEvent) {
      auto rotate = protocol::ParseRotate(ev);
      if (!rotate.ok()) return Annotate(rotate.status(), absl::StrCat("ROTATE in ", path));
      if (end.offset != 0) BR_RETURN_IF_ERROR(tap.OnEvent(ev, fde, end));
      file = std::string(rotate->next_file);
      continue;
    }
    BR_RETURN_IF_ERROR(tap.OnEvent(ev, fde, end));
  }
  tap.Finish();
  return absl::OkStatus();
}

}  // namespace binrelay::replication
