#include "replication/followed_source.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"
#include "replication/candidate_probe.h"
#include "replication/store_era.h"
#include "spdlog/spdlog.h"

namespace binrelay::replication {

absl::Status ParseSourceAddress(std::string_view address, std::string* host, uint16_t* port) {
  std::string_view h;
  std::string_view p;
  if (address.starts_with("[")) {
    const size_t close = address.find("]:");
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", AV(address), "' is not host:port (or [IPv6]:port)"));
    }
    h = address.substr(1, close - 1);
    p = address.substr(close + 2);
  } else {
    const size_t colon = address.rfind(':');
    if (colon != std::string_view::npos) {
      h = address.substr(0, colon);
      p = address.substr(colon + 1);
    }
  }
  uint32_t n = 0;
  if (h.empty() || !absl::SimpleAtoi(AV(p), &n) || n == 0 || n > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", AV(address), "' is not host:port (or [IPv6]:port)"));
  }
  *host = std::string(h);
  *port = static_cast<uint16_t>(n);
  return absl::OkStatus();
}

absl::Status FollowStoredSource(const BinlogStore& store, UpstreamOptions* options) {
  absl::StatusOr<EraEntry> current = store.CurrentEraEntry();
  if (absl::IsNotFound(current.status()) && store.era() == 0) return absl::OkStatus();
  BR_RETURN_IF_ERROR(current.status());
  const uint32_t era = store.era();
  const std::string configured = CandidateAddress(options->connect);
  options->switches_before = era;
  options->last_switch_before = current->switched_at > 0
                                    ? absl::FromUnixSeconds(current->switched_at)
                                    : absl::InfinitePast();
  // Every server an era left, as its entry recorded it. An entry written
  // before binrelay recorded it: era 1 left [source] host, if that is not
  // the server followed now.
  auto leave = [options](const std::string& address, uint32_t server_id) {
    if (!address.empty() &&
        std::find(options->left.begin(), options->left.end(), address) == options->left.end()) {
      options->left.push_back(address);
    }
    if (server_id != 0 && std::find(options->left_server_ids.begin(),
                                    options->left_server_ids.end(),
                                    server_id) == options->left_server_ids.end()) {
      options->left_server_ids.push_back(server_id);
    }
  };
  for (uint32_t e = 1; e <= era; ++e) {
    absl::StatusOr<EraEntry> entry = e == era ? current : ReadEraEntry(store.dir(), e);
    if (!entry.ok()) {
      spdlog::warn("upstream: {}; the server era {} left is not known, so a failover could "
                   "choose it again", std::string(entry.status().message()), e);
      continue;
    }
    std::string left = entry->left_address;
    if (left.empty() && e == 1 && configured != current->source_address) left = configured;
    leave(left, entry->left_server_id);
  }
  std::erase(options->left, current->source_address);
  std::erase(options->left_server_ids, current->server_id);
  if (current->source_address.empty()) {
    spdlog::warn("upstream: store era {} does not record which server it follows (written by an "
                 "older binrelay); following [source] host {}. If that is the server binrelay "
                 "switched away from, re-point with CHANGE MASTER TO ... MASTER_USE_GTID on the "
                 "listener", era, configured);
    return absl::OkStatus();
  }
  if (current->source_address == configured) return absl::OkStatus();
  protocol::ConnectOptions next = options->connect;
  bool found = false;
  for (const protocol::ConnectOptions& c : options->candidates) {
    if (CandidateAddress(c) == current->source_address) {
      next = c;
      found = true;
      break;
    }
  }
  if (!found) {
    absl::Status parsed = ParseSourceAddress(current->source_address, &next.host, &next.port);
    if (!parsed.ok()) {
      return absl::DataLossError(absl::StrCat(
          "store ", store.dir(), ": era ", era, " records its source as ", parsed.message(),
          "; fix the first field of the third line of ", store.dir(), "/", EraDirName(era), "/",
          AV(kEraEntryName), " to the host:port binrelay follows"));
    }
  }
  spdlog::warn("upstream: following {}, the server binrelay switched to (store era {}), not "
               "[source] host {}; binrelay never goes back to a server it left on its own: "
               "CHANGE MASTER TO on the listener re-points it",
               current->source_address, era, configured);
  options->connect = std::move(next);
  options->source_from_store = true;
  return absl::OkStatus();
}

}  // namespace binrelay::replication
