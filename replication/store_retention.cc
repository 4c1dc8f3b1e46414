// Retention: reader pins and Purge (see binlog_store.h). Kept apart from
// the append path: it only removes whole, closed files, oldest first, below
// every pin unless the hard cap forces otherwise.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "protocol/errno_status.h"
#include "protocol/status_macros.h"
#include "replication/binlog_store.h"
#include "spdlog/spdlog.h"

namespace binrelay::replication {
namespace {

std::string Describe(const std::string& consumer, const BinlogPosition& pos) {
  return absl::StrCat(consumer.empty() ? "a reader" : consumer, " at ", pos.ToString());
}

}  // namespace

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
  auto it = store_->pins_.find(id_);
  if (it != store_->pins_.end()) it->second.position = position;
}

void StorePin::Release() {
  if (store_ == nullptr) return;
  absl::MutexLock l(&store_->pin_mu_);
  store_->pins_.erase(id_);
  store_ = nullptr;
}

void StorePin::Linger(absl::Duration grace, const BinlogPosition& from) {
  if (store_ == nullptr) return;
  absl::MutexLock l(&store_->pin_mu_);
  auto it = store_->pins_.find(id_);
  if (it != store_->pins_.end()) {
    it->second.expires = absl::Now() + grace;
    if (!from.file.empty()) it->second.position = from;
  }
  store_ = nullptr;
}

void BinlogStore::ExpirePinsLocked() {
  const absl::Time now = absl::Now();
  for (auto it = pins_.begin(); it != pins_.end();) {
    it = it->second.expires <= now ? pins_.erase(it) : std::next(it);
  }
}

bool StorePin::lost() const {
  if (store_ == nullptr) return false;
  absl::MutexLock l(&store_->pin_mu_);
  auto it = store_->pins_.find(id_);
  return it != store_->pins_.end() && !it->second.lost_reason.empty();
}

std::string StorePin::lost_reason() const {
  if (store_ == nullptr) return "";
  absl::MutexLock l(&store_->pin_mu_);
  auto it = store_->pins_.find(id_);
  return it == store_->pins_.end() ? "" : it->second.lost_reason;
}

StorePin BinlogStore::Pin(const BinlogPosition& position, std::string consumer) {
  absl::MutexLock l(&pin_mu_);
  uint64_t id = next_pin_++;
  pins_[id] = PinState{position, std::move(consumer), ""};
  return StorePin(this, id);
}

std::vector<PinInfo> BinlogStore::Pins() const {
  absl::MutexLock l(&pin_mu_);
  std::vector<PinInfo> out;
  const absl::Time now = absl::Now();
  for (const auto& [id, p] : pins_) {
    if (p.expires > now) out.push_back({p.consumer, p.position, p.lost_reason});
  }
  std::stable_sort(out.begin(), out.end(), [](const PinInfo& a, const PinInfo& b) {
    return CompareBinlogNames(a.position.file, b.position.file) < 0;
  });
  return out;
}

absl::StatusOr<PurgeResult> BinlogStore::Purge(const PurgeOptions& options) {
  absl::MutexLock l(&mu_);
  if (options.before_file) {
    bool known = false;
    for (const StoreFileEntry& f : files_) known = known || f.name == *options.before_file;
    if (!known) {
      return absl::NotFoundError(absl::StrCat(
          "'", *options.before_file, "' is not a binlog file held by the store in ", dir_,
          files_.empty() ? " (it is empty)"
                         : absl::StrCat(" (it holds ", files_.front().name, " to ",
                                        files_.back().name, ")")));
    }
  }
  // The oldest position a live (not lost) pin needs.
  std::optional<BinlogPosition> oldest_pin;
  std::string oldest_consumer;
  {
    absl::MutexLock p(&pin_mu_);
    ExpirePinsLocked();
    for (const auto& [id, pin] : pins_) {
      // A pin on a file purged meanwhile (a lingering claim moved back
      // onto it) still needs every file after it: all the stored ones.
      if (!pin.lost_reason.empty()) continue;
      if (!oldest_pin || CompareBinlogNames(pin.position.file, oldest_pin->file) < 0) {
        oldest_pin = pin.position;
        oldest_consumer = pin.consumer;
      }
    }
  }
  uint64_t total = 0;
  for (const StoreFileEntry& f : files_) total += f.size;
  if (state_ == FileState::kOpen) total += size_ - files_.back().size;
  PurgeResult result;
  const auto now = std::chrono::system_clock::now();
  auto remove = [&](const StoreFileEntry& f) -> absl::Status {
    if (::unlink(PathOf(f.name).c_str()) != 0 && errno != ENOENT) {
      return ErrnoStatus(errno, "cannot purge", PathOf(f.name));
    }
    total -= f.size;
    result.removed.push_back(f.name);
    purged_files_.fetch_add(1, std::memory_order_relaxed);
    return absl::OkStatus();
  };
  size_t n = 0;
  absl::Status status;
  // Oldest first, never the newest file (it is being written or continued).
  for (; n + 1 < files_.size(); ++n) {
    const StoreFileEntry& f = files_[n];
    bool want = (options.before_file && CompareBinlogNames(f.name, *options.before_file) < 0) ||
                (options.max_total_bytes && total > *options.max_total_bytes);
    if (!want && options.older_than) {
      struct stat st;
      if (::stat(PathOf(f.name).c_str(), &st) != 0) {
        status = ErrnoStatus(errno, "cannot stat", PathOf(f.name));
        break;
      }
      auto mtime = std::chrono::system_clock::from_time_t(st.st_mtime);
      want = now - mtime > *options.older_than;
    }
    if (!want) break;
    if (oldest_pin && CompareBinlogNames(f.name, oldest_pin->file) >= 0) {
      result.kept_for_pin = f.name;
      result.kept_for_consumer = Describe(oldest_consumer, *oldest_pin);
      break;
    }
    status = remove(f);
    if (!status.ok()) break;
    spdlog::info("store: purged {} ({} bytes)", PathOf(f.name), f.size);
  }
  // The hard cap: the disk matters more than a consumer that fell this far
  // behind. Pinned files go too, and their pins are told so.
  for (; status.ok() && options.hard_cap_bytes && total > *options.hard_cap_bytes &&
         n + 1 < files_.size();
       ++n) {
    const StoreFileEntry& f = files_[n];
    const bool pinned = oldest_pin && CompareBinlogNames(f.name, oldest_pin->file) >= 0;
    status = remove(f);
    if (!status.ok()) break;
    if (pinned) result.removed_pinned.push_back(f.name);
    spdlog::info("store: purged {} ({} bytes) to stay under retention_hard_cap_bytes={}",
                 PathOf(f.name), f.size, *options.hard_cap_bytes);
  }
  if (!result.removed_pinned.empty()) {
    result.kept_for_pin.clear();
    result.kept_for_consumer.clear();
    const std::string& last = result.removed.back();
    absl::MutexLock p(&pin_mu_);
    for (auto& [id, pin] : pins_) {
      if (!pin.lost_reason.empty() || CompareBinlogNames(pin.position.file, last) > 0) continue;
      pin.lost_reason = absl::StrCat(
          "binrelay purged ", pin.position.file,
          " you still needed because retention_hard_cap_bytes=", *options.hard_cap_bytes,
          " was reached; reconnect from a newer position");
      result.lost_consumers.push_back(Describe(pin.consumer, pin.position));
      lost_pins_.fetch_add(1, std::memory_order_relaxed);
    }
    spdlog::warn(
        "store {}: retention_hard_cap_bytes={} reached: purged {} although pinned; consumers "
        "that lost their position and must reconnect: {}",
        dir_, *options.hard_cap_bytes, absl::StrJoin(result.removed_pinned, ", "),
        result.lost_consumers.empty() ? "none" : absl::StrJoin(result.lost_consumers, "; "));
  }
  // Whatever was unlinked leaves the index, even if a later step failed.
  files_.erase(files_.begin(), files_.begin() + static_cast<ptrdiff_t>(result.removed.size()));
  if (!result.removed.empty()) {
    absl::Status index = WriteIndexLocked();
    if (status.ok()) status = index;
  }
  if (!status.ok()) return status;
  return result;
}

}  // namespace binrelay::replication
