// Parsers of the replication commands a replica sends to a primary
// (protocol.md §5.1-§5.3): COM_REGISTER_SLAVE, COM_BINLOG_DUMP and
// COM_BINLOG_DUMP_GTID, as the server side reads them. The inverse builders
// are replication/dump_commands.h, which the tests use for round trips.
//
// Thread safety: pure functions.
// Lifetime: the returned structs own their strings (a dump request outlives
// the packet buffer it came from: it is handed to the dump).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace binrelay::proxy {

struct ReplicaRegistration {
  uint32_t server_id = 0;
  std::string report_host;
  std::string report_user;
  std::string report_password;
  uint16_t report_port = 0;
  uint32_t master_id = 0;
};

struct DumpRequest {
  enum class Kind { kFilePosition, kMySqlGtid };
  Kind kind = Kind::kFilePosition;
  uint32_t server_id = 0;  // 0 also means non-blocking (both servers)
  uint16_t flags = 0;      // 0x01 NON_BLOCK; 0x02 MySQL HEARTBEAT_V2 / MariaDB ANNOTATE_ROWS
  std::string file;        // empty = the oldest binlog
  uint64_t position = 0;
  std::string encoded_gtid_set;  // kMySqlGtid: the set as sent (protocol.md §5.3)
  // The connection's user variables at dump time (lower-cased names without
  // '@'): master/source_binlog_checksum, master_heartbeat_period (ns),
  // slave_connect_state, mariadb_slave_capability, ...
  std::map<std::string, std::string> user_variables;
  std::string peer;  // host:port of the client, for logs and status

  bool NonBlocking() const { return (flags & 0x01) != 0 || server_id == 0; }
};

// Payloads include the command byte. Truncation is OutOfRange naming the
// field and byte offset; a wrong command byte is InvalidArgument.
absl::StatusOr<ReplicaRegistration> ParseRegisterSlave(std::string_view payload);
absl::StatusOr<DumpRequest> ParseBinlogDump(std::string_view payload);
absl::StatusOr<DumpRequest> ParseBinlogDumpGtid(std::string_view payload);

}  // namespace binrelay::proxy
