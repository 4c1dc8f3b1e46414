// The few fields of QUERY and GTID events that transaction tracking needs:
// the statement text and default schema of a QUERY, the GTID text of MySQL
// (33/34/42) and MariaDB (162) GTID events, and MariaDB's STANDALONE flag.
// Thread safety: pure functions.
// Lifetime: QueryText views point into the event.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "protocol/event_header.h"
#include "protocol/format_description.h"

namespace binrelay::replication {

struct QueryText {
  std::string_view db;
  std::string_view query;  // empty for QUERY_COMPRESSED (165): text is zlib data
};

absl::StatusOr<QueryText> ReadQueryText(const protocol::EventView& event,
                                        const protocol::FormatDescription& fde);

struct GtidInfo {
  std::string text;         // "0-1-100" or "uuid:5"; empty for ANONYMOUS_GTID
  bool standalone = false;  // MariaDB: a group without BEGIN (DDL)
};

absl::StatusOr<GtidInfo> ReadGtid(const protocol::EventView& event);

enum class StatementKind { kBegin, kCommit, kRollback, kXaEnd, kOther };
StatementKind ClassifyStatement(std::string_view query);

}  // namespace binrelay::replication
