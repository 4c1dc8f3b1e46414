// FollowStoredSource: after a switch to another server (store_era.h), a
// restart of binrelay continues on the server the store's current era came
// from, not on [source] host, the server it left: that one may be back,
// writable, with transactions nobody else has. As a MySQL or MariaDB
// replica keeps its source in its connection metadata across restarts
// (master.info), whatever the startup options say.
//
// Thread safety: call before the session starts; reads the store's era
// entries.
#pragma once

#include "absl/status/status.h"
#include "replication/binlog_store.h"
#include "replication/upstream_session.h"

namespace binrelay::replication {

// Points `options->connect` at the current era's source (taking the
// matching entry of `options->candidates` if there is one, else the
// [source] settings with that host and port), lists every server an era
// left (as its entry recorded it) in `options->left` and
// `left_server_ids`, and carries the switch count and time into
// `options->switches_before` / `last_switch_before`. Era 0: nothing to do.
// An entry that recorded no address (written before binrelay kept it):
// [source] host is kept, with a warning.
absl::Status FollowStoredSource(const BinlogStore& store, UpstreamOptions* options);

// "host:port" or "[v6]:port" (CandidateAddress's spelling) into host and
// port; InvalidArgument for anything else.
absl::Status ParseSourceAddress(std::string_view address, std::string* host, uint16_t* port);

}  // namespace binrelay::replication
