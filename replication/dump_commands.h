// Builders for the replication command packets a replica sends (MySQL
// sql/rpl_replica.cc register_slave_on_master, request_dump):
// COM_REGISTER_SLAVE, COM_BINLOG_DUMP and COM_BINLOG_DUMP_GTID. Each returns
// the command payload; framing and sequence ids belong to the connection.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace binrelay::replication {

inline constexpr uint16_t kDumpNonBlock = 0x01;
// MariaDB: send ANNOTATE_ROWS events. MySQL: use HEARTBEAT_V2. Harmless to
// both for a consumer that decodes either.
inline constexpr uint16_t kDumpFlag02 = 0x02;

struct RegisterReplica {
  uint32_t server_id = 0;
  std::string report_host;
  std::string report_user;
  std::string report_password;
  uint16_t report_port = 0;
};

std::string BuildRegisterSlave(const RegisterReplica& r);
std::string BuildBinlogDump(uint32_t server_id, std::string_view file, uint32_t position,
                            uint16_t flags);
std::string BuildBinlogDumpGtid(uint32_t server_id, std::string_view file, uint64_t position,
                                uint16_t flags, std::string_view encoded_gtid_set);

}  // namespace binrelay::replication
