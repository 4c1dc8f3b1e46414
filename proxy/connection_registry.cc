#include "proxy/connection_registry.h"

namespace binrelay::proxy {

std::optional<uint64_t> ConnectionRegistry::Add(Closer closer) {
  absl::MutexLock lock(&mu_);
  if (closed_) return std::nullopt;
  uint64_t id = next_id_++;
  closers_.emplace(id, std::move(closer));
  return id;
}

void ConnectionRegistry::Remove(uint64_t id) {
  absl::MutexLock lock(&mu_);
  closers_.erase(id);
}

std::vector<ConnectionRegistry::Closer> ConnectionRegistry::CloseAll() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  std::vector<Closer> out;
  out.reserve(closers_.size());
  for (auto& [id, closer] : closers_) out.push_back(std::move(closer));
  closers_.clear();
  return out;
}

size_t ConnectionRegistry::size() const {
  absl::MutexLock lock(&mu_);
  return closers_.size();
}

}  // namespace binrelay::proxy
