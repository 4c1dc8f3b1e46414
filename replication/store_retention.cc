// Retention: reader pins and Purge (see binlog_store.h). Kept apart from
// the append path: it only removes whole, closed files below every pin.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"
#include "replication/binlog_store.h"
#include "spdlog/spdlog.h"

namespace binrelay::replication {

StorePin& StorePin::operator=(StorePin&& other) noexcept {
  if (this != &other) {
    Release();
    store_ = other.store_;
    id_ = other.id_;
    other.store_ = nullptr;
  }
  return *this;
}

void StorePin::Advance(const BinlogPosition& position) {
  if (store_ == nullptr) return;
  absl::MutexLock l(&store_->pin_mu_);
  store_->pins_[id_] = position;
}

void StorePin::Release() {
  if (store_ == nullptr) return;
  absl::MutexLock l(&store_->pin_mu_);
  store_->pins_.erase(id_);
  store_ = nullptr;
}

StorePin BinlogStore::Pin(const BinlogPosition& position) {
  absl::MutexLock l(&pin_mu_);
  uint64_t id = next_pin_++;
  pins_[id] = position;
  return StorePin(this, id);
}

absl::StatusOr<PurgeResult> BinlogStore::Purge(const PurgeOptions& options) {
  absl::MutexLock l(&mu_);
  std::optional<std::string> oldest_pin;
  {
    absl::MutexLock p(&pin_mu_);
    for (const auto& [id, pos] : pins_) {
      if (!oldest_pin || CompareBinlogNames(pos.file, *oldest_pin) < 0) oldest_pin = pos.file;
    }
  }
  uint64_t total = 0;
  for (const StoreFileEntry& f : files_) total += f.size;
  if (state_ == FileState::kOpen) total += size_ - files_.back().size;
  PurgeResult result;
  const auto now = std::chrono::system_clock::now();
  size_t n = 0;
  // Oldest first, never the newest file (it is being written or continued).
  for (; n + 1 < files_.size(); ++n) {
    const StoreFileEntry& f = files_[n];
    bool want = options.max_total_bytes && total > *options.max_total_bytes;
    if (!want && options.older_than) {
      struct stat st;
      if (::stat(PathOf(f.name).c_str(), &st) != 0) {
        return absl::UnknownError(
            absl::StrCat("cannot stat ", PathOf(f.name), ": ", std::strerror(errno)));
      }
      auto mtime = std::chrono::system_clock::from_time_t(st.st_mtime);
      want = now - mtime > *options.older_than;
    }
    if (!want) break;
    if (oldest_pin && CompareBinlogNames(f.name, *oldest_pin) >= 0) {
      result.kept_for_pin = f.name;
      break;
    }
    if (::unlink(PathOf(f.name).c_str()) != 0) {
      return absl::UnknownError(
          absl::StrCat("cannot purge ", PathOf(f.name), ": ", std::strerror(errno)));
    }
    spdlog::info("store: purged {} ({} bytes)", PathOf(f.name), f.size);
    total -= f.size;
    result.removed.push_back(f.name);
  }
  files_.erase(files_.begin(), files_.begin() + static_cast<ptrdiff_t>(n));
  if (n > 0) BR_RETURN_IF_ERROR(WriteIndexLocked());
  return result;
}

}  // namespace binrelay::replication
