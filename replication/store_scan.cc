#include "replication/store_scan.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "protocol/errno_status.h"
#include "protocol/binlog_file_reader.h"
#include "protocol/event_framer.h"
#include "protocol/event_type.h"
#include "protocol/gtid_events.h"
#include "protocol/status_macros.h"
#include "replication/gtid_set.h"

namespace binrelay::replication {
namespace {

constexpr size_t kChunk = 1 << 20;
// No real FDE comes near this (MariaDB's is ~250 bytes); a larger size field
// is corruption, not a reason to allocate.
constexpr uint32_t kMaxFormatEvent = 64 * 1024;

// Sequential reads of one file through a window buffer; views stay valid
// until the next Read.
class ChunkReader {
 public:
  ChunkReader(std::string path, uint64_t end, size_t chunk = kChunk)
      : path_(std::move(path)), end_(end), chunk_(chunk) {}
  ~ChunkReader() {
    if (fd_ >= 0) ::close(fd_);
  }
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  absl::Status Open() {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      return absl::NotFoundError(absl::StrCat("cannot open ", path_, ": ", std::strerror(errno)));
    }
    return absl::OkStatus();
  }

  // Bytes [off, off + n); OutOfRange if they reach past the end.
  absl::StatusOr<std::string_view> Read(uint64_t off, size_t n) {
    if (off > end_ || n > end_ - off) {
      return absl::OutOfRangeError(absl::StrCat(path_, ": ", n, " bytes at offset ", off,
                                                " reach past its end at ", end_));
    }
    if (off < buf_off_ || off + n > buf_off_ + buf_.size()) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(std::max(n, chunk_), end_ - off));
      buf_.resize(want);
      size_t got = 0;
      while (got < want) {
        ssize_t r = ::pread(fd_, buf_.data() + got, want - got, static_cast<off_t>(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
          return ErrnoStatus(errno, absl::StrCat("cannot read ", path_, " at offset ", off + got));
        }
        if (r == 0) {
          return absl::OutOfRangeError(absl::StrCat(path_, " ends at ", off + got,
                                                    " before the expected ", end_));
        }
        got += static_cast<size_t>(r);
      }
      buf_off_ = off;
    }
    return std::string_view(buf_).substr(off - buf_off_, n);
  }

  uint64_t end() const { return end_; }

 private:
  std::string path_;
  uint64_t end_;
  size_t chunk_;
  int fd_ = -1;
  std::string buf_;
  uint64_t buf_off_ = 0;
};

absl::StatusOr<uint64_t> FileSize(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  off_t size = ::lseek(fd, 0, SEEK_END);
  ::close(fd);
  if (size < 0) return absl::UnknownError(absl::StrCat("cannot size ", path));
  return static_cast<uint64_t>(size);
}

absl::Status CheckMagic(ChunkReader& r, const std::string& path) {
  BR_ASSIGN_OR_RETURN(std::string_view magic, r.Read(0, protocol::kBinlogMagic.size()));
  if (magic != protocol::kBinlogMagic) {
    return absl::DataLossError(absl::StrCat(path, " does not start with the binlog magic"));
  }
  return absl::OkStatus();
}

// Last GTID per domain, in the order given (MariaDB's slave_connection_state
// load/update: a later entry of a domain replaces an earlier one).
struct DomainPositions {
  MariaGtidPosition pos;
  void Load(const protocol::MariaGtidList& list) {
    pos = MariaGtidPosition();
    for (const auto& e : list.gtids) pos.Update({e.domain_id, e.server_id, e.seq_no});
  }
};

}  // namespace

absl::StatusOr<protocol::FormatDescription> ReadStoredFormat(const std::string& path) {
  BR_ASSIGN_OR_RETURN(uint64_t size, FileSize(path));
  ChunkReader r(path, size, 4096);  // an FDE is a few hundred bytes
  BR_RETURN_IF_ERROR(r.Open());
  BR_RETURN_IF_ERROR(CheckMagic(r, path));
  const uint64_t at = protocol::kBinlogMagic.size();
  BR_ASSIGN_OR_RETURN(std::string_view head, r.Read(at, protocol::kEventHeaderLen));
  BR_ASSIGN_OR_RETURN(protocol::EventHeader h, protocol::ParseEventHeader(head));
  if (h.type != protocol::kFormatDescriptionEvent && h.type != protocol::kStartEventV3) {
    return absl::DataLossError(
        absl::StrCat(path, ":4 holds a ", AV(protocol::EventTypeName(h.type)),
                     " event, not the FORMAT_DESCRIPTION a binlog opens with"));
  }
  if (h.event_size > kMaxFormatEvent) {
    return absl::DataLossError(absl::StrCat(path, ":4: FORMAT_DESCRIPTION of ", h.event_size,
                                            " bytes is not plausible (corrupt header)"));
  }
  BR_ASSIGN_OR_RETURN(std::string_view event, r.Read(at, h.event_size));
  auto fd = h.type == protocol::kFormatDescriptionEvent ? protocol::ParseFormatDescription(event)
                                                        : protocol::ParseStartEventV3(event);
  if (!fd.ok()) return Annotate(fd.status(), absl::StrCat(path, ":4"));
  return fd;
}

absl::StatusOr<std::optional<std::string>> MariaGtidPosAt(const std::string& path,
                                                          uint64_t offset,
                                                          uint64_t readable_end) {
  const uint64_t start = protocol::kBinlogMagic.size();
  offset = std::max(offset, start);
  if (offset > readable_end) return std::optional<std::string>();
  ChunkReader r(path, readable_end);
  BR_RETURN_IF_ERROR(r.Open());
  BR_RETURN_IF_ERROR(CheckMagic(r, path));
  protocol::EventFramer framer;
  DomainPositions state;
  bool found_format = false;
  bool found_list = false;
  bool valid = false;
  uint64_t cur = start;
  while (true) {
    if (cur == offset) valid = true;
    // As MariaDB: the state needs the file's GTID_LIST even for offset 4.
    if (found_format && found_list && cur >= offset) break;
    if (cur == r.end()) break;  // MariaDB: a read error, NULL
    auto head = r.Read(cur, protocol::kEventHeaderLen);
    if (!head.ok()) {
      return absl::DataLossError(absl::StrCat(path, ":", cur, ": torn event header before the ",
                                              "readable end ", r.end()));
    }
    auto parsed = protocol::ParseEventHeader(*head);
    if (!parsed.ok()) return Annotate(parsed.status(), absl::StrCat(path, ":", cur));
    const protocol::EventHeader& h = *parsed;
    if (h.event_size > r.end() - cur) {
      return absl::DataLossError(absl::StrCat(path, ":", cur, ": ",
                                              AV(protocol::EventTypeName(h.type)), " event of ",
                                              h.event_size, " bytes runs past the readable end ",
                                              r.end()));
    }
    const uint8_t type = h.type;
    const bool needed = type == protocol::kFormatDescriptionEvent ||
                        type == protocol::kStartEventV3 || type == protocol::kGtidListEvent ||
                        type == protocol::kMariaGtidEvent;
    if (!found_format && type != protocol::kFormatDescriptionEvent &&
        type != protocol::kStartEventV3) {
      return absl::DataLossError(
          absl::StrCat(path, ":", cur, ": ", AV(protocol::EventTypeName(type)),
                       " event before the FORMAT_DESCRIPTION"));
    }
    if (needed) {
      BR_ASSIGN_OR_RETURN(std::string_view bytes, r.Read(cur, h.event_size));
      auto ev = framer.Frame(bytes, cur);
      if (!ev.ok()) return Annotate(ev.status(), path);
      if (type == protocol::kFormatDescriptionEvent || type == protocol::kStartEventV3) {
        if (found_format) {
          return absl::DataLossError(
              absl::StrCat(path, ":", cur, ": a second FORMAT_DESCRIPTION in one binlog file"));
        }
        found_format = true;
      } else if (type == protocol::kGtidListEvent) {
        if (found_list) {
          return absl::DataLossError(
              absl::StrCat(path, ":", cur, ": a second GTID_LIST in one binlog file"));
        }
        BR_ASSIGN_OR_RETURN(protocol::MariaGtidList list, protocol::ParseMariaGtidList(*ev));
        state.Load(list);
        found_list = true;
      } else if (!found_list) {
        return std::optional<std::string>("");  // GTID before any GTID_LIST: old binlog
      } else {
        BR_ASSIGN_OR_RETURN(protocol::MariaGtid g, protocol::ParseMariaGtid(*ev));
        state.pos.Update({g.domain_id, g.server_id, g.seq_no});
      }
    } else if (!found_list && type != protocol::kRotateEvent && type != protocol::kStopEvent &&
               type != protocol::kBinlogCheckpointEvent) {
      // MariaDB: any other event before a GTID_LIST means an old binlog
      // without GTIDs (and every MySQL binlog): empty state.
      return std::optional<std::string>("");
    }
    cur += h.event_size;
  }
  if (!valid) return std::optional<std::string>();
  return std::optional<std::string>(state.pos.ToString());
}

}  // namespace binrelay::replication
