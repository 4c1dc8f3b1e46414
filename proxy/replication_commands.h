// Parsers of the replication commands a replica sends to a primary
// (MySQL sql/rpl_source.cc register_replica, com_binlog_dump,
// com_binlog_dump_gtid): COM_REGISTER_SLAVE, COM_BINLOG_DUMP and
// COM_BINLOG_DUMP_GTID, as the server side reads them. The inverse builders
// are replication/dump_commands.h, which the tests use for round trips.
//
// Thread safety: pure functions.
// Lifetime: the returned structs own their strings (a dump request outlives
// the packet buffer it came from: it is handed to the dump).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "proxy/dump_request.h"

namespace binrelay::proxy {

// FN_REFLEN: the longest file name the source accepts in a dump request.
inline constexpr size_t kMaxBinlogNameLength = 512;

struct ReplicaRegistration {
  uint32_t server_id = 0;
  std::string report_host;
  std::string report_user;
  std::string report_password;
  uint16_t report_port = 0;
  uint32_t master_id = 0;
};

// Payloads include the command byte. Truncation is OutOfRange naming the
// field and byte offset; a wrong command byte is InvalidArgument.
//
// COM_BINLOG_DUMP's file name is read as MariaDB and MySQL read it: up to the
// first zero byte (some clients terminate it with one; the rest of the
// packet is ignored). A name of kMaxBinlogNameLength bytes or more is
// InvalidArgument: the source then answers OK and ends the connection.
absl::StatusOr<ReplicaRegistration> ParseRegisterSlave(std::string_view payload);
absl::StatusOr<DumpRequest> ParseBinlogDump(std::string_view payload);
absl::StatusOr<DumpRequest> ParseBinlogDumpGtid(std::string_view payload);

}  // namespace binrelay::proxy
