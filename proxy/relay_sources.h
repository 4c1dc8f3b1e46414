// SHOW RELAY SOURCES: every server a failover may follow ([source] host
// first, then [source] candidates), probed now, with the verdict the
// failover check gives on each (replication/source_choice.h) against the
// GTIDs binrelay stored: what an operator reads before re-pointing by hand
// or to see why binrelay would refuse a candidate.
//
// Columns: Source, Current (Yes for [source] host), Reachable, Version,
// Server_id, Server_uuid, Read_only, Gtid_state (MariaDB
// @@gtid_binlog_state, MySQL @@gtid_executed), Lacks (stored GTIDs the
// candidate lacks), Beyond (its GTIDs binrelay never stored), Eligible,
// Verdict, Decision (the same on every row: which one would be followed,
// or why none).
//
// Thread safety: blocks on the network (a connection per candidate, all at
// once, each bounded by a 2 s connect and 5 s read timeout); run it on a
// worker.
#pragma once

#include <vector>

#include "protocol/client_connection.h"
#include "proxy/admin_handler.h"
#include "proxy/upstream_control.h"
#include "replication/source_gtids.h"

namespace binrelay::proxy {

// `store_has_binlog`: the store holds at least one file. `followed`: the
// upstream's current source (marked Current) and the servers it left (never
// chosen); null: the first candidate is current, none left.
ResultSet RelaySourcesResultSet(const replication::SourceGtids& stored, bool store_has_binlog,
                                const std::vector<protocol::ConnectOptions>& candidates,
                                bool follow_read_only, const FollowedSources* followed = nullptr);

}  // namespace binrelay::proxy
