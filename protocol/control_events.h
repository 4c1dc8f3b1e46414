// Small event bodies (libbinlogevents/src/control_events.cpp,
// statement_events.cpp; MariaDB sql/log_event.cc): ROTATE, XID,
// HEARTBEAT v1/v2, ROWS_QUERY / ANNOTATE_ROWS, INTVAR, RAND, USER_VAR,
// INCIDENT, STOP, XA_PREPARE, the LOAD DATA family, and a minimal
// TRANSACTION_CONTEXT / VIEW_CHANGE reader (Group Replication only).
//
// Thread safety: pure functions.
// Lifetime: string_views point into the event buffer.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "protocol/event_header.h"
#include "protocol/format_description.h"

namespace binrelay::protocol {

struct RotateEvent {
  uint64_t position = 0;
  std::string_view next_file;
};
// The one reader of ROTATE (binlog v4: MySQL 5.0+ and every MariaDB; the
// 8-byte position of v1 files is not optional there). A ROTATE that names no
// file is refused.
absl::StatusOr<RotateEvent> ParseRotate(const EventView& ev);

absl::StatusOr<uint64_t> ParseXid(const EventView& ev);

struct HeartbeatEvent {
  std::string_view file;
  uint64_t position = 0;  // v1: header log_pos, or MariaDB's 8-byte prefix when log_pos is 0
};
// HEARTBEAT (27, `mariadb` selects the >4 GiB body prefix rule) or
// HEARTBEAT_V2 (41, TLV: 1 file name, 2 position).
absl::StatusOr<HeartbeatEvent> ParseHeartbeat(const EventView& ev, bool mariadb);

// ROWS_QUERY (29: length byte ignored) or ANNOTATE_ROWS (160): SQL text.
absl::StatusOr<std::string_view> ParseRowsQuery(const EventView& ev);

struct IntvarEvent {
  uint8_t type = 0;  // 1 LAST_INSERT_ID, 2 INSERT_ID
  uint64_t value = 0;
};
absl::StatusOr<IntvarEvent> ParseIntvar(const EventView& ev);

struct RandEvent {
  uint64_t seed1 = 0, seed2 = 0;
};
absl::StatusOr<RandEvent> ParseRand(const EventView& ev);

struct UserVarEvent {
  std::string_view name;
  bool is_null = false;
  uint8_t value_type = 0;  // 0 STRING, 1 REAL, 2 INT, 3 ROW, 4 DECIMAL
  uint32_t collation = 0;
  std::string_view value;  // raw bytes (DECIMAL: precision, scale, packed)
  std::optional<uint8_t> flags;  // 0x01 UNSIGNED
};
absl::StatusOr<UserVarEvent> ParseUserVar(const EventView& ev);

struct IncidentEvent {
  uint16_t type = 0;  // 1 LOST_EVENTS
  std::string_view message;
};
absl::StatusOr<IncidentEvent> ParseIncident(const EventView& ev);

struct XaPrepareEvent {
  bool one_phase = false;
  int32_t format_id = 0;
  std::string_view gtrid;
  std::string_view bqual;
};
absl::StatusOr<XaPrepareEvent> ParseXaPrepare(const EventView& ev);

// BEGIN_LOAD_QUERY (17) / APPEND_BLOCK (9) / DELETE_FILE (11).
struct LoadBlockEvent {
  uint32_t file_id = 0;
  std::string_view data;  // empty for DELETE_FILE
};
absl::StatusOr<LoadBlockEvent> ParseLoadBlock(const EventView& ev);

// EXECUTE_LOAD_QUERY (18): the QUERY fields are read with ParseQueryEvent
// semantics by the caller if needed; this returns the load-specific ones.
struct ExecuteLoadQueryEvent {
  uint32_t file_id = 0;
  uint32_t start_pos = 0;
  uint32_t end_pos = 0;
  uint8_t dup_handling = 0;
  std::string_view db;
  std::string_view query;
};
absl::StatusOr<ExecuteLoadQueryEvent> ParseExecuteLoadQuery(const EventView& ev,
                                                           const FormatDescription& fd);

// TRANSACTION_CONTEXT (36) / VIEW_CHANGE (37): only the leading identifier
// (server_uuid / view_id) is read; the rest is certification data binrelay
// does not use. Never fails on a well-framed event.
absl::StatusOr<std::string_view> ParseGroupReplicationId(const EventView& ev);

}  // namespace binrelay::protocol
