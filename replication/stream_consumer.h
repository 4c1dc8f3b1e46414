// StreamConsumer: what every event source (the upstream session, a local
// binlog file, a recorded stream) delivers to: verified events in order, each
// with the position of its end and whether it completes a transaction.
// Sources track transaction boundaries (TransactionBoundary) once, so
// consumers need not re-parse QUERY and GTID events for it.
//
// Thread safety: called from the source's thread only.
// Lifetime: everything in StreamEvent is valid only during the OnEvent call.
#pragma once

#include <optional>

#include "absl/status/status.h"
#include "protocol/event_header.h"
#include "protocol/format_description.h"
#include "replication/binlog_position.h"

namespace binrelay::replication {

struct StreamEvent {
  const protocol::EventView& event;
  const protocol::FormatDescription& format;
  const BinlogPosition& end;  // end of the event in the source's binlog; offset 0 if artificial
  bool ends_transaction;      // the last event of a transaction or standalone statement
  // More of the stream is already received and waiting: a consumer may
  // defer expensive work (an fdatasync) to the end of the burst.
  bool more_buffered = false;
};

class StreamConsumer {
 public:
  virtual ~StreamConsumer() = default;
  virtual absl::Status OnEvent(const StreamEvent& e) = 0;
  // The stream restarts at `resume` (the end of the last complete
  // transaction): drop anything buffered from a transaction after it.
  virtual void OnStreamRestart(const BinlogPosition& resume) = 0;
  // After this consumer failed (e.g. disk full), where the stream must
  // resume: a consumer that lost buffered transactions reports an earlier
  // position than the session's own. nullopt: the session's position.
  virtual std::optional<BinlogPosition> ResumeAfterFailure() const { return std::nullopt; }
  // After OnEvent accepted the format description a dump re-sends when it
  // resumes inside a file (offset 0): whether it was compared with the
  // stored file's and matched. False when it was not checked (no open
  // stored file to compare with): the server is then not known to be the
  // one whose file the consumer holds.
  virtual bool ResumeVerified() const { return false; }
};

}  // namespace binrelay::replication
