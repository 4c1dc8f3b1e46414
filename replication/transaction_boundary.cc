#include "replication/transaction_boundary.h"

#include "protocol/event_type.h"
#include "protocol/status_macros.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "protocol/gtid_events.h"
#include "protocol/query_event.h"

namespace binrelay::replication {

absl::StatusOr<bool> TransactionBoundary::OnEvent(const protocol::EventView& event,
                                                  const protocol::FormatDescription& fde,
                                                  const BinlogPosition& end) {
  bool ended = false;
  switch (event.type()) {
    case protocol::kGtidEvent:
    case protocol::kAnonymousGtidEvent:
    case protocol::kGtidTaggedEvent:
      // A GTID opens a group; resuming between it and its statements would
      // lose the transaction's GTID.
      group_open_ = true;
      break;
    case protocol::kMariaGtidEvent: {
      BR_ASSIGN_OR_RETURN(protocol::MariaGtid g, protocol::ParseMariaGtid(event));
      group_open_ = true;
      statement_open_ = !g.standalone();  // a non-standalone MariaDB GTID replaces BEGIN
      break;
    }
    case protocol::kQueryEvent:
    case protocol::kQueryCompressedEvent: {
      BR_ASSIGN_OR_RETURN(protocol::QueryEvent q, protocol::ParseQueryEvent(event, fde, &scratch_));
      switch (protocol::ClassifyStatement(q.query)) {
        case protocol::StatementKind::kBegin:
          statement_open_ = true;
          break;
        case protocol::StatementKind::kCommit:
        case protocol::StatementKind::kRollback:
          ended = true;
          break;
        case protocol::StatementKind::kXa:
          // MariaDB logs an XA transaction's first part up to XA PREPARE.
          ended = absl::StartsWithIgnoreCase(absl::StripLeadingAsciiWhitespace(AV(q.query)),
                                             "XA PREPARE");
          break;
        case protocol::StatementKind::kSavepoint:
          break;
        case protocol::StatementKind::kDdl:
        case protocol::StatementKind::kOther:
          ended = !statement_open_;  // DDL or another standalone statement
          break;
      }
      break;
    }
    case protocol::kXidEvent:
    case protocol::kXaPrepareEvent:
      ended = true;
      break;
    case protocol::kTransactionPayloadEvent:
      ended = !statement_open_;  // a whole compressed transaction
      break;
    default:
      break;
  }
  if (ended) {
    group_open_ = false;
    statement_open_ = false;
  }
  if (!in_transaction() && end.offset != 0) last_boundary_ = end;
  return ended;
}

}  // namespace binrelay::replication
