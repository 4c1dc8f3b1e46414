#include "replication/candidate_probe.h"

#include <algorithm>
#include <chrono>

#include "protocol/worker_pool.h"

#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"
#include "replication/connection_sql_source.h"

namespace binrelay::replication {
namespace {

absl::Status Probe(const protocol::ConnectOptions& options, CandidateFacts* f) {
  BR_ASSIGN_OR_RETURN(std::unique_ptr<protocol::ClientConnection> conn,
                      protocol::ClientConnection::Connect(options));
  f->connected = true;
  f->is_mariadb = conn->server_info().is_mariadb;
  f->version = conn->server_info().version;
  ConnectionSqlSource sql(conn.get());
  // One statement, so the state and the role are read together.
  const char* query =
      f->is_mariadb
          ? "SELECT @@server_id, '', @@read_only, @@log_bin, @@gtid_binlog_state"
          : "SELECT @@server_id, @@server_uuid, @@read_only OR @@super_read_only, @@log_bin, "
            "@@gtid_executed";
  BR_ASSIGN_OR_RETURN(std::vector<SqlRow> rows, sql.Query(query));
  if (rows.size() != 1 || rows[0].size() != 5) {
    return absl::DataLossError(absl::StrCat("'", query, "' did not answer one row of 5 columns"));
  }
  const SqlRow& r = rows[0];
  auto text = [&](size_t i) { return r[i].value_or(""); };
  f->server_id = static_cast<uint32_t>(std::strtoul(text(0).c_str(), nullptr, 10));
  f->server_uuid = text(1);
  f->read_only = text(2) != "0";
  f->log_bin = text(3) == "1";
  BR_ASSIGN_OR_RETURN(
      f->gtids, SourceGtids::Parse(f->is_mariadb ? GtidFlavour::kMariaDb : GtidFlavour::kMysql,
                                   text(4)));
  conn->Quit();
  return absl::OkStatus();
}

}  // namespace

std::string CandidateAddress(const protocol::ConnectOptions& options) {
  const bool ipv6 = options.host.find(':') != std::string::npos;
  return absl::StrCat(ipv6 ? "[" : "", options.host, ipv6 ? "]" : "", ":", options.port);
}

CandidateFacts ProbeCandidate(const protocol::ConnectOptions& options) {
  CandidateFacts f;
  f.address = CandidateAddress(options);
  f.error = Probe(options, &f);
  return f;
}

std::vector<CandidateFacts> ProbeCandidates(
    const std::vector<protocol::ConnectOptions>& candidates) {
  std::vector<CandidateFacts> facts(candidates.size());
  if (candidates.empty()) return facts;
  WorkerPool pool(candidates.size(), candidates.size());
  JobGroup probes(&pool);
  for (size_t i = 0; i < candidates.size(); ++i) {
    probes.Run([&facts, &candidates, i] {
      protocol::ConnectOptions options = candidates[i];
      options.connect_timeout = std::min(options.connect_timeout, std::chrono::milliseconds(2000));
      options.io_timeout = std::min(options.io_timeout, std::chrono::milliseconds(5000));
      facts[i] = ProbeCandidate(options);
    });
  }
  probes.Wait();
  return facts;
}

}  // namespace binrelay::replication
