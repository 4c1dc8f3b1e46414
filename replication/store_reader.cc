#include "replication/store_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "protocol/event_type.h"
#include "protocol/status_macros.h"
#include "replication/gtid_state.h"
#include "replication/store_era.h"

namespace binrelay::replication {
namespace {

std::string Holdings(const std::vector<StoreFileEntry>& files) {
  if (files.empty()) return "the store is empty";
  return absl::StrCat("the store holds ", files.front().name, " to ", files.back().name);
}

}  // namespace

StoreReader::~StoreReader() {
  Unmap();
  if (fd_ >= 0) ::close(fd_);
}

void StoreReader::Unmap() {
  if (map_ != nullptr) ::munmap(map_, map_len_);
  map_ = nullptr;
  map_len_ = 0;
}

absl::StatusOr<std::unique_ptr<StoreReader>> StoreReader::Open(const StoreReadSide* store,
                                                               const BinlogPosition& start) {
  std::vector<StoreFileEntry> files = store->CommittedFiles();
  auto it = std::find_if(files.begin(), files.end(),
                         [&](const StoreFileEntry& f) { return f.name == start.file; });
  if (it == files.end() && !files.empty() &&
      CompareBinlogNames(start.file, files.front().name) < 0) {
    return absl::NotFoundError(absl::StrCat(
        "binlog '", start.file, "' was purged from binrelay's store (", Holdings(files),
        "; [store] retention_hours, retention_bytes and retention_hard_cap_bytes decide what "
        "is kept): point the replica at a stored file, or reseed it"));
  }
  if (it == files.end()) {
    return absl::NotFoundError(absl::StrCat("binlog '", start.file,
                                            "' is not in binrelay's store (", Holdings(files),
                                            "); start from a stored file"));
  }
  if (start.offset < 4 || start.offset > it->size) {
    return absl::OutOfRangeError(absl::StrCat(
        "position ", start.offset, " is outside binlog '", start.file, "' (stored size ",
        it->size, "); start at an event boundary between 4 and the end of the file"));
  }
  std::unique_ptr<StoreReader> r(new StoreReader(store));
  BR_RETURN_IF_ERROR(r->OpenFile(start.file));
  r->position_ = start;
  return r;
}

absl::Status StoreReader::OpenFile(const std::string& name) {
  std::string path = absl::StrCat(store_->dir(), "/", name);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat("cannot open stored binlog ", path, ": ",
                                            std::strerror(errno),
                                            " (purged while a dump needed it?)"));
  }
  Unmap();
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  limit_ = 0;
  floor_ = SourceGtids();
  skipping_ = false;
  if (const StoredFileName n = SplitStoredName(name); n.era > 0) {
    BR_ASSIGN_OR_RETURN(EraEntry entry, ReadEraEntry(store_->dir(), n.era));
    floor_ = std::move(entry.stored);  // any file of the era may repeat stored ones
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> StoreReader::SkipRepeat(const protocol::EventView& event) {
  if (!skipping_) {
    BR_ASSIGN_OR_RETURN(bool held, FloorHolds(floor_, event));
    if (!held) return false;
    skipping_ = true;
    ++repeats_skipped_;
    skip_boundary_.Reset(position_);
  }
  const BinlogPosition end{position_.file, event.offset + event.header.event_size};
  BR_ASSIGN_OR_RETURN(bool ends, skip_boundary_.OnEvent(event, format_, end));
  if (ends) skipping_ = false;
  return true;
}

void StoreReader::RefreshLimit(std::string* next_file) {
  next_file->clear();
  CommittedEnd end = store_->committed();
  seen_sequence_ = end.sequence;
  if (end.position.file.empty()) return;
  int cmp = CompareBinlogNames(position_.file, end.position.file);
  if (cmp == 0) {
    limit_ = end.position.offset;
  } else if (cmp < 0) {
    // An older file is closed: all of it is committed.
    std::vector<StoreFileEntry> files = store_->CommittedFiles();
    for (size_t i = 0; i < files.size(); ++i) {
      if (files[i].name != position_.file) continue;
      limit_ = files[i].size;
      if (i + 1 < files.size()) *next_file = files[i + 1].name;
      return;
    }
  }
}

absl::Status StoreReader::Load(uint64_t offset, size_t n) {
  if (offset + n <= map_len_) return absl::OkStatus();
  // Map everything readable now, so the next events need no call at all.
  struct stat st;
  if (::fstat(fd_, &st) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot stat stored binlog ", position_.file, ": ",
                                               std::strerror(errno)));
  }
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  if (offset + n > file_size) {
    return absl::DataLossError(absl::StrCat("stored binlog ", position_.file, " ends at ",
                                            file_size, " inside an event starting at ", offset));
  }
  // Never past the file's end: a page wholly beyond it would fault (SIGBUS).
  // MAP_POPULATE sets up the page tables at once (the pages are in the page
  // cache): a catching-up replica then takes no fault per page.
  const size_t want = static_cast<size_t>(std::min(file_size, std::max(offset + n, limit_)));
  void* m = map_ == nullptr ? ::mmap(nullptr, want, PROT_READ, MAP_SHARED | MAP_POPULATE, fd_, 0)
                            : ::mremap(map_, map_len_, want, MREMAP_MAYMOVE);
  if (m == MAP_FAILED) {
    int err = errno;
    Unmap();
    return absl::UnavailableError(absl::StrCat("cannot map stored binlog ", position_.file, " (",
                                               want, " bytes): ", std::strerror(err)));
  }
  map_ = static_cast<char*>(m);
  map_len_ = want;
  return absl::OkStatus();
}

absl::StatusOr<protocol::EventView> StoreReader::ReadAt(uint64_t offset) {
  BR_RETURN_IF_ERROR(Load(offset, protocol::kEventHeaderLen));
  BR_ASSIGN_OR_RETURN(protocol::EventHeader h,
                      protocol::ParseEventHeader(std::string_view(Data(offset), protocol::kEventHeaderLen)));
  const uint64_t end = offset + h.event_size;
  if (h.log_pos != 0 && h.log_pos != static_cast<uint32_t>(end)) {
    return absl::DataLossError(absl::StrCat(
        "no event starts at ", position_.file, ":", offset, " (the header there ends at ",
        h.log_pos, ", not ", end, "): start a dump at an event boundary"));
  }
  if (limit_ != 0 && end > limit_) {
    return absl::DataLossError(absl::StrCat("event at ", position_.file, ":", offset, " of ",
                                            h.event_size, " bytes runs past the stored end ",
                                            limit_));
  }
  BR_RETURN_IF_ERROR(Load(offset, h.event_size));
  const bool is_fde = h.type == protocol::kFormatDescriptionEvent;
  const bool crc = is_fde ? false : format_.events_have_crc();
  std::string_view bytes(Data(offset), h.event_size);
  if (is_fde) {
    BR_ASSIGN_OR_RETURN(format_, protocol::ParseFormatDescription(bytes));
    return protocol::MakeEventView(bytes, format_.checksum_aware, offset);
  }
  return protocol::MakeEventView(bytes, crc, offset);
}

absl::StatusOr<protocol::EventView> StoreReader::PeekAt(uint64_t offset) {
  if (limit_ == 0) {
    std::string ignored;
    RefreshLimit(&ignored);
  }
  return ReadAt(offset);
}

absl::StatusOr<StoreReader::Step> StoreReader::Next(protocol::EventView* event) {
  while (true) {
    BR_ASSIGN_OR_RETURN(Step step, NextStored(event));
    if (step != Step::kEvent || !floor_.known()) return step;
    BR_ASSIGN_OR_RETURN(bool skip, SkipRepeat(*event));
    if (!skip) return step;
  }
}

absl::StatusOr<StoreReader::Step> StoreReader::NextStored(protocol::EventView* event) {
  if (position_.offset + protocol::kEventHeaderLen > limit_) {
    std::string next;
    RefreshLimit(&next);
    if (position_.offset >= limit_) {
      if (next.empty()) return Step::kCaughtUp;
      if (position_.offset != limit_) {
        return absl::DataLossError(absl::StrCat("dump position ", position_.ToString(),
                                                " is past the end of the closed file (",
                                                limit_, " bytes)"));
      }
      BR_RETURN_IF_ERROR(OpenFile(next));
      finished_ = std::move(position_);
      position_ = BinlogPosition{next, 4};
      return Step::kNextFile;
    }
  }
  BR_ASSIGN_OR_RETURN(*event, ReadAt(position_.offset));
  position_.offset += event->header.event_size;
  return Step::kEvent;
}

}  // namespace binrelay::replication
