// DumpRequest: one COM_BINLOG_DUMP / COM_BINLOG_DUMP_GTID as the server side
// reads it, with the session settings a dump depends on. Replicas announce
// those settings with user variables before dumping (MariaDB's
// sql/sql_repl.cc reads @master_binlog_checksum, @mariadb_slave_capability,
// @master_heartbeat_period, @slave_connect_state, @slave_gtid_strict_mode,
// @slave_gtid_ignore_duplicates and @slave_until_gtid; MySQL 8.0.26+ also
// the @source_* spellings and @replica_uuid). ReadDumpSettings turns the
// session's variables into typed settings once, so a dump keeps only what it
// uses, never the session's whole variable map.
//
// Thread safety: plain values and a pure function.
// Lifetime: owns its strings (a request outlives the packet it came from).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace binrelay::proxy {

inline constexpr uint16_t kDumpFlagNonBlock = 0x01;
// MariaDB: BINLOG_SEND_ANNOTATE_ROWS_EVENT. MySQL 8.0.26+: the replica
// understands HEARTBEAT_LOG_EVENT_V2.
inline constexpr uint16_t kDumpFlagSecond = 0x02;

// MariaDB's MARIA_SLAVE_CAPABILITY_* (sql/log_event.h): what a replica says it
// understands; 0 for MySQL replicas and every client that does not know
// MariaDB.
namespace maria_capability {
inline constexpr int kUnknown = 0;
inline constexpr int kAnnotate = 1;        // ANNOTATE_ROWS
inline constexpr int kTolerateHoles = 2;   // events may be left out of the stream
inline constexpr int kBinlogCheckpoint = 3;
inline constexpr int kGtid = 4;            // GTID and GTID_LIST events
}  // namespace maria_capability

struct DumpSettings {
  // @master_binlog_checksum / @source_binlog_checksum as set; nullopt: the
  // client did not declare checksum support.
  std::optional<std::string> checksum;
  int mariadb_capability = maria_capability::kUnknown;
  std::chrono::nanoseconds heartbeat_period{0};  // 0: no heartbeats
  std::optional<std::string> slave_connect_state;  // set: a MariaDB GTID dump
  bool gtid_strict_mode = false;
  bool gtid_ignore_duplicates = false;
  std::optional<std::string> until_gtid;  // START SLAVE UNTIL master_gtid_pos
  // The session ran SET skip_replication=1: events flagged
  // LOG_EVENT_SKIP_REPLICATION_F are not sent.
  bool skip_replication = false;
  std::string replica_uuid;  // @slave_uuid / @replica_uuid (MySQL replicas)
};

struct DumpRequest {
  enum class Kind { kFilePosition, kMySqlGtid };
  Kind kind = Kind::kFilePosition;
  uint32_t server_id = 0;  // 0 also means non-blocking (both servers)
  uint16_t flags = 0;
  std::string file;        // empty = the oldest binlog
  uint64_t position = 0;
  std::string encoded_gtid_set;  // kMySqlGtid: the set as sent (Gtid_set::encode)
  DumpSettings settings;
  std::string peer;  // host:port of the client, for logs and status
  uint32_t connection_id = 0;  // binrelay's id of the connection (KILL, processlist)

  bool NonBlocking() const { return (flags & kDumpFlagNonBlock) != 0 || server_id == 0; }
};

// User variables of a session: lower-cased names without '@', values as
// text (how binrelay records SET @v = expr).
using UserVariables = std::map<std::string, std::string, std::less<>>;

// The dump settings a session's variables and system settings give, read as
// MariaDB reads them (user_var_entry::val_int: a leading integer, 0 when
// there is none; a decimal rounds).
DumpSettings ReadDumpSettings(const UserVariables& vars, bool skip_replication);

// val_int of a user variable holding `text` (see ReadDumpSettings).
int64_t UserVariableAsInt(std::string_view text);

}  // namespace binrelay::proxy
