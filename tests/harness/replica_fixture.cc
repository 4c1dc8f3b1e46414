#include "tests/harness/replica_fixture.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "protocol/status_macros.h"
#include "tests/harness/sql_conn.h"

namespace binrelay::testing {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// "0-1-10,2-1-5" -> {0: "0-1-10", 2: "2-1-5"}. MariaDB prints at most one
// GTID per domain; the order of domains is not something to compare.
std::map<std::string, std::string> GtidsByDomain(std::string_view set) {
  std::map<std::string, std::string> out;
  for (absl::string_view g : absl::StrSplit(AV(set), ',', absl::SkipWhitespace())) {
    g = absl::StripAsciiWhitespace(g);
    out[std::string(g.substr(0, g.find('-')))] = std::string(g);
  }
  return out;
}

std::string Field(const NamedRow& row, const std::string& name) {
  auto it = row.find(name);
  if (it == row.end()) return "<no column>";
  return it->second.value_or("NULL");
}

absl::StatusOr<std::string> Scalar(ServerSandbox& sb, std::string_view sql) {
  BR_ASSIGN_OR_RETURN(SqlRows rows, sb.Query(sql));
  if (rows.size() != 1 || rows[0].empty()) {
    return absl::InternalError(absl::StrCat("expected one value from: ", AV(sql)));
  }
  return rows[0][0].value_or("");
}

}  // namespace

absl::StatusOr<std::unique_ptr<ServerSandbox>> StartReplicaOf(const MasterEndpoint& master,
                                                               const ReplicaOptions& options) {
  ServerSandboxOptions so;
  so.flavour = options.flavour;
  so.server_id = options.server_id;
  so.tls = false;
  BR_ASSIGN_OR_RETURN(ServerFlavour flavour,
                      ServerFlavour::Find(options.flavour.empty() ? ServerFlavour::kDefault
                                                                  : options.flavour));
  // A silent master (no events, no heartbeats) is given up on quickly;
  // heartbeats come every second. MySQL 8.0.26 renamed the options.
  if (flavour.mysql) {
    so.extra_args = {"--max-allowed-packet=1G", "--replica-max-allowed-packet=1G",
                     "--skip-replica-start", "--replica-net-timeout=10"};
  } else {
    so.extra_args = {"--max-allowed-packet=1G", "--slave-max-allowed-packet=1G",
                     "--skip-slave-start", "--slave-net-timeout=10"};
  }
  so.extra_args.insert(so.extra_args.end(), options.server_args.begin(),
                       options.server_args.end());
  BR_ASSIGN_OR_RETURN(std::unique_ptr<ServerSandbox> replica, ServerSandbox::Start(so));
  const bool my = flavour.mysql;
  std::string change = absl::StrCat(
      my ? "CHANGE REPLICATION SOURCE TO SOURCE_HOST='" : "CHANGE MASTER TO MASTER_HOST='",
      options.host, my ? "', SOURCE_PORT=" : "', MASTER_PORT=",
      master.port, my ? ", SOURCE_USER='" : ", MASTER_USER='", master.user,
      my ? "', SOURCE_PASSWORD='" : "', MASTER_PASSWORD='", master.password,
      my ? "', SOURCE_CONNECT_RETRY=" : "', MASTER_CONNECT_RETRY=", options.connect_retry_seconds,
      my ? ", SOURCE_HEARTBEAT_PERIOD=" : ", MASTER_HEARTBEAT_PERIOD=", options.heartbeat_seconds,
      ", ");
  if (options.tls != ReplicaOptions::Tls::kReleaseDefault) {
    absl::StrAppend(&change, my ? "SOURCE_SSL=" : "MASTER_SSL=",
                    options.tls == ReplicaOptions::Tls::kOn ? "1, " : "0, ");
  }
  if (options.mode == ReplicaOptions::Mode::kFilePosition) {
    absl::StrAppend(&change, my ? "SOURCE_LOG_FILE='" : "MASTER_LOG_FILE='", options.log_file,
                    my ? "', SOURCE_LOG_POS=" : "', MASTER_LOG_POS=", options.log_pos,
                    my ? ", SOURCE_AUTO_POSITION=0" : ", MASTER_USE_GTID=no");
  } else {
    absl::StrAppend(&change, my ? "SOURCE_AUTO_POSITION=1" : "MASTER_USE_GTID=slave_pos");
  }
  if (!options.extra.empty()) absl::StrAppend(&change, ", ", options.extra);
  BR_RETURN_IF_ERROR(replica->Execute(change));
  BR_RETURN_IF_ERROR(replica->Execute(my ? "START REPLICA" : "START SLAVE"));
  return replica;
}

absl::StatusOr<std::string> GtidBinlogPos(ServerSandbox& source) {
  return Scalar(source, "SELECT @@gtid_binlog_pos");
}

std::string DescribeReplica(const ServerSandbox& replica) {
  absl::StatusOr<std::unique_ptr<SqlConn>> conn = SqlConn::Open(replica);
  if (!conn.ok()) return absl::StrCat("(replica unreachable: ", conn.status().ToString(), ")");
  const char* show = replica.IsMysql() ? "SHOW REPLICA STATUS" : "SHOW SLAVE STATUS";
  absl::StatusOr<std::vector<NamedRow>> rows = (*conn)->QueryNamed(show);
  if (!rows.ok()) return absl::StrCat("(", show, " failed: ", rows.status().ToString(), ")");
  if (rows->empty()) return absl::StrCat("(", show, ": no replication configured)");
  const NamedRow& r = (*rows)[0];
  // MySQL's SHOW REPLICA STATUS names Master Source and Slave Replica.
  auto f = [&](std::string name) {
    if (replica.IsMysql()) {
      name = absl::StrReplaceAll(name, {{"Master", "Source"}, {"Slave", "Replica"}});
    }
    return Field(r, name);
  };
  std::string out = absl::StrCat(
      "IO running ", f("Slave_IO_Running"), " (", f("Slave_IO_State"), "), SQL running ",
      f("Slave_SQL_Running"), "; Last_IO_Errno ", f("Last_IO_Errno"), ": ", f("Last_IO_Error"),
      "; Last_SQL_Errno ", f("Last_SQL_Errno"), ": ", f("Last_SQL_Error"), "; read ",
      f("Master_Log_File"), ":", f("Read_Master_Log_Pos"), ", executed ",
      f("Relay_Master_Log_File"), ":", f("Exec_Master_Log_Pos"));
  if (replica.IsMysql()) {
    absl::StrAppend(&out, "; Retrieved_Gtid_Set ", f("Retrieved_Gtid_Set"), "; Executed_Gtid_Set ",
                    f("Executed_Gtid_Set"), "; Auto_Position ", f("Auto_Position"));
    return out;
  }
  absl::StrAppend(&out, "; Gtid_IO_Pos ", f("Gtid_IO_Pos"), "; Using_Gtid ", f("Using_Gtid"));
  absl::StatusOr<std::vector<NamedRow>> pos = (*conn)->QueryNamed("SELECT @@gtid_slave_pos AS p");
  if (pos.ok() && !pos->empty()) absl::StrAppend(&out, "; gtid_slave_pos ", Field((*pos)[0], "p"));
  return out;
}

absl::Status WaitReplicaExecuted(ServerSandbox& replica, ServerSandbox& source,
                                 milliseconds timeout) {
  BR_ASSIGN_OR_RETURN(auto end, source.BinlogEnd());
  const bool my = replica.IsMysql();
  const auto deadline = Clock::now() + timeout;
  std::string at;
  while (true) {
    BR_ASSIGN_OR_RETURN(auto status, replica.ReplicaStatus());
    const std::string file = status[my ? "Relay_Source_Log_File" : "Relay_Master_Log_File"];
    const std::string pos = status[my ? "Exec_Source_Log_Pos" : "Exec_Master_Log_Pos"];
    at = absl::StrCat(file, ":", pos);
    uint64_t p = 0;
    if (!file.empty() && absl::SimpleAtoi(pos, &p) &&
        (file > end.first || (file == end.first && p >= end.second))) {
      return absl::OkStatus();
    }
    // "Connecting" is a replica retrying (binrelay may be restarting); "No"
    // is a thread stopped for good (a fatal error such as 1236).
    if (status[my ? "Replica_SQL_Running" : "Slave_SQL_Running"] == "No" ||
        status[my ? "Replica_IO_Running" : "Slave_IO_Running"] == "No") {
      return absl::InternalError(absl::StrCat(
          "replication stopped at ", at, " (want ", end.first, ":", end.second, "): ",
          DescribeReplica(replica), "\nreplica error log:\n", replica.ErrorLogTail(15)));
    }
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      replica.Flavour().name, " replica on port ", replica.Port(), " did not execute up to ",
      end.first, ":", end.second, " within ", timeout.count(), " ms (at ", at, "): ",
      DescribeReplica(replica), "\nreplica error log:\n", replica.ErrorLogTail(15)));
}

absl::Status WaitReplicaCaughtUp(ServerSandbox& replica, std::string_view source_gtid_binlog_pos,
                                 milliseconds timeout) {
  const std::map<std::string, std::string> want = GtidsByDomain(source_gtid_binlog_pos);
  BR_ASSIGN_OR_RETURN(std::unique_ptr<SqlConn> conn, SqlConn::Open(replica));
  const auto deadline = Clock::now() + timeout;
  std::string have;
  while (true) {
    BR_ASSIGN_OR_RETURN(std::vector<NamedRow> rows,
                        conn->QueryNamed("SELECT @@gtid_slave_pos AS p"));
    have = rows.empty() ? "" : Field(rows[0], "p");
    if (GtidsByDomain(have) == want) return absl::OkStatus();
    BR_ASSIGN_OR_RETURN(std::vector<NamedRow> status, conn->QueryNamed("SHOW SLAVE STATUS"));
    // A reconnecting IO thread says "Connecting" (binrelay may be
    // restarting); "No" means a thread stopped for good (a fatal error such
    // as 1236), so waiting on would only hide the error.
    if (!status.empty() && (Field(status[0], "Slave_SQL_Running") == "No" ||
                            Field(status[0], "Slave_IO_Running") == "No")) {
      return absl::InternalError(absl::StrCat("replication stopped at gtid ", have,
                                              " (want ", AV(source_gtid_binlog_pos), "): ",
                                              DescribeReplica(replica), "\nreplica error log:\n",
                                              replica.ErrorLogTail(15)));
    }
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "replica on port ", replica.Port(), " did not reach gtid ",
      AV(source_gtid_binlog_pos), " within ", timeout.count(), " ms; it has ", have, ": ",
      DescribeReplica(replica), "\nreplica error log:\n", replica.ErrorLogTail(15)));
}

absl::StatusOr<std::map<std::string, std::string>> ChecksumAllTables(ServerSandbox& sandbox,
                                                                     std::string_view db) {
  BR_ASSIGN_OR_RETURN(SqlRows tables,
                      sandbox.Query(absl::StrCat("SELECT table_name FROM information_schema.tables "
                                                 "WHERE table_type = 'BASE TABLE' AND "
                                                 "table_schema = '",
                                                 AV(db), "' ORDER BY table_name")));
  std::map<std::string, std::string> out;
  for (const auto& t : tables) {
    if (t.empty() || !t[0]) continue;
    BR_ASSIGN_OR_RETURN(SqlRows sum,
                        sandbox.Query(absl::StrCat("CHECKSUM TABLE `", AV(db), "`.`", *t[0], "`")));
    if (sum.size() != 1 || sum[0].size() < 2) {
      return absl::InternalError(absl::StrCat("CHECKSUM TABLE ", AV(db), ".", *t[0],
                                              ": unexpected result shape"));
    }
    out[*t[0]] = sum[0][1].value_or("NULL");
  }
  return out;
}

::testing::AssertionResult SameChecksums(ServerSandbox& source, ServerSandbox& replica,
                                         const std::vector<std::string>& dbs) {
  std::vector<std::string> problems;
  for (const std::string& db : dbs) {
    absl::StatusOr<std::map<std::string, std::string>> want = ChecksumAllTables(source, db);
    absl::StatusOr<std::map<std::string, std::string>> got = ChecksumAllTables(replica, db);
    if (!want.ok() || !got.ok()) {
      return ::testing::AssertionFailure()
             << "checksumming " << db << ": source " << want.status() << ", replica "
             << got.status();
    }
    if (want->empty()) problems.push_back(absl::StrCat(db, ": the source has no tables"));
    for (const auto& [table, sum] : *want) {
      auto it = got->find(table);
      if (it == got->end()) {
        problems.push_back(absl::StrCat(db, ".", table, " missing on the replica"));
      } else if (it->second != sum) {
        problems.push_back(absl::StrCat(db, ".", table, ": source ", sum, ", replica ",
                                        it->second));
      }
    }
    for (const auto& [table, sum] : *got) {
      if (!want->contains(table)) {
        problems.push_back(absl::StrCat(db, ".", table, " exists only on the replica"));
      }
    }
  }
  if (problems.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "replica (port " << replica.Port() << ") differs from the source: "
         << absl::StrJoin(problems, "; ") << "\nreplica: " << DescribeReplica(replica);
}

}  // namespace binrelay::testing
