#include "apply/source_snapshot.h"

#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "apply/retry_policy.h"
#include "apply/target_session.h"
#include "protocol/status_macros.h"
#include "replication/binlog_status.h"
#include "spdlog/spdlog.h"

namespace binrelay::apply {
namespace {

// MariaDB reports the binlog position of a consistent snapshot itself
// (binlog_snapshot_file / binlog_snapshot_position, sql/log.cc: the binlog
// position of the last transaction the snapshot holds): no lock.
absl::Status MariaDbSnapshotPosition(Snapshot& s) {
  BR_ASSIGN_OR_RETURN(auto rows, s.sql->Query("SHOW STATUS LIKE 'binlog_snapshot_%'"));
  for (const auto& row : rows) {
    if (row.size() < 2 || !row[0] || !row[1]) continue;
    if (absl::EqualsIgnoreCase(*row[0], "Binlog_snapshot_file")) s.position.file = *row[1];
    if (absl::EqualsIgnoreCase(*row[0], "Binlog_snapshot_position")) {
      (void)absl::SimpleAtoi(*row[1], &s.position.offset);
    }
  }
  if (s.position.file.empty() || s.position.offset < 4) {
    return absl::FailedPreconditionError(absl::StrCat(
        s.sql->Peer(), " reported no binlog_snapshot_file/binlog_snapshot_position for a "
        "consistent snapshot: a move needs a source with the binary log enabled"));
  }
  return absl::OkStatus();
}

// MySQL has no binlog position for a snapshot (mysqldump --single-transaction
// --source-data takes FLUSH TABLES WITH READ LOCK for it: every table of
// the server). Only `table` matters here, so only it is locked, from a
// second session: LOCK TABLES ... READ waits for the transactions writing
// it to end (they hold its metadata lock until they commit, binlog
// included) and holds off new ones; the snapshot opened and the position
// read under that lock stand after every change to the table the snapshot
// holds and before every one it does not. The lock lasts a few round trips;
// lock_wait_timeout bounds the wait for it (writers queue behind a pending
// lock), and a wait that times out is retried.
absl::StatusOr<Snapshot> MySqlSnapshotAt(const protocol::ConnectOptions& server,
                                         const std::string& table, std::string_view move,
                                         const std::function<bool(absl::Duration)>& sleep) {
  BR_ASSIGN_OR_RETURN(std::unique_ptr<protocol::ClientConnection> lock_conn,
                      protocol::ClientConnection::Connect(server));
  replication::ConnectionSqlSource lock(lock_conn.get());
  BR_RETURN_IF_ERROR(lock.Query("SET SESSION lock_wait_timeout = 1").status());
  // 1205: lock_wait_timeout (1 s) passed; a long transaction on the table
  // holds its metadata lock. Waited out for as long as it lasts.
  RetryPolicy policy;
  policy.retryable = [](const absl::Status& s) { return ServerErrorCode(s) == 1205; };
  policy.wait = [](int, const absl::Status&) { return absl::Seconds(1); };
  absl::Time logged = absl::InfinitePast();
  absl::Time asked;
  RetryResult locked = RunWithRetries(
      policy, sleep,
      [&] {
        asked = absl::Now();
        return lock.Query(absl::StrCat("LOCK TABLES ", table, " READ")).status();
      },
      [&](int attempt, const absl::Status&) {
        if (absl::Now() - logged > absl::Minutes(1)) {
          logged = absl::Now();
          spdlog::warn("move {}: LOCK TABLES {} READ on {} waited 1 s and gave up (attempt {}): "
                       "a long transaction writes it or holds its metadata lock; trying again",
                       move, table, lock.Peer(), attempt);
        }
      });
  if (!locked.status.ok()) {
    if (locked.stopped) return locked.status;
    return Annotate(locked.status, absl::StrCat("locking ", table, " on ", lock.Peer(),
                                                " for the checksum's snapshot"));
  }
  const absl::Time held = absl::Now();
  absl::StatusOr<Snapshot> s = OpenSnapshot(server);
  absl::StatusOr<replication::BinlogPosition> at =
      s.ok() ? replication::ReadBinlogStatus(*s->sql)
             : absl::StatusOr<replication::BinlogPosition>(s.status());
  absl::Status unlocked = lock.Query("UNLOCK TABLES").status();
  const absl::Duration locked_for = absl::Now() - held;
  BR_RETURN_IF_ERROR(at.status());
  // Closing the lock's connection releases the lock if UNLOCK failed.
  if (!unlocked.ok()) spdlog::warn("move {}: UNLOCK TABLES on {}: {}", move, lock.Peer(),
                                   SV(unlocked.message()));
  s->position = *at;
  spdlog::info("move {}: snapshot of {} at {}: the table was locked for {} (waited {} for the "
               "lock)", move, table, at->ToString(), absl::FormatDuration(locked_for),
               absl::FormatDuration(held - asked));
  return std::move(*s);
}

}  // namespace

absl::StatusOr<Snapshot> OpenSnapshot(const protocol::ConnectOptions& server) {
  Snapshot s;
  BR_ASSIGN_OR_RETURN(s.conn, protocol::ClientConnection::Connect(server));
  s.sql = std::make_unique<replication::ConnectionSqlSource>(s.conn.get());
  BR_RETURN_IF_ERROR(s.sql->Query("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ").status());
  BR_RETURN_IF_ERROR(s.sql->Query("START TRANSACTION WITH CONSISTENT SNAPSHOT").status());
  return s;
}

// A consistent snapshot of `table` on the source, with its position.
absl::StatusOr<Snapshot> SourceSnapshot(const protocol::ConnectOptions& server,
                                        bool is_mariadb, const std::string& table,
                                        std::string_view move,
                                        const std::function<bool(absl::Duration)>& sleep) {
  if (!is_mariadb) return MySqlSnapshotAt(server, table, move, sleep);
  BR_ASSIGN_OR_RETURN(Snapshot s, OpenSnapshot(server));
  BR_RETURN_IF_ERROR(MariaDbSnapshotPosition(s));
  return s;
}

absl::StatusOr<Snapshot> SourceSnapshotAtPipeline(
    const protocol::ConnectOptions& source, bool is_mariadb, const std::string& table,
    std::string_view move, const std::function<bool(absl::Duration)>& sleep,
    absl::FunctionRef<absl::Status(const replication::BinlogPosition&)> advance) {
  // A new snapshot can stand before what the paused pipeline has applied: a
  // transaction already in the binlog (so in binrelay's store) but not yet
  // committed in the engine, as under semi-synchronous replication with
  // rpl_semi_sync_master_wait_point = AFTER_SYNC until a replica
  // acknowledges it (or the wait times out). Its commit is moments away:
  // take a later snapshot.
  // OutOfRange from `advance`: the snapshot stands before what the pipeline
  // applied. Any other failure is final, taking the snapshot included (a
  // truncated reply from the source is OutOfRange too: not this case).
  bool too_early = false;
  RetryPolicy policy;
  policy.retryable = [&too_early](const absl::Status&) { return too_early; };
  policy.wait = [](int, const absl::Status&) { return absl::Milliseconds(100); };
  policy.give_up_after = absl::Seconds(30);
  std::optional<Snapshot> taken;
  RetryResult r = RunWithRetries(
      policy, sleep,
      [&]() -> absl::Status {
        if (taken) (void)taken->sql->Query("COMMIT");  // the earlier, too early one
        taken.reset();
        too_early = false;
        BR_ASSIGN_OR_RETURN(Snapshot s, SourceSnapshot(source, is_mariadb, table, move, sleep));
        taken = std::move(s);
        absl::Status advanced = advance(taken->position);
        too_early = absl::IsOutOfRange(advanced);
        return advanced;
      },
      [&](int attempt, const absl::Status& s) {
        if (attempt == 1) {
          spdlog::info("move {}: the source's snapshot is at {}, before what the pipeline "
                       "applied ({}); a transaction in its binlog is not committed yet "
                       "(semi-sync waiting for an acknowledgement?): taking a later snapshot",
                       move, taken->position.ToString(), SV(s.message()));
        }
      });
  if (r.exhausted) {
    return absl::UnavailableError(absl::StrCat(
        "the source's snapshots stayed before the transactions the pipeline applied for "
        "30 s (", r.status.message(), "): a transaction in the source's binlog has not "
        "become visible; is a semi-sync wait on the source stuck?"));
  }
  if (!r.status.ok()) return r.status;
  if (r.attempts > 1) {
    spdlog::info("move {}: the source's snapshot reached the pipeline's position after {} "
                 "attempt(s)", move, r.attempts);
  }
  return std::move(*taken);
}

}  // namespace binrelay::apply
