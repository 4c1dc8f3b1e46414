#include "replication/store_recovery.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "protocol/control_events.h"
#include "protocol/binlog_file_reader.h"
#include "protocol/byte_cursor.h"
#include "protocol/event_type.h"
#include "protocol/gtid_events.h"
#include "protocol/errno_status.h"
#include "protocol/status_macros.h"
#include "replication/binlog_file_bytes.h"
#include "replication/gtid_state.h"
#include "replication/transaction_boundary.h"
#include "spdlog/spdlog.h"

namespace binrelay::replication {
namespace {

// The FDE's flags live at file offset 4 + 17 (magic, then the common header).
constexpr off_t kFdeFlagsOffset = 4 + 17;

absl::Status CutAndMark(const std::string& path, const RecoveredFile& r, uint64_t old_size,
                        uint8_t fde_flags_lo, bool durable) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "cannot open for recovery", path);
  absl::Status s;
  if (r.size != old_size && ::ftruncate(fd, static_cast<off_t>(r.size)) != 0) {
    s = ErrnoStatus(errno, "cannot truncate", path);
  }
  // A closed file is byte-identical to the source's, whose server cleared
  // BINLOG_IN_USE on close (the crash may have come between our ROTATE
  // write and that one-byte update).
  if (s.ok() && r.closed && (fde_flags_lo & protocol::kFlagBinlogInUse) != 0) {
    char lo = static_cast<char>(fde_flags_lo & ~protocol::kFlagBinlogInUse);
    if (::pwrite(fd, &lo, 1, kFdeFlagsOffset) != 1) s = ErrnoStatus(errno, "cannot update FDE of", path);
  }
  if (s.ok() && durable && ::fdatasync(fd) != 0) s = ErrnoStatus(errno, "cannot fdatasync", path);
  ::close(fd);
  return s;
}

}  // namespace

absl::StatusOr<RecoveredFile> RecoverBinlogFile(const std::string& path, bool durable,
                                                const SourceGtids& floor) {
  BR_ASSIGN_OR_RETURN(BinlogFileBytes bytes, BinlogFileBytes::Open(path));
  const std::string_view data = bytes.data();
  RecoveredFile r;
  auto reader = protocol::BinlogFileReader::Open(data, path);
  if (reader.ok()) {
    TransactionBoundary boundary;
    GtidState gtids;
    gtids.SetFloor(floor);
    GtidState last_kept_gtids = gtids;
    uint8_t last_type = 0;
    uint8_t kept_type = 0;
    std::optional<std::string> rotate_to;
    protocol::EventView ev;
    while (true) {
      auto more = reader->Next(&ev);
      if (!more.ok()) {
        spdlog::warn("store recovery: {}; cutting {} there", more.status().ToString(), path);
        break;
      }
      if (!*more) break;
      if (!reader->framer().has_format()) break;  // no FDE: nothing to keep
      BinlogPosition end{path, ev.offset + ev.header.event_size};
      auto ends = boundary.OnEvent(ev, reader->framer().format(), end);
      if (!ends.ok()) break;
      if (!gtids.OnEvent(ev).ok()) break;
      if (ev.type() == protocol::kGtidListEvent || ev.type() == protocol::kPreviousGtidsEvent) {
        if (!r.first_gtids.known() && ev.offset < 1024 * 1024) {
          if (auto first = GtidsOfStateEvent(ev); first.ok()) {
            r.first_gtids = FloorMerged(floor, *first);
          }
        }
      }
      last_type = ev.type();
      if (last_type == protocol::kRotateEvent) {
        // Unreadable: the file is not taken as closed by it (r.closed).
        if (auto rotate = protocol::ParseRotate(ev); rotate.ok()) {
          rotate_to = std::string(rotate->next_file);
        }
      }
      if (*ends) gtids.Commit();
      if (!boundary.in_transaction()) {
        r.size = end.offset;
        kept_type = last_type;
        last_kept_gtids = gtids;
      }
    }
    r.gtids = std::move(last_kept_gtids);
    r.closed = kept_type == protocol::kRotateEvent || kept_type == protocol::kStopEvent;
    if (kept_type == protocol::kRotateEvent) r.rotate_to = rotate_to;
  }
  r.truncated_bytes = data.size() - r.size;
  if (r.size == 0) {
    if (::unlink(path.c_str()) != 0) return ErrnoStatus(errno, "cannot remove unusable file", path);
    spdlog::warn("store recovery: removed {} ({} bytes, no complete FDE)", path, data.size());
    return r;
  }
  uint8_t flags_lo = data.size() > static_cast<size_t>(kFdeFlagsOffset)
                         ? static_cast<uint8_t>(data[kFdeFlagsOffset])
                         : 0;
  BR_RETURN_IF_ERROR(CutAndMark(path, r, data.size(), flags_lo, durable));
  if (r.truncated_bytes > 0) {
    spdlog::warn("store recovery: cut {} bytes after the last complete transaction of {} "
                 "(now {} bytes)", r.truncated_bytes, path, r.size);
  }
  return r;
}

}  // namespace binrelay::replication
