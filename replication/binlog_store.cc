#include "replication/binlog_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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
#include "replication/store_recovery.h"
#include "spdlog/spdlog.h"

namespace binrelay::replication {
namespace {

constexpr size_t kFdeFlagsOffset = 4 + 17;  // magic + the flags' place in the header

// Events that never belong to a transaction: after one of them, outside a
// transaction, the stream may resume (TransactionBoundary agrees).
bool IsOutsideTransaction(uint8_t type) {
  switch (type) {
    case protocol::kFormatDescriptionEvent:
    case protocol::kStartEventV3:
    case protocol::kRotateEvent:
    case protocol::kStopEvent:
    case protocol::kPreviousGtidsEvent:
    case protocol::kGtidListEvent:
    case protocol::kBinlogCheckpointEvent:
    case protocol::kStartEncryptionEvent:
    case protocol::kIncidentEvent:
      return true;
    default:
      return false;
  }
}

// The server_id in the FDE of the binlog file at `path` (0: none readable).
uint32_t ReadFdeServerId(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char header[protocol::kEventHeaderLen];
  const ssize_t n = ::pread(fd, header, sizeof header, protocol::kBinlogMagic.size());
  ::close(fd);
  if (n != static_cast<ssize_t>(sizeof header)) return 0;
  auto h = protocol::ParseEventHeader(std::string_view(header, sizeof header));
  return h.ok() && h->type == protocol::kFormatDescriptionEvent ? h->server_id : 0;
}
}  // namespace

BinlogStore::BinlogStore(std::string dir, BinlogStoreOptions options)
    : dir_(std::move(dir)), options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<BinlogStore>> BinlogStore::Open(const std::string& dir,
                                                               BinlogStoreOptions options) {
  if (dir.empty()) return absl::InvalidArgumentError("store directory is empty");
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, absl::StrCat("cannot create store directory ", dir));
  }
  std::unique_ptr<BinlogStore> store(new BinlogStore(dir, std::move(options)));
  {
    absl::MutexLock l(&store->mu_);
    BR_RETURN_IF_ERROR(Annotate(store->LoadLocked(), absl::StrCat("opening store ", dir)));
  }
  store->flusher_ = std::thread([s = store.get()] { s->FlusherLoop(); });
  return store;
}

BinlogStore::~BinlogStore() {
  absl::Status s = Close();
  if (!s.ok()) spdlog::error("closing store {}: {}", dir_, s.ToString());
}

absl::Status BinlogStore::LoadLocked() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buf_.clear();
  state_ = FileState::kNone;
  rotate_to_.reset();
  in_txn_ = false;
  size_ = safe_offset_ = buf_offset_ = 0;
  gtids_ = GtidState();
  era_ = 0;
  pending_era_.reset();
  BR_ASSIGN_OR_RETURN(std::vector<StoreFileEntry> files, ListStoreFiles(dir_));
  auto index = ReadStoreIndex(dir_);
  if (!index.ok() && !absl::IsNotFound(index.status())) {
    spdlog::warn("{}; rebuilding the index from the files", index.status().ToString());
  }
  // Only the newest file can hold a torn tail; a file with nothing usable is
  // removed and the one before it becomes the newest.
  std::optional<RecoveredFile> last;
  while (!files.empty()) {
    // An era's files may repeat transactions stored before it: the GTID
    // state starts from the era's entry (GtidState::SetFloor).
    BR_ASSIGN_OR_RETURN(SourceGtids floor, EraFloor(files.back().name));
    BR_ASSIGN_OR_RETURN(RecoveredFile r,
                        RecoverBinlogFile(PathOf(files.back().name), durable(), floor));
    if (r.size > 0) {
      last = std::move(r);
      break;
    }
    files.pop_back();
  }
  for (StoreFileEntry& f : files) {
    bool found = false;
    if (index.ok()) {
      for (const StoreFileEntry& e : *index) {
        if (e.name == f.name) {
          f.first_gtids = e.first_gtids;
          found = true;
        }
      }
    }
    if (!found) {
      // As readers see the file: over its era's floor.
      BR_ASSIGN_OR_RETURN(SourceGtids opening, ReadFirstGtids(PathOf(f.name)));
      BR_ASSIGN_OR_RETURN(SourceGtids floor, EraFloor(f.name));
      f.first_gtids = opening.known() ? FloorMerged(floor, opening) : opening;
    }
  }
  files_ = std::move(files);
  fde_server_id_ = files_.empty() ? 0 : ReadFdeServerId(PathOf(files_.back().name));
  era_ = files_.empty() ? 0 : SplitStoredName(files_.back().name).era;
  // BeginEra wrote the next era's entry, and no file of it was stored yet.
  if (!files_.empty()) {
    auto next = ReadEraEntry(dir_, era_ + 1);
    if (next.ok()) {
      ++era_;
      pending_era_ = *std::move(next);
    } else if (!absl::IsNotFound(next.status())) {
      return next.status();
    }
  }
  if (last) {
    StoreFileEntry& f = files_.back();
    f.size = size_ = safe_offset_ = buf_offset_ = last->size;
    f.first_gtids = last->first_gtids;
    gtids_ = std::move(last->gtids);
    if (last->closed) {
      state_ = FileState::kClosed;
      rotate_to_ = last->rotate_to;
    } else {
      fd_ = ::open(PathOf(f.name).c_str(), O_RDWR | O_CLOEXEC);
      if (fd_ < 0) return ErrnoStatus(errno, absl::StrCat("cannot open ", PathOf(f.name)));
      state_ = FileState::kOpen;
    }
  }
  BR_RETURN_IF_ERROR(WriteIndexLocked());
  unpublished_ = true;
  PublishLocked();
  return absl::OkStatus();
}

std::optional<BinlogPosition> BinlogStore::resume_position() const {
  absl::MutexLock l(&mu_);
  if (files_.empty()) return std::nullopt;
  if (pending_era_) return BinlogPosition{pending_era_->first_file, 4};
  // The source's name: the position is asked of the source.
  return BinlogPosition{std::string(SourceNameOf(files_.back().name)), safe_offset_};
}

absl::StatusOr<SourceGtids> BinlogStore::EraFloor(const std::string& stored_name) const {
  const uint32_t era = SplitStoredName(stored_name).era;
  if (era == 0) return SourceGtids();
  BR_ASSIGN_OR_RETURN(EraEntry entry, ReadEraEntry(dir_, era));
  return entry.stored;
}

SourceGtids BinlogStore::ConsumedGtids() const {
  absl::MutexLock l(&mu_);
  return gtids_.gtids();  // a pending transaction is not in it
}

uint32_t BinlogStore::era() const {
  absl::MutexLock l(&mu_);
  return era_;
}

bool BinlogStore::IsNewestLocked(std::string_view source_name) const {
  return !files_.empty() && IsStoredNameOf(files_.back().name, era_, source_name);
}

bool BinlogStore::ResumeVerified() const {
  absl::MutexLock l(&mu_);
  return resume_verified_;
}

absl::StatusOr<EraEntry> BinlogStore::CurrentEraEntry() const {
  absl::MutexLock l(&mu_);
  if (era_ == 0) return absl::NotFoundError(absl::StrCat("store ", dir_, " has no era yet"));
  if (pending_era_) return *pending_era_;
  return ReadEraEntry(dir_, era_);
}

absl::StatusOr<uint32_t> BinlogStore::BeginSwitch(std::string_view first_file,
                                                  uint32_t server_id, std::string_view address,
                                                  std::string_view left_address) {
  BR_RETURN_IF_ERROR(BeginEra(first_file, server_id, address, left_address).status());
  // BeginEra leaves the era's entry pending until its first file arrives.
  absl::MutexLock l(&mu_);
  return pending_era_ ? pending_era_->left_server_id : 0;
}

absl::Status BinlogStore::RecordSourceAddress(std::string_view address) {
  absl::MutexLock l(&mu_);
  if (era_ == 0) return absl::OkStatus();
  if (pending_era_) {
    if (pending_era_->source_address == address) return absl::OkStatus();
    EraEntry next = *pending_era_;
    next.source_address = std::string(address);
    BR_RETURN_IF_ERROR(WriteEraEntry(dir_, era_, next, durable()));
    pending_era_ = std::move(next);
    return absl::OkStatus();
  }
  BR_ASSIGN_OR_RETURN(EraEntry entry, ReadEraEntry(dir_, era_));
  if (entry.source_address == address) return absl::OkStatus();
  entry.source_address = std::string(address);
  return WriteEraEntry(dir_, era_, entry, durable());
}

absl::StatusOr<uint32_t> BinlogStore::BeginEra(std::string_view first_file,
                                               uint32_t server_id, std::string_view address,
                                               std::string_view left_address) {
  BR_RETURN_IF_ERROR(ValidateBinlogName(first_file));
  absl::MutexLock l(&mu_);
  if (!failed_.ok()) return failed_;
  if (files_.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "store ", dir_, " is empty: there is nothing to continue on another source; start "
        "it on the new source instead"));
  }
  if (pending_era_) {
    // No file of it stored yet: the switch may still choose another file
    // (or another server).
    pending_era_->first_file = std::string(first_file);
    pending_era_->server_id = server_id;
    // Chosen again before its first file: the server left is still the one
    // the era's entry names (the store's newest file is still its).
    pending_era_->source_address = std::string(address);
    pending_era_->switched_at = absl::ToUnixSeconds(absl::Now());
    BR_RETURN_IF_ERROR(WriteEraEntry(dir_, era_, *pending_era_, durable()));
    return era_;
  }
  BR_RETURN_IF_ERROR(CutToSafePointLocked());
  in_txn_ = false;
  gtids_.DropPending();
  if (state_ == FileState::kOpen) {
    // As a source that crashed leaves it: BINLOG_IN_USE still set, and
    // readers move on to the next file.
    if (absl::Status s = CloseFileLocked(false); !s.ok()) return FailLocked(s);
  }
  SourceGtids stored = gtids_.gtids();
  if (!stored.known()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "store ", dir_, " holds no GTIDs (the source ran with gtid_mode = OFF?): following "
        "another source needs them to tell which of its transactions are stored"));
  }
  const uint32_t era = era_ + 1;
  const std::string era_dir = PathOf(EraDirName(era));
  if (::mkdir(era_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, absl::StrCat("store: cannot create ", era_dir));
  }
  EraEntry entry{std::move(stored),
                 std::string(first_file),
                 server_id,
                 std::string(SourceNameOf(files_.back().name)),
                 std::string(address),
                 absl::ToUnixSeconds(absl::Now()),
                 std::string(left_address),
                 fde_server_id_};
  BR_RETURN_IF_ERROR(WriteEraEntry(dir_, era, entry, durable()));
  if (durable()) BR_RETURN_IF_ERROR(SyncDirectory(dir_));
  spdlog::info("store: era {} begins at the new source's {}:4 after {} (GTIDs stored: {})", era,
               first_file, files_.back().name, entry.stored.PositionText());
  era_ = era;
  pending_era_ = std::move(entry);
  rotate_to_.reset();
  return era;
}

absl::StatusOr<StartSpec> BinlogStore::StartFor(const StartSpec& configured) const {
  if (std::optional<BinlogPosition> resume = resume_position()) {
    StartSpec spec;
    spec.kind = StartSpec::Kind::kPosition;
    spec.position = *resume;
    return spec;
  }
  // Stored files hold the source's bytes at the source's offsets: the first
  // file must begin at its first event, and a GTID start skips events.
  if ((configured.kind == StartSpec::Kind::kPosition && configured.position.offset != 4) ||
      configured.kind == StartSpec::Kind::kGtid) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the store in ", dir_, " is empty and must start at the beginning of a binlog file: "
        "use start=earliest, start=current or start=FILE:4"));
  }
  return configured;
}

absl::Status BinlogStore::OnEvent(const StreamEvent& e) {
  if (e.end.offset == 0) {
    // Artificial: not part of any file. The FDE a dump re-sends when it
    // resumes inside a file is checked against the stored one.
    if (e.event.type() != protocol::kFormatDescriptionEvent) return absl::OkStatus();
    absl::MutexLock l(&mu_);
    resume_verified_ = false;
    return CheckResumedFileLocked(e);
  }
  absl::MutexLock l(&mu_);
  if (!failed_.ok()) return failed_;
  const uint64_t n = e.event.bytes.size();
  if (state_ != FileState::kOpen || pending_era_ || !IsNewestLocked(e.end.file)) {
    BR_RETURN_IF_ERROR(StartFileLocked(e));
  }
  // end_log_pos is 0 inside MariaDB 11.4+ transactions (the session counted
  // the end); otherwise it must be the end.
  if (e.end.offset < n || e.end.offset - n != size_ ||
      (e.event.header.log_pos != 0 &&
       e.event.header.log_pos != (e.end.offset & 0xFFFFFFFFull))) {
    return absl::DataLossError(absl::StrCat(
        "store: ", AV(protocol::EventTypeName(e.event.type())), " event of ", n,
        " bytes ending at ",
        e.end.ToString(), " (log_pos ", e.event.header.log_pos, ") does not start at the end of ",
        dir_, "/", e.end.file, ":", size_, "; refusing to leave a gap or overlap"));
  }
  return AppendLocked(e);
}

absl::Status BinlogStore::CheckResumedFileLocked(const StreamEvent& e) {
  if (state_ != FileState::kOpen || pending_era_ || !IsNewestLocked(e.end.file)) {
    return absl::OkStatus();
  }
  // The stored FDE's header and its binlog version and server version
  // string (the first 2 + 50 bytes of its body); `created`, log_pos and
  // the flags are what a dump may rewrite in the copy it re-sends.
  constexpr size_t kCompared = protocol::kEventHeaderLen + 2 + 50;
  const uint64_t at = protocol::kBinlogMagic.size();
  std::string stored(kCompared, '\0');
  if (buf_offset_ <= at && buf_.size() >= at - buf_offset_ + kCompared) {
    stored = buf_.substr(at - buf_offset_, kCompared);
  } else if (::pread(fd_, stored.data(), kCompared, static_cast<off_t>(at)) !=
             static_cast<ssize_t>(kCompared)) {
    return absl::OkStatus();  // too short to hold an FDE: recovery's business
  }
  auto header = protocol::ParseEventHeader(stored);
  if (!header.ok() || header->type != protocol::kFormatDescriptionEvent ||
      e.event.body.size() < kCompared - protocol::kEventHeaderLen) {
    return absl::OkStatus();
  }
  const std::string_view stored_version = std::string_view(stored).substr(
      protocol::kEventHeaderLen, kCompared - protocol::kEventHeaderLen);
  const std::string_view sent_version =
      e.event.body.substr(0, kCompared - protocol::kEventHeaderLen);
  if (header->server_id == e.event.header.server_id &&
      header->timestamp == e.event.header.timestamp && stored_version == sent_version) {
    resume_verified_ = true;
    return absl::OkStatus();
  }
  auto version = [](std::string_view v) {
    v.remove_prefix(2);
    return std::string(v.substr(0, v.find('\0')));
  };
  // Retried like a lost connection (Unavailable): the server binrelay
  // followed may come back at the address, and everything stored stays
  // served meanwhile.
  return absl::UnavailableError(absl::StrCat(
      "the source's ", e.end.file, " is not the stored ", dir_, "/", e.end.file,
      ": the source's was written by server_id ", e.event.header.server_id, " (",
      version(sent_version), ") at ", absl::FormatTime(absl::FromUnixSeconds(e.event.header.timestamp)),
      ", the stored one by server_id ", header->server_id, " (", version(stored_version),
      ") at ", absl::FormatTime(absl::FromUnixSeconds(header->timestamp)),
      ". The address now reaches another server (a failover, a moved address) or the source "
      "ran RESET MASTER; binrelay will not append another binlog to the stored one. Make "
      "the address reach the server it followed again ([source] host, or after a switch the "
      "one its era recorded; CHANGE MASTER TO MASTER_HOST on binrelay's port for a new one; "
      "it keeps retrying and serving what it stored); to follow the new server, which must have replicated everything stored, "
      "STOP SLAVE, CHANGE MASTER TO ... MASTER_USE_GTID = slave_pos (MySQL: "
      "SOURCE_AUTO_POSITION = 1), START SLAVE on binrelay's port"));
}

absl::Status BinlogStore::StartFileLocked(const StreamEvent& e) {
  BR_RETURN_IF_ERROR(ValidateBinlogName(e.end.file));
  const std::string name = StoredNameOf(era_, e.end.file);
  const uint64_t n = e.event.bytes.size();
  bool fde = e.event.type() == protocol::kFormatDescriptionEvent ||
             e.event.type() == protocol::kStartEventV3;
  if (!fde || e.end.offset != 4 + n) {
    return absl::DataLossError(absl::StrCat(
        "store: the first event stored in ", dir_, "/", name, " would be ",
        AV(protocol::EventTypeName(e.event.type())), " ending at ", e.end.ToString(),
        ", but a stored file must begin with its FDE at offset 4 (an empty store must be "
        "started at the beginning of a file: start=earliest, current or FILE:4)"));
  }
  if (pending_era_ && e.end.file != pending_era_->first_file) {
    return absl::FailedPreconditionError(absl::StrCat(
        "store: binrelay switched to a server whose ", pending_era_->first_file,
        " begins era ", era_, " of ", dir_, ", but the stream began in ", e.end.file,
        ": the server reached is not the one it switched to, or that file is gone there. "
        "Switch again: STOP SLAVE, CHANGE MASTER TO ... MASTER_USE_GTID = slave_pos (MySQL: "
        "SOURCE_AUTO_POSITION = 1), START SLAVE"));
  }
  if (pending_era_ && pending_era_->server_id != 0 &&
      e.event.header.server_id != pending_era_->server_id) {
    // Retried: the server the switch chose may come back at the address.
    return absl::UnavailableError(absl::StrCat(
        "store: era ", era_, " of ", dir_, " was begun for server_id ", pending_era_->server_id,
        "'s ", pending_era_->first_file, ", but this ", e.end.file, " was written by server_id ",
        e.event.header.server_id, " (the address the switch recorded reaches another server "
        "now?): make it reach the server switched to again, or switch with CHANGE MASTER TO ... MASTER_USE_GTID = slave_pos"));
  }
  if (pending_era_ && state_ == FileState::kOpen) {
    // Reopened at a restart (the lost source left it without ROTATE):
    // closed as BeginEra closes it.
    if (absl::Status s = CloseFileLocked(false); !s.ok()) return FailLocked(s);
  }
  if (!files_.empty() && !pending_era_) {
    const std::string& last = files_.back().name;
    if (CompareBinlogNames(name, last) <= 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "store: the source's binlog continues in ", name, ", which does not come after ", last,
          " (RESET MASTER on the source?); the store in ", dir_, " cannot follow it"));
    }
    // A file of another server: the address now reaches another server (a
    // failover behind a moved address) whose next file has the name the
    // stored one's ROTATE names. Its FDE says whose it is (the server_id
    // every file of a server carries); refused before anything is created.
    if (fde_server_id_ != 0 && e.event.header.server_id != fde_server_id_) {
      return absl::UnavailableError(absl::StrCat(
          "store: the source's ", name, " was written by server_id ", e.event.header.server_id,
          ", but ", dir_, "/", last, " (the stored file before it) by server_id ",
          fde_server_id_, ": the address now reaches another server (a failover, a moved "
          "address); binrelay will not continue one server's binlog with another's. Make the "
          "address reach the server it followed again ([source] host, or after a switch the "
          "one its era recorded; CHANGE MASTER TO MASTER_HOST on binrelay's port for a new "
          "one; it keeps retrying and serving what it stored); to follow the new server, which must have replicated everything stored, "
          "STOP SLAVE, CHANGE MASTER TO ... MASTER_USE_GTID = slave_pos (MySQL: "
          "SOURCE_AUTO_POSITION = 1), START SLAVE on binrelay's port"));
    }
    if (state_ == FileState::kClosed && rotate_to_ && *rotate_to_ != name) {
      return absl::DataLossError(absl::StrCat("store: ", last, " ends with a ROTATE to ",
                                              *rotate_to_, " but the stream continued in ", name));
    }
    if (state_ == FileState::kOpen) {
      // The source abandoned the file without ROTATE/STOP (it crashed): keep
      // it as the source has it, BINLOG_IN_USE still set.
      spdlog::warn("store: {} continues in {} without a ROTATE or STOP", last, name);
      BR_RETURN_IF_ERROR(CloseFileLocked(false));
    }
  }
  std::string path = PathOf(name);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    return FailLocked(ErrnoStatus(errno, absl::StrCat("store ", dir_, ": cannot create ", path)));
  }
  fd_ = fd;
  files_.push_back({name, SourceGtids(), 0});
  if (pending_era_) {
    // Kept for every file of the era (GtidState::SetFloor).
    gtids_.SetFloor(pending_era_->stored);
    pending_era_.reset();
  }
  state_ = FileState::kOpen;
  rotate_to_.reset();
  buf_.assign(protocol::kBinlogMagic);
  buf_offset_ = 0;
  size_ = safe_offset_ = protocol::kBinlogMagic.size();
  in_txn_ = false;
  if (durable()) {
    BR_RETURN_IF_ERROR(SyncDirectory(era_ == 0 ? dir_ : PathOf(EraDirName(era_))));
  }
  return WriteIndexLocked();
}

absl::Status BinlogStore::AppendLocked(const StreamEvent& e) {
  std::string_view bytes = e.event.bytes;
  const uint8_t type = e.event.type();
  const uint64_t start = size_;
  if (absl::Status s = gtids_.OnEvent(e.event); !s.ok()) {
    return Annotate(s, absl::StrCat("store: GTID state at ", e.end.ToString()));
  }
  if (!buf_.empty() && buf_.size() + bytes.size() > options_.buffer_bytes) {
    if (absl::Status s = WriteBufferLocked(); !s.ok()) return FailLocked(s);
  }
  if (bytes.size() >= options_.buffer_bytes && type != protocol::kFormatDescriptionEvent) {
    // A large event goes straight from the received buffer to the file.
    if (absl::Status s = WriteLocked(bytes, start); !s.ok()) return FailLocked(s);
    buf_offset_ = start + bytes.size();
  } else {
    buf_.append(bytes);
    if (type == protocol::kFormatDescriptionEvent && start == 4) {
      buf_[start - buf_offset_ + 17] |= static_cast<char>(protocol::kFlagBinlogInUse);
      fde_server_id_ = e.event.header.server_id;
    }
  }
  size_ += bytes.size();
  StoreFileEntry& file = files_.back();
  if ((type == protocol::kGtidListEvent || type == protocol::kPreviousGtidsEvent) && !in_txn_ &&
      !file.first_gtids.known()) {
    // In a store era, as readers see the file: over the era's floor
    // (gtids_ merged the event into it above).
    if (gtids_.has_floor()) {
      file.first_gtids = gtids_.gtids();
    } else {
      BR_ASSIGN_OR_RETURN(file.first_gtids, GtidsOfStateEvent(e.event));
    }
    BR_RETURN_IF_ERROR(WriteIndexLocked());
  }
  const bool safe_point = e.ends_transaction || (!in_txn_ && IsOutsideTransaction(type));
  if (safe_point) {
    in_txn_ = false;
    gtids_.Commit();
    safe_offset_ = size_;
    if (!unpublished_) first_unpublished_ = absl::Now();
    unpublished_ = true;
  } else {
    in_txn_ = true;
  }
  if (!in_txn_ && (type == protocol::kRotateEvent || type == protocol::kStopEvent)) {
    if (type == protocol::kRotateEvent) {
      auto rotate = protocol::ParseRotate(e.event);
      if (!rotate.ok()) return Annotate(rotate.status(), absl::StrCat("ROTATE at ", e.end.ToString()));
      rotate_to_ = std::string(rotate->next_file);
    }
    if (absl::Status s = CloseFileLocked(true); !s.ok()) return FailLocked(s);
    return absl::OkStatus();
  }
  // Events between transactions (MariaDB's BINLOG_CHECKPOINT after a
  // rotation, GTID_LIST) are published too: readers must reach the source's
  // end even when no transaction follows them.
  // Group commit: while more of the stream is already waiting, the sync is
  // left to the burst's last transaction (or the flusher, sync_interval
  // later); nothing is published before it is durable.
  // kOff writes and publishes at the same points, without the fdatasync:
  // there is no durability to wait for, so replicas need not wait either.
  if (safe_point && options_.sync != SyncPolicy::kInterval && !e.more_buffered) {
    if (absl::Status s = FlushLocked(durable()); !s.ok()) return FailLocked(s);
  }
  return absl::OkStatus();
}

absl::Status BinlogStore::CloseFileLocked(bool clean) {
  BR_RETURN_IF_ERROR(WriteBufferLocked());
  const std::string path = PathOf(files_.back().name);
  if (clean) {
    // The source clears BINLOG_IN_USE in place when it closes a file; its
    // CRC is computed with the flag clear, so nothing else changes.
    char lo = 0;
    if (::pread(fd_, &lo, 1, kFdeFlagsOffset) != 1) {
      return ErrnoStatus(errno, absl::StrCat("cannot read the FDE of ", path));
    }
    lo = static_cast<char>(lo & ~protocol::kFlagBinlogInUse);
    if (::pwrite(fd_, &lo, 1, kFdeFlagsOffset) != 1) {
      return ErrnoStatus(errno, absl::StrCat("cannot update the FDE of ", path));
    }
  }
  if (durable() && ::fdatasync(fd_) != 0) {
    return ErrnoStatus(errno, absl::StrCat("cannot fdatasync ", path));
  }
  ::close(fd_);
  fd_ = -1;
  state_ = FileState::kClosed;
  files_.back().size = size_;
  PublishLocked();
  if (file_closed_listener_) file_closed_listener_();
  return absl::OkStatus();
}

void BinlogStore::OnStreamRestart(const BinlogPosition& resume) {
  absl::MutexLock l(&mu_);
  if (!failed_.ok()) {
    failed_ = absl::OkStatus();  // FailLocked already reloaded the disk state
    return;
  }
  in_txn_ = false;
  gtids_.DropPending();
  if (!CutToSafePointLocked().ok()) return;  // failed_ is set
  const bool at_end = pending_era_
                          ? resume == BinlogPosition{pending_era_->first_file, 4}
                          : (IsNewestLocked(resume.file) && resume.offset == safe_offset_);
  if (!files_.empty() && !at_end) {
    spdlog::warn("store: stream restarts at {} but the store ends at {}:{}", resume.ToString(),
                 files_.back().name, safe_offset_);
  }
}

absl::Status BinlogStore::CutToSafePointLocked() {
  if (state_ != FileState::kOpen || size_ <= safe_offset_) return absl::OkStatus();
  if (safe_offset_ >= buf_offset_) {
    buf_.resize(safe_offset_ - buf_offset_);
  } else {
    buf_.clear();
    if (::ftruncate(fd_, static_cast<off_t>(safe_offset_)) != 0) {
      std::string what = absl::StrCat("cannot cut ", PathOf(files_.back().name));
      return FailLocked(ErrnoStatus(errno, what));
    }
    buf_offset_ = safe_offset_;
    ++epoch_;
  }
  size_ = safe_offset_;
  return absl::OkStatus();
}

std::vector<StoreFileEntry> BinlogStore::Files() const {
  absl::MutexLock l(&mu_);
  std::vector<StoreFileEntry> out = files_;
  if (!out.empty() && state_ == FileState::kOpen) out.back().size = size_;
  return out;
}

std::vector<StoreFileEntry> BinlogStore::CommittedFiles() const {
  // One snapshot of both under mu_ (publication happens under it too).
  absl::MutexLock l(&mu_);
  std::vector<StoreFileEntry> out = files_;
  const BinlogPosition end = committed().position;
  while (!out.empty() &&
         (end.file.empty() || CompareBinlogNames(out.back().name, end.file) > 0)) {
    out.pop_back();
  }
  if (!out.empty() && out.back().name == end.file) out.back().size = end.offset;
  return out;
}

bool BinlogStore::IsClosed(const std::string& name) const {
  absl::MutexLock l(&mu_);
  if (files_.empty()) return false;
  if (files_.back().name == name) return state_ == FileState::kClosed;
  return std::any_of(files_.begin(), files_.end(),
                     [&](const StoreFileEntry& f) { return f.name == name; });
}

absl::StatusOr<std::string> BinlogStore::FileForGtid(const SourceGtids& position) const {
  return FileForGtidPosition(CommittedFiles(), position);
}

}  // namespace binrelay::replication
