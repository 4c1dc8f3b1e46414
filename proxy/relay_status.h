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

namespace binrelay::proxy {

struct ConsumerStatus {
  std::string name;      // "replica 10.0.0.7:51234 server_id 7", "apply shop.orders"
  std::string file;      // position the consumer has read up to
  uint64_t offset = 0;
  uint64_t lag_bytes = 0;
  double lag_seconds = 0;
};

struct RelayStatus {
  std::string upstream_state;  // "streaming", "connecting", "reconnecting", "stopped"
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
  std::string stored_gtid_state;   // GTID state at the durable end
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
  uint64_t purges = 0;
  std::string last_error;
  std::vector<ConsumerStatus> consumers;
};

class StatusProvider {
 public:
  virtual ~StatusProvider() = default;
  virtual RelayStatus Snapshot() const = 0;
};

std::string RenderStatusJson(const RelayStatus& s);
std::string RenderPrometheus(const RelayStatus& s);

}  // namespace binrelay::proxy
