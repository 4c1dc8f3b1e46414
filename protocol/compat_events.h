// The event rewrites a MariaDB primary applies for replicas that cannot
// handle an event (MariaDB's sql/log_event_server.cc:
// Query_log_event::dummy_event, Query_log_event::begin_event and
// Gtid_log_event::make_compatible_event; sql/sql_repl.cc
// send_event_to_slave decides when). Each rewrite keeps the event's length,
// header timestamp, server_id and log_pos, so every later position in the
// stream stays valid for a replica that counts bytes; the CRC32 trailer is
// recomputed when the event has one.
//
// Also the two event-group tests the MariaDB sender skips groups by
// (Log_event::is_part_of_group, Query_log_event::peek_is_commit_rollback).
//
// Thread safety: pure functions.
// Lifetime: the rewrites modify the caller's copy of the event in place.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace binrelay::protocol {

// Replaces the event by a no-op of the same length: a QUERY event holding
// only the comment "# Dummy event replacing event type N that slave cannot
// handle." (truncated or space-padded to fit) or, below 34 bytes without
// CRC, a USER_VAR event setting @`!dummyvar` (or a prefix of that name) to
// NULL. FailedPrecondition when the event is shorter than 25 bytes without
// its CRC (MariaDB then ends the dump with 1236).
absl::Status RewriteAsDummyEvent(std::string* event, bool with_crc);

// What a non-GTID replica gets for a MariaDB GTID event: a standalone one
// (DDL, no COMMIT follows) becomes a dummy event when `need_dummy`, else it
// is dropped (*drop = true); a transactional one becomes a QUERY "BEGIN" of
// the same length (38 or 40 bytes without CRC; anything else, e.g. an XA
// GTID, is DataLoss as on MariaDB: "corrupt event").
absl::Status RewriteGtidForOldReplica(std::string* event, bool with_crc, bool need_dummy,
                                      bool* drop);

// Log_event::is_part_of_group: events that belong to the group of the event
// after them (GTID, INTVAR, RAND, USER_VAR, TABLE_MAP, ANNOTATE_ROWS).
bool IsPartOfEventGroup(uint8_t type);

// Query_log_event::peek_is_commit_rollback: a QUERY event whose statement
// is exactly COMMIT or ROLLBACK (read from the event's tail).
bool QueryIsCommitOrRollback(std::string_view event, bool with_crc);

}  // namespace binrelay::protocol
