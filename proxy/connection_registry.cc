#include "proxy/connection_registry.h"

#include <algorithm>

#include "absl/time/clock.h"

namespace binrelay::proxy {

std::optional<uint32_t> ConnectionRegistry::Add(std::string host, Hooks hooks, size_t limit,
                                                bool* over_limit) {
  absl::MutexLock lock(&mu_);
  *over_limit = false;
  if (closed_) return std::nullopt;
  if (entries_.size() >= limit) {
    *over_limit = true;
    return std::nullopt;
  }
  uint32_t id = next_id_++;
  if (next_id_ == 0) next_id_ = 1;  // ids wrap after 4 billion connections; 0 is none
  entries_.emplace(id, Entry{std::move(host), Activity{}, absl::Now(), std::move(hooks)});
  return id;
}

void ConnectionRegistry::Update(uint32_t id, const Activity& activity) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  if (it->second.activity.command != activity.command || it->second.activity.info != activity.info) {
    it->second.since = absl::Now();
  }
  it->second.activity = activity;
}

void ConnectionRegistry::Remove(uint32_t id) {
  absl::MutexLock lock(&mu_);
  entries_.erase(id);
}

std::vector<std::function<void()>> ConnectionRegistry::CloseAll() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  std::vector<std::function<void()>> out;
  out.reserve(entries_.size());
  for (auto& [id, e] : entries_) out.push_back(e.hooks.close);
  return out;
}

size_t ConnectionRegistry::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

std::vector<ConnectionEntry> ConnectionRegistry::Connections() const {
  std::vector<ConnectionEntry> out;
  const absl::Time now = absl::Now();
  {
    absl::MutexLock lock(&mu_);
    out.reserve(entries_.size());
    for (const auto& [id, e] : entries_) {
      ConnectionEntry c;
      c.id = id;
      c.user = e.activity.user;
      c.host = e.host;
      c.db = e.activity.db;
      c.command = e.activity.command;
      c.seconds = absl::ToInt64Seconds(now - e.since);
      c.state = e.activity.state;
      c.info = e.activity.info;
      out.push_back(std::move(c));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const ConnectionEntry& a, const ConnectionEntry& b) { return a.id < b.id; });
  return out;
}

absl::Status ConnectionRegistry::Kill(uint32_t id, bool query_only) {
  std::function<void(bool)> kill;
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return absl::NotFoundError("no such connection");
    kill = it->second.hooks.kill;
  }
  if (kill) kill(query_only);
  return absl::OkStatus();
}

}  // namespace binrelay::proxy
