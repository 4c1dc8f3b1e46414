// RelayStatus: one snapshot of what binrelay serve is doing, and its two
// renderings: JSON for GET /status (and SHOW RELAY STATUS's columns) and the
// Prometheus text format for GET /metrics.
//
// Thread safety: plain values and pure functions. StatusProvider
// implementations must be callable from the HTTP thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "replication/source_gtids.h"
#include "replication/upstream_state.h"

namespace binrelay::proxy {

struct ConsumerStatus {
  std::string name;      // "replica 10.0.0.7:51234 server_id 7", "apply shop.orders"
  std::string file;      // position the consumer has read up to
  uint64_t offset = 0;
  uint64_t lag_bytes = 0;
  double lag_seconds = 0;
};

// An apply pipeline (apply/pipeline.h), as status shows it.
struct ApplyStatus {
  std::string name;
  // What the pipeline is doing, for people ("running", "paused at f:4",
  // "waiting for the target"); `failed` is the fact a machine reads.
  std::string state;
  bool failed = false;  // stopped by an error (last_error says which)
  std::string last_error;
  std::string target;
  std::string tables;
  std::string flushed_file;
  uint64_t flushed_offset = 0;
  std::string read_file;
  uint64_t read_offset = 0;
  double lag_seconds = 0;
  uint64_t lag_bytes = 0;
  uint64_t buffered_keys = 0;
  uint64_t buffered_bytes = 0;
  uint64_t parked = 0;
  uint64_t target_warnings = 0;  // statements the target ran with warnings
  uint64_t xa_held = 0;  // undecided prepared XA transactions holding the checkpoint
  uint64_t deferred = 0;  // changes held back while a move copies their chunk
  uint64_t changes_read = 0;
  uint64_t rows_written = 0;
  uint64_t drains = 0;
  double last_flush_seconds = 0;
  uint64_t concurrency = 0;
  uint64_t batch_rows = 0;
  std::string upsert_protocol;  // bulk, prepared or text (why)
  std::vector<std::pair<int, uint64_t>> retries;  // by error code
  // changes read per row written (1 when nothing was written yet)
  double dedup_ratio() const {
    return rows_written == 0 ? 1.0 : static_cast<double>(changes_read) / rows_written;
  }
};

// A move of tables (apply/table_move.h), as status shows it; its apply
// pipeline is listed among the pipelines under the same name.
struct MoveProgress {
  std::string name;
  std::string phase;   // the phase's name, for people
  bool done = false;   // cut over: the move's job is finished
  std::string error;
  std::string tables;
  std::string cutover;
  uint64_t rows_estimate = 0;
  uint64_t rows_copied = 0;
  uint64_t chunks_copied = 0;
  uint64_t rows_left_to_checksum = 0;  // not copied on a taken UNIQUE value
  double copy_rows_per_second = 0;
  double eta_seconds = 0;  // copy phase: estimated rows left at the current rate
  uint64_t changes_dropped = 0;
  uint64_t chunks_checked = 0;
  uint64_t chunks_total = 0;
  uint64_t chunks_differing = 0;
  uint64_t chunks_repaired = 0;
  uint64_t cutover_attempts = 0;
  double apply_lag_seconds = 0;
};

struct RelayStatus {
  replication::UpstreamState upstream_state = replication::UpstreamState::kUnknown;
  std::string source;          // host:port
  // For SHOW SLAVE STATUS: binrelay is a replica of its source.
  std::string source_host;
  uint16_t source_port = 0;
  std::string source_user;
  uint32_t source_server_id = 0;   // as its preflight read it (0: not yet)
  std::string source_uuid;
  bool source_is_mariadb = true;
  bool source_tls = false;         // the connection to the source is encrypted
  uint64_t connect_retry_seconds = 0;
  replication::SourceGtids stored_gtids;  // GTID state at the durable end
  bool storing = true;             // the store accepts appends (false: e.g. disk full)
  std::string store_error;
  absl::Time last_error_time;      // InfinitePast: none
  absl::Time started;              // when serve started (Uptime)
  uint64_t connections = 0;        // open listener connections
  std::string received_file;
  uint64_t received_offset = 0;
  std::string stored_file;     // durable end
  uint64_t stored_offset = 0;
  double seconds_behind_source = 0;
  uint64_t events_received = 0;
  uint64_t bytes_received = 0;
  uint64_t stored_bytes = 0;
  uint64_t stored_files = 0;
  uint64_t reconnects = 0;
  // Servers followed by GTID after the first (CHANGE MASTER TO ...
  // MASTER_USE_GTID), and when the last switch began (InfinitePast: none).
  uint64_t source_switches = 0;
  absl::Time last_source_switch = absl::InfinitePast();
  uint64_t purges = 0;
  std::string last_error;
  std::vector<ConsumerStatus> consumers;
  std::vector<ApplyStatus> pipelines;
  std::vector<MoveProgress> moves;
};

// One line per pipeline for SHOW RELAY STATUS's pipelines column.
std::string SummarizePipelines(const RelayStatus& s);

class StatusProvider {
 public:
  virtual ~StatusProvider() = default;
  virtual RelayStatus Snapshot() const = 0;
};

std::string RenderStatusJson(const RelayStatus& s);
// When the last switch to another source began, UTC "YYYY-MM-DD hh:mm:ss"
// ("" if none): /status and SHOW SLAVE STATUS.
std::string SwitchTime(const RelayStatus& s);
// One move as a JSON object (an element of /status "moves", and each line
// `binrelay move --json-status` prints).
std::string RenderMoveJson(const MoveProgress& m);
std::string RenderPrometheus(const RelayStatus& s);

}  // namespace binrelay::proxy
