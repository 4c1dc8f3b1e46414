// The interfaces a ServerSession needs from the rest of binrelay (the
// consumer declares the narrow interface; the relay implements it):
// AdminHandler answers variables and admin statements, DumpHandler receives
// parsed dump requests.
//
// Thread safety: one handler instance is shared by every connection, and
// connections run on several io threads: implementations must be
// thread-safe. Calls must not block for long (no fsync, no SQL): they run on
// an io thread.
// Lifetime: the handlers must outlive every session using them; results are
// owned by the caller.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "protocol/server_packets.h"
#include "proxy/dump_stream.h"
#include "proxy/dump_request.h"
#include "proxy/replication_commands.h"
#include "proxy/upstream_control.h"

namespace binrelay::proxy {

// A text result set (every value a string or NULL).
struct ResultSet {
  std::vector<std::string> columns;
  std::vector<protocol::TextRow> rows;
};

class AdminHandler {
 public:
  virtual ~AdminHandler() = default;
  // A global system variable by lower-case name (server_id, server_uuid,
  // binlog_checksum, gtid_mode, gtid_domain_id, gtid_binlog_pos,
  // gtid_current_pos, gtid_executed, gtid_purged, ...). nullopt: unknown,
  // answered with ER_UNKNOWN_SYSTEM_VARIABLE (1193), which replicas tolerate
  // for optional variables.
  virtual std::optional<std::string> SystemVariable(std::string_view name) = 0;
  // SHOW MASTER STATUS / SHOW BINARY LOG STATUS.
  virtual absl::StatusOr<ResultSet> MasterStatus() = 0;
  virtual absl::StatusOr<ResultSet> BinaryLogs() = 0;
  // SHOW SLAVE HOSTS / SHOW REPLICAS.
  virtual absl::StatusOr<ResultSet> Replicas() = 0;
  // SHOW RELAY STATUS: upstream state, positions, lag, counters, last error.
  virtual absl::StatusOr<ResultSet> RelayStatus() = 0;
  // SHOW RELAY PIPELINES / SHOW RELAY MOVES: a row per apply pipeline or
  // move, a column per field of its status description.
  virtual absl::StatusOr<ResultSet> RelayPipelines() {
    return absl::UnimplementedError("this server runs no apply pipelines");
  }
  virtual absl::StatusOr<ResultSet> RelayMoves() {
    return absl::UnimplementedError("this server runs no moves");
  }
  // SHOW RELAY SOURCES: a row per server a failover may follow, with its
  // role, GTIDs and the verdict. Blocks (probes servers): runs on a worker.
  virtual absl::StatusOr<ResultSet> RelaySources() {
    return absl::UnimplementedError("this server follows no source");
  }
  virtual absl::Status PurgeBinaryLogsTo(std::string_view file) = 0;
  // CUTOVER MOVE name: NotFound for no such move, FailedPrecondition for a
  // move that will not cut over (cutover = none, done, failed).
  virtual absl::Status CutoverMove(std::string_view name) {
    (void)name;
    return absl::NotFoundError("this binrelay runs no moves");
  }
  // STOP SLAVE / START SLAVE (and REPLICA): binrelay's upstream leaves the
  // source and comes back, resuming after the last stored transaction.
  virtual absl::Status StopUpstream() {
    return absl::FailedPreconditionError("this server has no upstream to stop");
  }
  virtual absl::Status StartUpstream() {
    return absl::FailedPreconditionError("this server has no upstream to start");
  }
  // CHANGE MASTER TO (its options already checked): FailedPrecondition
  // while the upstream runs.
  virtual absl::Status ChangeSource(const SourceChange& change) {
    (void)change;
    return absl::UnimplementedError("this server has no upstream to change");
  }
  // SHOW VARIABLES: every variable SystemVariable answers, sorted by name.
  virtual std::vector<std::pair<std::string, std::string>> AllSystemVariables() { return {}; }
  // SHOW STATUS: binrelay's own status variables (Uptime, Threads_connected,
  // Slave_running, ...), sorted by name.
  virtual std::vector<std::pair<std::string, std::string>> StatusVariables() { return {}; }
  // SHOW SLAVE STATUS (`replica_keyword`: it was SHOW REPLICA STATUS, whose
  // MySQL 8 columns say Source/Replica; `all`: SHOW ALL SLAVES STATUS, with
  // MariaDB's extra columns).
  virtual absl::StatusOr<ResultSet> SlaveStatus(bool replica_keyword, bool all) {
    (void)replica_keyword;
    (void)all;
    return absl::UnimplementedError("SHOW SLAVE STATUS");
  }
  // SHOW GRANTS for the connection's user: what binrelay lets it do.
  virtual absl::StatusOr<ResultSet> Grants(std::string_view user, std::string_view host) {
    (void)user;
    (void)host;
    return absl::UnimplementedError("SHOW GRANTS");
  }
  // MariaDB's binlog_gtid_pos('file', pos); nullopt is SQL NULL.
  virtual absl::StatusOr<std::optional<std::string>> BinlogGtidPos(std::string_view file,
                                                                   uint64_t position) = 0;
  // COM_REGISTER_SLAVE was received (for SHOW SLAVE HOSTS).
  virtual void ReplicaRegistered(const ReplicaRegistration& replica) = 0;
  // The connection that registered `server_id` ended (its dump finished or
  // failed, or it closed): it leaves SHOW SLAVE HOSTS, as on MariaDB. Call
  // once per ReplicaRegistered, when that connection ends.
  virtual void ReplicaDisconnected(uint32_t server_id) { (void)server_id; }
};

class DumpHandler {
 public:
  virtual ~DumpHandler() = default;
  // Validates a dump request and returns the stream the connection then
  // drives. An error is sent to the replica as
  // ER_MASTER_FATAL_ERROR_READING_BINLOG (1236) with the status message, and
  // the connection is closed, as real primaries do.
  virtual absl::StatusOr<std::unique_ptr<DumpStream>> StartDump(const DumpRequest& request) = 0;
};

}  // namespace binrelay::proxy
