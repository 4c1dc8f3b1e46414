// SourceLogin: how apply/ reaches the server binrelay follows now, for its
// metadata reads (table shapes, foreign keys) and a move's copy, checksum
// snapshots and cutover. A function, not a fixed address: after the
// upstream follows another server (CHANGE MASTER TO ... MASTER_USE_GTID,
// automatic failover, or a restart that resumes the store's current era)
// it names that server, where the tables live now.
//
// Thread safety: called from any apply thread; the function must be safe
// to call concurrently (UpstreamSession::followed_options is).
#pragma once

#include <functional>
#include <utility>

#include "protocol/client_connection.h"

namespace binrelay::apply {

using SourceLogin = std::function<protocol::ConnectOptions()>;

// Always `options` (a relay that never switches, a test).
inline SourceLogin FixedSourceLogin(protocol::ConnectOptions options) {
  return [options = std::move(options)] { return options; };
}

}  // namespace binrelay::apply
