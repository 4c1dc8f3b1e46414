// TransactionBoundary: follows the event stream and remembers the position
// just after the last complete transaction. A reconnect resumes there, so a
// transaction is delivered whole or not at all: never skipped, never twice.
//
// Boundaries (both flavours): XID; QUERY COMMIT/ROLLBACK; XA_PREPARE; a QUERY
// outside a transaction (DDL, MariaDB standalone GTID groups); a whole
// TRANSACTION_PAYLOAD. Starts: QUERY BEGIN/XA START, MariaDB GTID without
// the STANDALONE flag. Events outside a transaction (ROTATE, GTID_LIST,
// heartbeats...) move the boundary with them.
//
// Thread safety: single-threaded (owned by the upstream session).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "protocol/event_header.h"
#include "protocol/format_description.h"
#include "replication/binlog_position.h"

namespace binrelay::replication {

class TransactionBoundary {
 public:
  // Feeds one event whose end lies at `end` in the source's binlog. Returns
  // true if a transaction (or a standalone statement) ended with this event.
  absl::StatusOr<bool> OnEvent(const protocol::EventView& event,
                               const protocol::FormatDescription& fde,
                               const BinlogPosition& end);
  // Inside a GTID group or a BEGIN..COMMIT: not a safe place to resume.
  bool in_transaction() const { return group_open_ || statement_open_; }
  // Position after the last complete transaction; empty file if none yet.
  const BinlogPosition& last_boundary() const { return last_boundary_; }
  void Reset(const BinlogPosition& at) {
    last_boundary_ = at;
    group_open_ = false;
    statement_open_ = false;
  }

 private:
  std::string scratch_;  // inflated QUERY_COMPRESSED text
  bool group_open_ = false;      // GTID seen, group not finished
  bool statement_open_ = false;  // BEGIN (or MariaDB GTID) seen
  BinlogPosition last_boundary_;
};

}  // namespace binrelay::replication
