// Replica fixture: real MariaDB replicas for the serve tests.
//  - StartReplicaOf: a sandbox (its own server_id, room for 40 MiB events)
//    replicating from a MasterEndpoint by file/position or by GTID;
//  - WaitReplicaCaughtUp: bounded wait until @@gtid_slave_pos equals the
//    source's @@gtid_binlog_pos, with the replica's IO/SQL errors on failure;
//  - ChecksumAllTables / SameChecksums: CHECKSUM TABLE of every table of the
//    workload databases, source against replica.
//
// Thread safety: call from the test thread (the sandboxes' own sessions are
// used). Lifetime: everything returned is owned by the caller.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/serve_fixture.h"

namespace binrelay::testing {

struct ReplicaOptions {
  std::string flavour;  // "" = mariadb-10.11
  uint32_t server_id = 2;
  enum class Mode {
    kFilePosition,  // MASTER_LOG_FILE/MASTER_LOG_POS, MASTER_USE_GTID=no
    // MariaDB MASTER_USE_GTID=slave_pos (empty position: from the start);
    // MySQL SOURCE_AUTO_POSITION=1.
    kGtidSlavePos,
  } mode = Mode::kFilePosition;
  std::string log_file = "mysql-bin.000001";
  uint64_t log_pos = 4;
  // MASTER_CONNECT_RETRY: a replica reconnects on its own this often.
  int connect_retry_seconds = 1;
  int heartbeat_seconds = 1;
  // MASTER_SSL / SOURCE_SSL: off (=0), on (=1), or left to the release's
  // default (MariaDB 11.4+: on, with the certificate verified).
  enum class Tls { kOff, kOn, kReleaseDefault } tls = Tls::kOff;
  // The replica's host for the source ("127.0.0.1"; another address makes
  // a MariaDB 11.4+ replica verify the certificate for real).
  std::string host = "127.0.0.1";
  // More CHANGE MASTER / CHANGE REPLICATION SOURCE options
  // ("GET_SOURCE_PUBLIC_KEY=1").
  std::string extra;
  // More server arguments for the replica.
  std::vector<std::string> server_args;
};

// Starts the replica sandbox, points it at `master` with CHANGE MASTER TO,
// and runs START SLAVE.
absl::StatusOr<std::unique_ptr<ServerSandbox>> StartReplicaOf(const MasterEndpoint& master,
                                                               const ReplicaOptions& options);

// Any flavour: polls every 100 ms until the replica's SQL thread has executed
// up to `source`'s binlog end as it is now (file and position, which binrelay
// serves unchanged), whether it replicates by position or by GTID. Fails at
// once when a replication thread stopped for good, and after `timeout`, with
// DescribeReplica() and the replica's error log.
absl::Status WaitReplicaExecuted(ServerSandbox& replica, ServerSandbox& source,
                                 std::chrono::milliseconds timeout);

// SELECT @@gtid_binlog_pos (what a caught-up replica's gtid_slave_pos is).
absl::StatusOr<std::string> GtidBinlogPos(ServerSandbox& source);

// One line with the replica's thread states, errors and positions, for
// failure messages; never fails (an error is described instead).
std::string DescribeReplica(const ServerSandbox& replica);

// Polls every 100 ms until the replica's @@gtid_slave_pos equals
// `source_gtid_binlog_pos` (as sets: one GTID per domain). Fails at once if
// the IO or SQL thread stopped (a fatal error; neither retries), and after
// `timeout` with DescribeReplica() and the replica's error log tail.
absl::Status WaitReplicaCaughtUp(ServerSandbox& replica, std::string_view source_gtid_binlog_pos,
                                 std::chrono::milliseconds timeout);

// CHECKSUM TABLE of every base table of `db`, by table name (empty if the
// database does not exist).
absl::StatusOr<std::map<std::string, std::string>> ChecksumAllTables(ServerSandbox& sandbox,
                                                                     std::string_view db);

// Success if, for each database, the replica has the same tables with the
// same checksums as the source; the source must have at least one table in
// each (an empty comparison proves nothing).
::testing::AssertionResult SameChecksums(ServerSandbox& source, ServerSandbox& replica,
                                         const std::vector<std::string>& dbs);

}  // namespace binrelay::testing
