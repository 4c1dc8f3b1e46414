// Durability and publication for BinlogStore (see binlog_store.h): the
// buffered pwrites, fdatasync per the sync policy, the committed end that
// readers wait on, and the background flusher (interval, off, and the
// group-commit backstop). Kept apart from the append path's file rules.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "protocol/errno_status.h"
#include "protocol/status_macros.h"
#include "replication/binlog_store.h"
#include "spdlog/spdlog.h"

namespace binrelay::replication {

absl::Status BinlogStore::WriteLocked(std::string_view data, uint64_t offset) {
  size_t done = 0;
  while (done < data.size()) {
    off_t at = static_cast<off_t>(offset + done);
    ssize_t n = options_.pwrite_fn
                    ? options_.pwrite_fn(fd_, data.data() + done, data.size() - done, at)
                    : ::pwrite(fd_, data.data() + done, data.size() - done, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : ENOSPC;
      // Undo the partial write: the file keeps exactly what it held before.
      if (::ftruncate(fd_, static_cast<off_t>(offset)) != 0) {
        spdlog::error("store: cannot undo a partial write to {}: {}",
                      PathOf(files_.back().name), std::strerror(errno));
      }
      return ErrnoStatus(
          err, absl::StrCat("store ", dir_, ": cannot append ", data.size(), " bytes to ",
                            PathOf(files_.back().name), " at offset ", offset,
                            (err == ENOSPC || err == EDQUOT)
                                ? " (disk full: free space; stored data is intact and the "
                                  "stream resumes after the last stored transaction)"
                                : ""));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status BinlogStore::WriteBufferLocked() {
  if (buf_.empty()) return absl::OkStatus();
  BR_RETURN_IF_ERROR(WriteLocked(buf_, buf_offset_));
  buf_offset_ += buf_.size();
  buf_.clear();
  return absl::OkStatus();
}

absl::Status BinlogStore::FlushLocked(bool sync) {
  if (fd_ >= 0) {
    BR_RETURN_IF_ERROR(WriteBufferLocked());
    if (sync && ::fdatasync(fd_) != 0) {
      return ErrnoStatus(errno, absl::StrCat("cannot fdatasync ", PathOf(files_.back().name)));
    }
  }
  PublishLocked();
  return absl::OkStatus();
}

absl::Status BinlogStore::FailLocked(absl::Status s) {
  // What is on disk is intact (partial writes were undone); bring the
  // in-memory state back to it, cutting any half transaction written early.
  absl::Status reload = LoadLocked();
  ++epoch_;
  if (!reload.ok()) s = Annotate(s, absl::StrCat("and recovery failed: ", reload.ToString()));
  failed_ = s;
  return s;
}

absl::Status BinlogStore::WriteIndexLocked() { return WriteStoreIndex(dir_, files_, durable()); }

void BinlogStore::PublishLocked() {
  if (!unpublished_) return;
  unpublished_ = false;
  absl::MutexLock l(&commit_mu_);
  committed_.position =
      files_.empty() ? BinlogPosition{"", 0} : BinlogPosition{files_.back().name, safe_offset_};
  committed_.gtids = std::make_shared<const SourceGtids>(gtids_.gtids());
  committed_.epoch = epoch_;
  ++committed_.sequence;
  if (commit_listener_) commit_listener_();
}

void BinlogStore::SetFileClosedListener(std::function<void()> listener) {
  absl::MutexLock l(&mu_);
  file_closed_listener_ = std::move(listener);
}

void BinlogStore::SetCommitListener(std::function<void()> listener) {
  absl::MutexLock l(&commit_mu_);
  commit_listener_ = std::move(listener);
}

absl::Status BinlogStore::Flush() {
  absl::MutexLock l(&mu_);
  if (!failed_.ok()) return failed_;
  if (absl::Status s = FlushLocked(durable()); !s.ok()) return FailLocked(s);
  return absl::OkStatus();
}

absl::Status BinlogStore::Close() {
  {
    absl::MutexLock l(&mu_);
    if (closed_) return absl::OkStatus();
    closed_ = true;
    stopping_ = true;
  }
  if (flusher_.joinable()) flusher_.join();
  absl::MutexLock l(&mu_);
  absl::Status s = failed_.ok() ? FlushLocked(durable()) : absl::OkStatus();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  return s;
}

void BinlogStore::SyncPromptlyFor(absl::Duration d) {
  absl::MutexLock l(&mu_);
  prompt_until_ = std::max(prompt_until_, absl::Now() + d);
  ++prompt_requests_;
}

void BinlogStore::FlusherLoop() {
  absl::MutexLock l(&mu_);
  while (true) {
    mu_.Await(absl::Condition(
        +[](BinlogStore* s) ABSL_NO_THREAD_SAFETY_ANALYSIS {
          return s->stopping_ || s->unpublished_;
        },
        this));
    if (stopping_) return;
    if (absl::Now() >= prompt_until_) {
      // The interval's wait, cut short by SyncPromptlyFor.
      prompt_seen_ = prompt_requests_;
      absl::Time deadline = first_unpublished_ + absl::FromChrono(options_.sync_interval);
      mu_.AwaitWithDeadline(absl::Condition(
                                +[](BinlogStore* s) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                                  return s->stopping_ || s->prompt_requests_ != s->prompt_seen_;
                                },
                                this),
                            deadline);
      if (stopping_) return;
    }
    if (!failed_.ok() || !unpublished_) continue;
    absl::Status s = FlushLocked(durable());
    if (!s.ok()) spdlog::error("{}", FailLocked(s).ToString());
  }
}

CommittedEnd BinlogStore::committed() const {
  absl::MutexLock l(&commit_mu_);
  return committed_;
}

uint64_t BinlogStore::committed_sequence() const {
  absl::MutexLock l(&commit_mu_);
  return committed_.sequence;
}

bool BinlogStore::WaitForCommitted(uint64_t after_sequence, absl::Duration timeout,
                                   CommittedEnd* out) const {
  absl::MutexLock l(&commit_mu_);
  auto newer = [this, after_sequence]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return committed_.sequence > after_sequence;
  };
  bool ok = commit_mu_.AwaitWithTimeout(absl::Condition(&newer), timeout);
  if (out != nullptr) *out = committed_;
  return ok;
}

}  // namespace binrelay::replication
