#include "proxy/slave_status.h"

#include <cmath>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "protocol/status_macros.h"
#include "replication/store_era.h"

namespace binrelay::proxy {
namespace {

using Cell = std::optional<std::string>;

// Column values by MariaDB name; MySQL names are derived from them.
struct Row {
  std::vector<std::pair<std::string, Cell>> cells;
  void Add(std::string name, Cell v) { cells.emplace_back(std::move(name), std::move(v)); }
  Cell Get(std::string_view name) const {
    for (const auto& [n, v] : cells) {
      if (n == name) return v;
    }
    return std::string();
  }
};

std::string Num(uint64_t v) { return absl::StrCat(v); }

Row Values(const RelayStatus& s) {
  const bool streaming = s.upstream_state == replication::UpstreamState::kStreaming;
  // STOP SLAVE (kPaused) shows as a stopped IO thread, as on a server.
  const bool paused = s.upstream_state == replication::UpstreamState::kPaused;
  const bool stopped = paused || s.upstream_state == replication::UpstreamState::kStopped;
  Row r;
  // MySQL 8.0.26 renamed the states (master -> source); MariaDB did not.
  const std::string_view source = s.source_is_mariadb ? "master" : "source";
  r.Add("Slave_IO_State", streaming ? absl::StrCat("Waiting for ", AV(source), " to send event")
                          : stopped ? ""
                                    : absl::StrCat("Connecting to ", AV(source)));
  r.Add("Master_Host", s.source_host);
  r.Add("Master_User", s.source_user);
  r.Add("Master_Port", Num(s.source_port));
  r.Add("Connect_Retry", Num(s.connect_retry_seconds));
  r.Add("Master_Log_File", s.received_file);
  r.Add("Read_Master_Log_Pos", Num(s.received_offset));
  r.Add("Relay_Log_File", s.stored_file);
  r.Add("Relay_Log_Pos", Num(s.stored_offset));
  // The source's name, as Master_Log_File (tools compare the two); the
  // relay log file is binrelay's, with its store era.
  r.Add("Relay_Master_Log_File", std::string(replication::SourceNameOf(s.stored_file)));
  r.Add("Slave_IO_Running", streaming ? "Yes" : stopped ? "No" : "Connecting");
  r.Add("Slave_SQL_Running", s.storing ? "Yes" : "No");
  for (const char* n : {"Replicate_Do_DB", "Replicate_Ignore_DB", "Replicate_Do_Table",
                        "Replicate_Ignore_Table", "Replicate_Wild_Do_Table",
                        "Replicate_Wild_Ignore_Table"}) {
    r.Add(n, "");
  }
  r.Add("Last_Errno", s.storing ? "0" : "1105");
  r.Add("Last_Error", s.storing ? "" : s.store_error);
  r.Add("Skip_Counter", "0");
  r.Add("Exec_Master_Log_Pos", Num(s.stored_offset));
  r.Add("Relay_Log_Space", Num(s.stored_bytes));
  r.Add("Until_Condition", "None");
  r.Add("Until_Log_File", "");
  r.Add("Until_Log_Pos", "0");
  r.Add("Master_SSL_Allowed", s.source_tls ? "Yes" : "No");
  for (const char* n : {"Master_SSL_CA_File", "Master_SSL_CA_Path", "Master_SSL_Cert",
                        "Master_SSL_Cipher", "Master_SSL_Key"}) {
    r.Add(n, "");
  }
  // NULL while the IO thread does not run, as servers show it.
  r.Add("Seconds_Behind_Master",
        streaming ? Cell(Num(static_cast<uint64_t>(std::llround(s.seconds_behind_source))))
                  : std::nullopt);
  r.Add("Master_SSL_Verify_Server_Cert", "No");
  // Kept while stopped, as a server keeps Last_IO_Error until START SLAVE.
  const bool io_error = !s.last_error.empty() && !streaming;
  r.Add("Last_IO_Errno", io_error ? "2003" : "0");
  r.Add("Last_IO_Error", io_error ? s.last_error : "");
  r.Add("Last_SQL_Errno", s.storing ? "0" : "1105");
  r.Add("Last_SQL_Error", s.storing ? "" : s.store_error);
  r.Add("Replicate_Ignore_Server_Ids", "");
  r.Add("Master_Server_Id", Num(s.source_server_id));
  return r;
}

ResultSet FromNames(const Row& r, const std::vector<std::string>& names,
                    const std::vector<std::pair<std::string, Cell>>& extra) {
  ResultSet rs;
  protocol::TextRow row;
  for (const std::string& n : names) {
    rs.columns.push_back(n);
    bool found = false;
    for (const auto& [en, v] : extra) {
      if (en == n) {
        row.push_back(v);
        found = true;
      }
    }
    if (!found) row.push_back(r.Get(n));
  }
  rs.rows.push_back(std::move(row));
  return rs;
}

// MariaDB 10.11 (sql/slave.cc show_master_info_get_fields).
const std::vector<std::string>& MariaDbColumns() {
  static const auto* cols = new std::vector<std::string>{
      "Slave_IO_State", "Master_Host", "Master_User", "Master_Port", "Connect_Retry",
      "Master_Log_File", "Read_Master_Log_Pos", "Relay_Log_File", "Relay_Log_Pos",
      "Relay_Master_Log_File", "Slave_IO_Running", "Slave_SQL_Running", "Replicate_Do_DB",
      "Replicate_Ignore_DB", "Replicate_Do_Table", "Replicate_Ignore_Table",
      "Replicate_Wild_Do_Table", "Replicate_Wild_Ignore_Table", "Last_Errno", "Last_Error",
      "Skip_Counter", "Exec_Master_Log_Pos", "Relay_Log_Space", "Until_Condition",
      "Until_Log_File", "Until_Log_Pos", "Master_SSL_Allowed", "Master_SSL_CA_File",
      "Master_SSL_CA_Path", "Master_SSL_Cert", "Master_SSL_Cipher", "Master_SSL_Key",
      "Seconds_Behind_Master", "Master_SSL_Verify_Server_Cert", "Last_IO_Errno",
      "Last_IO_Error", "Last_SQL_Errno", "Last_SQL_Error", "Replicate_Ignore_Server_Ids",
      "Master_Server_Id", "Master_SSL_Crl", "Master_SSL_Crlpath", "Using_Gtid", "Gtid_IO_Pos",
      "Replicate_Do_Domain_Ids", "Replicate_Ignore_Domain_Ids", "Parallel_Mode", "SQL_Delay",
      "SQL_Remaining_Delay", "Slave_SQL_Running_State", "Slave_DDL_Groups",
      "Slave_Non_Transactional_Groups", "Slave_Transactional_Groups", "Replicate_Rewrite_DB"};
  return *cols;
}

// MySQL 8.0's SHOW SLAVE STATUS; SHOW REPLICA STATUS renames Master to
// Source and Slave to Replica.
const std::vector<std::string>& MysqlColumns() {
  static const auto* cols = new std::vector<std::string>{
      "Slave_IO_State", "Master_Host", "Master_User", "Master_Port", "Connect_Retry",
      "Master_Log_File", "Read_Master_Log_Pos", "Relay_Log_File", "Relay_Log_Pos",
      "Relay_Master_Log_File", "Slave_IO_Running", "Slave_SQL_Running", "Replicate_Do_DB",
      "Replicate_Ignore_DB", "Replicate_Do_Table", "Replicate_Ignore_Table",
      "Replicate_Wild_Do_Table", "Replicate_Wild_Ignore_Table", "Last_Errno", "Last_Error",
      "Skip_Counter", "Exec_Master_Log_Pos", "Relay_Log_Space", "Until_Condition",
      "Until_Log_File", "Until_Log_Pos", "Master_SSL_Allowed", "Master_SSL_CA_File",
      "Master_SSL_CA_Path", "Master_SSL_Cert", "Master_SSL_Cipher", "Master_SSL_Key",
      "Seconds_Behind_Master", "Master_SSL_Verify_Server_Cert", "Last_IO_Errno",
      "Last_IO_Error", "Last_SQL_Errno", "Last_SQL_Error", "Replicate_Ignore_Server_Ids",
      "Master_Server_Id", "Master_UUID", "Master_Info_File", "SQL_Delay", "SQL_Remaining_Delay",
      "Slave_SQL_Running_State", "Master_Retry_Count", "Master_Bind", "Last_IO_Error_Timestamp",
      "Last_SQL_Error_Timestamp", "Master_SSL_Crl", "Master_SSL_Crlpath", "Retrieved_Gtid_Set",
      "Executed_Gtid_Set", "Auto_Position", "Replicate_Rewrite_DB", "Channel_Name",
      "Master_TLS_Version", "Master_public_key_path", "Get_master_public_key",
      "Network_Namespace"};
  return *cols;
}

std::string ReplicaName(const std::string& mysql_name) {
  return absl::StrReplaceAll(mysql_name, {{"Master", "Source"},
                                          {"master", "source"},
                                          {"Slave", "Replica"},
                                          {"slave", "replica"}});
}

}  // namespace

// Columns no server has, after all of theirs (clients read by name): the
// switches to another source by GTID after a failover.
void AddSwitchColumns(const RelayStatus& s, ResultSet* rs) {
  rs->columns.push_back("Binrelay_Source_Switches");
  rs->columns.push_back("Binrelay_Last_Source_Switch");
  rs->rows[0].push_back(Num(s.source_switches));
  rs->rows[0].push_back(SwitchTime(s));
}

ResultSet SlaveStatusResultSet(const RelayStatus& s, bool replica_keyword, bool all) {
  Row r = Values(s);
  if (s.source_is_mariadb) {
    std::vector<std::pair<std::string, Cell>> extra = {
        {"Using_Gtid", "No"},
        {"Gtid_IO_Pos", s.stored_gtids.PositionText()},
        {"Parallel_Mode", "optimistic"},
        {"SQL_Delay", "0"},
        {"SQL_Remaining_Delay", std::nullopt},
        {"Slave_SQL_Running_State",
         s.storing ? "Slave has read all relay log; waiting for more updates" : ""},
        {"Slave_DDL_Groups", "0"},
        {"Slave_Non_Transactional_Groups", "0"},
        {"Slave_Transactional_Groups", "0"},
    };
    std::vector<std::string> names = MariaDbColumns();
    if (all) {
      // SHOW ALL SLAVES STATUS: Connection_name and Slave_SQL_State first,
      // counters last.
      names.insert(names.begin(), {"Connection_name", "Slave_SQL_State"});
      for (const char* n : {"Retried_transactions", "Max_relay_log_size", "Executed_log_entries",
                            "Slave_received_heartbeats", "Slave_heartbeat_period",
                            "Gtid_Slave_Pos"}) {
        names.push_back(n);
      }
      extra.emplace_back("Connection_name", "");
      extra.emplace_back("Slave_SQL_State",
                         s.storing ? "Slave has read all relay log; waiting for more updates"
                                   : "");
      extra.emplace_back("Retried_transactions", "0");
      extra.emplace_back("Max_relay_log_size", "1073741824");
      extra.emplace_back("Executed_log_entries", Num(s.events_received));
      extra.emplace_back("Slave_received_heartbeats", "0");
      extra.emplace_back("Slave_heartbeat_period", "0.000");
      extra.emplace_back("Gtid_Slave_Pos", s.stored_gtids.PositionText());
    }
    ResultSet rs = FromNames(r, names, extra);
    AddSwitchColumns(s, &rs);
    return rs;
  }
  const std::vector<std::pair<std::string, Cell>> extra = {
      {"Master_UUID", s.source_uuid},
      {"Master_Info_File", "mysql.slave_master_info"},
      {"SQL_Delay", "0"},
      {"SQL_Remaining_Delay", std::nullopt},
      {"Slave_SQL_Running_State",
       s.storing ? "Replica has read all relay log; waiting for more updates" : ""},
      {"Master_Retry_Count", "86400"},
      {"Last_IO_Error_Timestamp", ""},
      {"Last_SQL_Error_Timestamp", ""},
      {"Retrieved_Gtid_Set", s.stored_gtids.PositionText()},
      {"Executed_Gtid_Set", s.stored_gtids.PositionText()},
      {"Auto_Position", "0"},
      {"Get_master_public_key", "0"},
  };
  ResultSet rs = FromNames(r, MysqlColumns(), extra);
  if (replica_keyword) {
    for (std::string& c : rs.columns) c = ReplicaName(c);
  }
  AddSwitchColumns(s, &rs);
  return rs;
}

}  // namespace binrelay::proxy
