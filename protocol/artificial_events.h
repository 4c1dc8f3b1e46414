// Builders of the events a primary invents for a dump stream (MySQL
// sql/rpl_binlog_sender.cc fake_rotate_event, send_format_description_event,
// send_heartbeat_event; MariaDB sql/sql_repl.cc): the fake ROTATE that opens
// every file, the FDE re-sent when a dump starts inside a file, heartbeats,
// and MariaDB's fake GTID_LIST. None
// of them is ever stored; all carry timestamp 0 (except the FDE copy) and
// most the ARTIFICIAL flag, which is how replicas tell them from real events.
//
// `with_crc` is the connection's algorithm (the client's declared
// @master_binlog_checksum), not the file's: fake events precede the FDE.
//
// Thread safety: pure functions.
// Lifetime: results own their bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "protocol/gtid_events.h"

namespace binrelay::protocol {

// ROTATE (4), log_pos 0, ARTIFICIAL: "the stream continues in `file` at
// `position`".
std::string BuildFakeRotate(uint32_t server_id, std::string_view file, uint64_t position,
                            bool with_crc);

// The file's FDE as a dump starting past offset 4 sends it: BINLOG_IN_USE
// cleared, log_pos 0 and `created` 0 (the replica must not take it for a
// source restart), CRC recomputed if the FDE carries one. `fde` is the whole
// stored event; `has_crc`: whether it ends in a CRC32 (checksum-aware source).
absl::StatusOr<std::string> RewriteFdeForMidFileStart(std::string_view fde, bool has_crc);
// The FDE with BINLOG_IN_USE cleared and `created` 0 but its log_pos kept:
// what a MariaDB GTID dump sends while the replica's position is not yet
// reached (so a reconnecting replica keeps its temporary tables).
absl::StatusOr<std::string> RewriteFdeWithoutCreated(std::string_view fde, bool has_crc);

// The FDE as sent at the head of a file: only BINLOG_IN_USE cleared (its CRC
// is computed with the flag clear, so the trailer stays valid).
std::string FdeWithoutInUse(std::string_view fde);

// HEARTBEAT (27): log_pos = the next event's offset in `file`. Past 4 GiB
// MariaDB moves the position into the body (log_pos 0, 8-byte position
// before the name); MySQL has no such form and uses HEARTBEAT_V2 instead.
std::string BuildHeartbeat(uint32_t server_id, std::string_view file, uint64_t position,
                           bool with_crc);
// HEARTBEAT_V2 (41, MySQL 8.0.26+): TLV body with the file name (type 1) and
// the position as a packed integer (type 2).
std::string BuildHeartbeatV2(uint32_t server_id, std::string_view file, uint64_t position,
                             bool with_crc);

// MariaDB GTID_LIST (163), ARTIFICIAL, log_pos = `position` (the offset just
// after the last event the replica has logically passed). `flags` go into
// the top bits of the count word (1 << 28: the UNTIL position was reached).
std::string BuildFakeGtidList(uint32_t server_id, const std::vector<MariaGtidList::Entry>& gtids,
                              uint64_t position, bool with_crc, uint32_t flags = 0);

// MySQL packed integer (net_store_length): the same encoding as the
// protocol's length-encoded integer (byte_cursor.h AppendLenenc).
void AppendPackedInt(std::string* out, uint64_t v);

}  // namespace binrelay::protocol
