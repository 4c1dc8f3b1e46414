// QUERY (2) and MariaDB QUERY_COMPRESSED (165) events (libbinlogevents/src/
// statement_events.cpp Query_event; MariaDB sql/log_event.cc
// Query_log_event): post-header,
// status variables, default database and SQL text; plus the statement
// classifiers the transaction tracker and the applier need.
//
// Thread safety: pure functions.
// Lifetime: QueryEvent's views point into the event buffer, except `query`
// of QUERY_COMPRESSED, which points into the caller's `scratch`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "protocol/event_header.h"
#include "protocol/format_description.h"

namespace binrelay::protocol {

struct QueryEvent {
  uint32_t thread_id = 0;
  uint32_t exec_time = 0;
  uint16_t error_code = 0;
  std::string_view status_vars;  // raw block
  std::string_view db;
  std::string_view query;
  // Status variables we decode (others stay in the raw block).
  std::optional<uint32_t> flags2;
  std::optional<uint64_t> sql_mode;
  std::optional<uint16_t> charset_client, collation_connection, collation_server;
  std::string_view time_zone;
  std::optional<uint64_t> ddl_xid;  // MySQL DDL_LOGGED_WITH_XID / MariaDB XID
  // True when an unknown status-variable code stopped the walk (as it stops
  // Query_event's in statement_events.cpp).
  bool status_vars_truncated = false;
};

// Parses QUERY (2) or QUERY_COMPRESSED (165); the compressed SQL text is
// inflated into *scratch (required for 165).
absl::StatusOr<QueryEvent> ParseQueryEvent(const EventView& ev, const FormatDescription& fd,
                                           std::string* scratch = nullptr);

enum class StatementKind : uint8_t {
  kOther,     // DML in statement format, SET, ...
  kBegin,     // BEGIN / START TRANSACTION / XA START
  kCommit,    // COMMIT / XA COMMIT / XA END ... COMMIT
  kRollback,  // ROLLBACK / XA ROLLBACK (not ROLLBACK TO SAVEPOINT)
  kXa,        // XA END / XA PREPARE / XA RECOVER / other XA verbs
  kSavepoint, // SAVEPOINT / ROLLBACK TO / RELEASE SAVEPOINT
  kDdl,       // CREATE/ALTER/DROP/RENAME/TRUNCATE/GRANT/REVOKE/...
};

// Classifies SQL text by its first keywords (case-insensitive, skipping
// leading whitespace and /* */ comments).
StatementKind ClassifyStatement(std::string_view sql);

inline bool IsTransactionControl(std::string_view sql) {
  const StatementKind k = ClassifyStatement(sql);
  return k == StatementKind::kBegin || k == StatementKind::kCommit ||
         k == StatementKind::kRollback || k == StatementKind::kXa;
}
inline bool IsDdl(std::string_view sql) { return ClassifyStatement(sql) == StatementKind::kDdl; }

}  // namespace binrelay::protocol
