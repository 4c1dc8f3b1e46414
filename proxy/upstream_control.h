// UpstreamControl: what the admin statements may ask of binrelay's upstream
// session (STOP SLAVE / START SLAVE and their REPLICA spellings). Declared
// here, where the statements are answered; `binrelay serve` implements it
// over its replication::UpstreamSession.
//
// Thread safety: implementations are called from session threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace binrelay::proxy {

// CHANGE MASTER TO's options binrelay takes; unset ones stay as they are.
struct SourceChange {
  std::optional<std::string> host;
  std::optional<uint16_t> port;
  std::optional<std::string> user;
  std::optional<std::string> password;
  std::optional<bool> tls;  // MASTER_SSL: 1 requires TLS, 0 connects without
  // MASTER_USE_GTID = slave_pos / current_pos, SOURCE_AUTO_POSITION = 1:
  // the server named may be another one (a failover); binrelay continues on
  // it after the GTIDs it stored. no / 0: by position, the same server.
  std::optional<bool> by_gtid;
};

// Which servers a failover would not choose, and the one followed now, for
// SHOW RELAY SOURCES to decide as the upstream would.
struct FollowedSources {
  std::string current;  // host:port of the server whose files the store holds now
  std::vector<std::string> left;  // switched away from, by address
  std::vector<uint32_t> left_server_ids;  // and by server_id
};

class UpstreamControl {
 public:
  virtual ~UpstreamControl() = default;
  // Leaves the source's stream and stays away until Start; returns once the
  // upstream has stopped (a transaction cut there is dropped from the
  // store and read again on Start). OK when already stopped.
  virtual absl::Status Stop() = 0;
  // Connects again and resumes after the last stored transaction. OK when
  // already running.
  virtual absl::Status Start() = 0;
  // CHANGE MASTER TO while stopped: the next Start connects with these
  // settings (and checks the server again). FailedPrecondition while the
  // upstream runs.
  virtual absl::Status Change(const SourceChange& change) = 0;
  virtual FollowedSources Followed() const = 0;
};

}  // namespace binrelay::proxy
