#include "replication/binlog_file_source.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
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

absl::StatusOr<std::string> Gunzip(const std::string& path, const std::string& data) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
    return absl::InternalError("zlib inflateInit2 failed");
  }
  std::string out;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    size_t old = out.size();
    out.resize(old + (1 << 20));
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + old);
    zs.avail_out = 1 << 20;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.resize(old + (1 << 20) - zs.avail_out);
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) {
    return absl::DataLossError(absl::StrCat("corrupt gzip data in ", path, " (zlib error ", rc,
                                            ")"));
  }
  return out;
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

absl::StatusOr<std::string> ReadBinlogFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot open binlog file ", path, ": ", std::strerror(errno)));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string data = std::move(ss).str();
  if (data.size() >= 2 && static_cast<uint8_t>(data[0]) == 0x1F &&
      static_cast<uint8_t>(data[1]) == 0x8B) {
    return Gunzip(path, data);
  }
  return data;
}

absl::Status FeedBinlogFile(const std::string& path, StreamConsumer& consumer) {
  BR_ASSIGN_OR_RETURN(std::string data, ReadBinlogFileBytes(path));
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
  BR_ASSIGN_OR_RETURN(std::string data, ReadBinlogFileBytes(path));
  protocol::PacketCaptureReader reader(data, path);
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
      protocol::ByteCursor c(ev.body);
      c.Skip(8);
      std::string_view next = c.Rest();
      if (!c.ok() || next.empty()) return c.status(absl::StrCat("ROTATE in ", path));
      if (end.offset != 0) BR_RETURN_IF_ERROR(tap.OnEvent(ev, fde, end));
      file = std::string(next);
      continue;
    }
    BR_RETURN_IF_ERROR(tap.OnEvent(ev, fde, end));
  }
  tap.Finish();
  return absl::OkStatus();
}

}  // namespace binrelay::replication
