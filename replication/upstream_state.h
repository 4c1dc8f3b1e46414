// UpstreamState: what the upstream session (upstream_session.h) is doing,
// as status output shows it. A type, not its name, crosses into proxy/
// (SHOW SLAVE STATUS, /status, /metrics) and cli/.
#pragma once

#include <string_view>

namespace binrelay::replication {

enum class UpstreamState {
  kUnknown,       // no upstream session reports (a store served on its own)
  kConnecting,    // the first connection and preflight
  kStreaming,     // receiving the source's binlog
  kReconnecting,  // the stream broke; retrying
  kPaused,        // disconnected by STOP SLAVE / STOP REPLICA until START
  kStopped,       // ended (binrelay is shutting down, or a fatal error)
};

// "unknown", "connecting", "streaming", "reconnecting", "paused", "stopped".
constexpr std::string_view UpstreamStateName(UpstreamState s) {
  switch (s) {
    case UpstreamState::kUnknown: return "unknown";
    case UpstreamState::kConnecting: return "connecting";
    case UpstreamState::kStreaming: return "streaming";
    case UpstreamState::kReconnecting: return "reconnecting";
    case UpstreamState::kPaused: return "paused";
    case UpstreamState::kStopped: return "stopped";
  }
  return "unknown";
}

}  // namespace binrelay::replication
