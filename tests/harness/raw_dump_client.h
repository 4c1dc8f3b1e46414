// RawDumpClient: a replication client at the packet level, for tests that
// send the same dump request to a real MariaDB source and to binrelay and
// compare what comes back event by event. It runs the request's setup
// statements (SET @master_binlog_checksum, @mariadb_slave_capability, ...),
// sends the dump command payload exactly as given, and records every packet
// until EOF, ERR, the connection closing, or the timeout.
//
// CompareDumps allows exactly what a relay may do differently: artificial
// events (LOG_EVENT_ARTIFICIAL_F, and heartbeats) may differ in their
// timestamp and server_id, hence in their CRC32; everything else (type,
// length, log_pos, flags, payload of every event, the order, and how the
// stream ended) must be equal.
//
// Thread safety: plain functions; one call per connection.
// Lifetime: results own their bytes.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "protocol/client_connection.h"
#include "protocol/server_error.h"

namespace binrelay::testing {

struct DumpScenario {
  std::string name;                    // for failure messages
  std::vector<std::string> setup_sql;  // run before the dump command
  std::string command;                 // COM_BINLOG_DUMP(_GTID) payload, command byte first
  std::chrono::milliseconds timeout{10000};
};

struct DumpCapture {
  std::vector<std::string> events;  // every 0x00 packet minus its status byte
  std::optional<protocol::ServerError> error;  // the ERR that ended it
  std::optional<protocol::ServerError> setup_error;  // a setup statement failed
  bool eof = false;       // ended with EOF
  bool closed = false;    // the server closed the connection without ERR/EOF
  bool timed_out = false;
  std::string Describe() const;  // a one-line summary
};

absl::StatusOr<DumpCapture> CaptureDump(const protocol::ConnectOptions& server,
                                        const DumpScenario& scenario);

// "" when `relay` is what `source` is, up to what a relay may change (see the
// file comment); else the first difference, naming the event index, its
// type and offsets.
std::string CompareDumps(const DumpCapture& source, const DumpCapture& relay,
                         bool compare_error_messages = false);

}  // namespace binrelay::testing
