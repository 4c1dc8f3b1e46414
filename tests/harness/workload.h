// Workloads for the serve tests.
//  - RunMixedWorkload: a fixed, deterministic mix on the source: inserts,
//    updates, deletes (a table with and without primary key), DDL (CREATE,
//    ALTER, RENAME, TRUNCATE, DROP), a multi-table and a rolled-back
//    transaction, one large transaction (50k rows), a 20 MiB LONGBLOB row
//    and its UPDATE (one 40 MiB rows event with the FULL row image), and a
//    few transactions in a second GTID domain (MariaDB). Any flavour.
//  - SteadyWorkload: small transactions on a thread of its own, until
//    stopped, optionally rotating the binlog every N transactions; usable
//    while binrelay is killed and restarted (the source stays up, so any
//    error is a failure).
//
// Thread safety: RunMixedWorkload uses the sandbox's own session (call it
// from the test thread); a SteadyWorkload has its own session and thread,
// and Start/Stop belong to the test thread. Lifetime: a SteadyWorkload must
// be stopped (or destroyed) before its sandbox.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tests/harness/server_sandbox.h"

namespace binrelay::testing {

class SqlConn;

struct MixedWorkloadOptions {
  int rows = 2000;                  // rows in the small tables
  int large_transaction_rows = 50000;
  size_t big_row_bytes = 20u << 20;  // 0: no big row
  bool second_domain = true;        // some transactions with gtid_domain_id 2
  // FLUSH BINARY LOGS between the phases, so the workload spans files.
  bool rotate_between_phases = false;
};

// A small mix for the live tests: `rows` items, ten times that in the large
// transaction, a 1 MiB row, a rotation between phases.
inline MixedWorkloadOptions CompactMix(int rows) {
  MixedWorkloadOptions o;
  o.rows = rows;
  o.large_transaction_rows = rows * 10;
  o.big_row_bytes = 1u << 20;
  o.rotate_between_phases = true;
  return o;
}

// Runs the mix in database `db` (created; must not exist).
absl::Status RunMixedWorkload(ServerSandbox& source, const std::string& db,
                              const MixedWorkloadOptions& options = {});

struct SteadyWorkloadOptions {
  std::chrono::milliseconds pause{2};  // between transactions
  int rotate_every = 0;                // FLUSH BINARY LOGS every N transactions (0: never)
};

class SteadyWorkload {
 public:
  // Creates `db`.t and starts the thread.
  static absl::StatusOr<std::unique_ptr<SteadyWorkload>> Start(
      const ServerSandbox& source, const std::string& db, const SteadyWorkloadOptions& options);
  ~SteadyWorkload();
  SteadyWorkload(const SteadyWorkload&) = delete;
  SteadyWorkload& operator=(const SteadyWorkload&) = delete;

  // Stops and joins the thread; the first error the workload hit, if any.
  absl::Status Stop();
  int64_t transactions() const { return done_.load(); }

 private:
  SteadyWorkload() = default;
  void Run();

  std::string db_;
  SteadyWorkloadOptions options_;
  std::unique_ptr<SqlConn> conn_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> done_{0};
  absl::Status status_;  // written by the thread, read after join
};

}  // namespace binrelay::testing
