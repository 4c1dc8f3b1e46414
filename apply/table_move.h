// TableMove: moves a set of tables from the source to a target server while
// the source keeps taking writes: `binrelay move`, and [move.NAME] in
// `binrelay serve`. It is one more consumer of binrelay's store: its
// changes are applied by an ApplyPipeline reading the store, so the
// source's binlog retention never limits how long a copy may take.
//
// Phases (each logged, shown in status):
//   preflight  MovePreflight: every problem at once, nothing written
//   create     absent target tables from SHOW CREATE TABLE
//   copy       the pipeline starts at the store's end, then each table is
//              cut into primary-key chunks (KeyRangeChunker) sized to take
//              about chunk_time, copied by copy_threads workers with
//              INSERT IGNORE (RangeCopier); the pipeline's CopyGate (this)
//              drops changes the copier reads later and holds back changes
//              to chunks in flight (copy_watermarks.h)
//   catch up   watermarks off; the pipeline applies the backlog
//   checksum   every chunk summed on both servers at one binlog position:
//              the source's consistent snapshot reports its position, the
//              pipeline is advanced exactly there and paused while the
//              target's snapshots (two, summing half the ranges each) open.
//              A differing chunk is repaired the same way (paused at the
//              source snapshot's position, its target rows are deleted and
//              copied from that snapshot), then checked again; a difference
//              that stays stops the move. Once a table's last target sums
//              are done its deferred indexes start building.
//   indexes    each table's index build joined (and run again, with
//              retries, if it failed there; secondary_indexes.h)
//   cutover    LOCK TABLES ... WRITE on the source (bounded wait), the
//              pipeline advanced to the source's position under the lock
//              (bounded time), ALTER TABLE ... RENAME TO <t>_old (MariaDB
//              allows it under LOCK TABLES; RENAME TABLE is refused there),
//              UNLOCK TABLES. Past a limit the lock is released and the
//              cutover retried later: the source is never left locked.
//   done
//
// Resume: the move's progress (move_checkpoint.h) is written on the target
// at every phase change, every second of the copy, and after every
// group of checksummed ranges; a move started again under the same name
// continues from it (after kill -9 too), and its pipeline from its own
// checkpoint. A second move of the same tables to the same target fails
// at start (named locks on the target, held for the move's life).
//
// Thread safety: Start/Stop/Status/RequestCutover from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "apply/copy_gate.h"
#include "apply/key_range_chunker.h"
#include "apply/move_checkpoint.h"
#include "apply/move_phase.h"
#include "apply/move_options.h"
#include "apply/move_preflight.h"
#include "apply/move_session.h"
#include "apply/pipeline.h"
#include "apply/range_checksum.h"
#include "apply/secondary_indexes.h"
#include "apply/source_login.h"
#include "apply/source_snapshot.h"
#include "replication/connection_sql_source.h"
#include "replication/store_read_side.h"

namespace binrelay::apply {

struct MoveStatus {
  std::string name;
  MovePhase phase = MovePhase::kStarting;
  std::string error;
  std::string tables;
  std::string cutover;  // auto, manual, none
  uint64_t rows_estimate = 0;  // information_schema estimates
  uint64_t rows_copied = 0;
  uint64_t chunks_copied = 0;
  // Rows the copy left out on a taken UNIQUE value (range_copier.h), for
  // the checksum to repair.
  uint64_t rows_left_to_checksum = 0;
  double copy_rows_per_second = 0;
  uint64_t changes_dropped = 0;  // above the copier's high watermark
  uint64_t chunks_checked = 0;
  uint64_t chunks_total = 0;
  uint64_t chunks_differing = 0;
  uint64_t chunks_repaired = 0;
  uint64_t cutover_attempts = 0;
  bool has_apply = false;
  PipelineStatus apply;
};

class TableMove : public CopyGate {
 public:
  // `source`: the server the tables are moved from (the relay's current
  // source), asked again for every connection.
  TableMove(MoveOptions options, replication::StoreReadSide* store, SourceLogin source);
  ~TableMove() override;
  TableMove(const TableMove&) = delete;
  TableMove& operator=(const TableMove&) = delete;

  void Start();
  void Stop();  // joins; idempotent
  // Blocks until the move is done or failed (or Stop); its outcome.
  absl::Status Wait();
  bool Finished() const;
  MoveStatus Status() const;
  // cutover = manual: go ahead once ready (no effect otherwise).
  void RequestCutover();
  const std::string& name() const { return options_.apply.name; }

  TableCopyGate* ForTable(std::string_view db, std::string_view table) override;

 private:
  struct Table;
  absl::Status Run();
  absl::Status Plan();
  absl::Status CopyTable(Table& t);
  absl::Status WaitCaughtUp(absl::Duration max_lag_wait);
  // The deferred secondary indexes (secondary_indexes.h): those of `t` as
  // the source defines them now; AddIndexesOf adds those the target lacks
  // (retried; with the pipeline paused if its online log overflows);
  // StartIndexBuild does it once on a thread of its own; FinishIndexes
  // joins each table's build and then runs AddIndexesOf.
  absl::StatusOr<std::vector<IndexDefinition>> DeferredIndexesOf(const Table& t);
  protocol::ConnectOptions IndexBuilderSession() const;
  absl::Status AddIndexesOf(Table& t);
  void StartIndexBuild(Table& t);
  // Waits for t's build, if one was started; a failed one is logged, and
  // left to AddIndexesOf.
  void JoinIndexBuild(Table& t);
  absl::Status FinishIndexes();
  absl::Status Checksum();
  // Sums `ranges` of `t` on both servers at one binlog position; appends the
  // indexes that differ to `differing`. `target_done` (if given) runs once
  // the target's sums are done and its snapshots closed, while the source's
  // may still run.
  absl::Status SumAtOnePosition(Table& t, const std::vector<KeyRange>& ranges,
                                std::vector<size_t>* differing,
                                const std::function<void()>& target_done = nullptr);
  absl::Status Repair(Table& t, const KeyRange& range);
  // With the pipeline paused: a consistent snapshot of `t` on the source and
  // the pipeline advanced to its position (source_snapshot.h).
  absl::StatusOr<Snapshot> SnapshotAtPipeline(const Table& t);
  // Named locks on the target (the concurrency guard): the move's name,
  // then each target table; CheckGuard: still held.
  absl::Status GuardName();
  absl::Status Guard(const std::vector<MoveTableName>& names);
  absl::Status TakeLock(const std::string& lock, const std::string& what);
  absl::Status CheckGuard();
  // Kills the target's INSERT IGNOREs into `names` left by a killed run.
  absl::Status KillEarlierCopies(replication::SqlSource& target,
                                 const std::vector<MoveTableName>& names);
  // t.progress (with the current phase) to the target's move_checkpoint.
  absl::Status SaveProgress(Table& t);
  absl::Status SaveAll();
  // Runs `step` until it succeeds, up to 5 times for errors that may pass.
  absl::Status Retry(std::string_view what, const std::function<absl::Status()>& step);
  absl::Status Cutover();
  // absl::OkStatus once cut over; Unavailable for a cutover to retry.
  // Raises each target table's AUTO_INCREMENT to the source's (read on
  // `locked_source`, the cutover's locked session).
  absl::Status CarryAutoIncrement(replication::SqlSource& locked_source);
  absl::Status TryCutover();
  void SetPhase(MovePhase phase);
  bool Sleep(absl::Duration d);  // false if stopping
  // The source's prepared XA transactions (XA RECOVER), sorted.
  static absl::StatusOr<std::vector<std::string>> PreparedXids(replication::SqlSource& source);
  // Waits until none of xa_before_start_ is still prepared.
  absl::Status WaitForXaPreparedBeforeStart();
  // Test points (move_test_points.h, MoveOptions::test_points). Stall: the
  // move stands at `point` ("catch up", "checksum": with the checksum of
  // the first table unfinished, "cutover locked": source locked, target
  // caught up, before the renames) until it is stopped, so that a test can
  // kill -9 it exactly there. False if stopping.
  bool StallIfAsked(std::string_view point);
  // The pipeline's own error, if it stopped.
  absl::Status PipelineError() const;

  MoveOptions options_;
  // Hold: the copy waits before handing out its first and second chunk
  // ("dispatch 1", "dispatch 2") while the test holds the point, so that a
  // test can change rows exactly there (spirit's pre-dispatch scenarios).
  // `only_if_named` points ("checksum": before the checksum phase) hold
  // only where the test names them. False if stopping.
  bool HoldIfAsked(std::string_view point, bool only_if_named = false);
  uint64_t dispatches_ = 0;  // chunks handed out by this run's copy
  replication::StoreReadSide* store_;
  SourceLogin source_login_;
  // The current source, in a move's session settings (move_session.h).
  protocol::ConnectOptions SourceConnect() const { return InMoveSession(source_login_()); }
  // The same, asked again before each statement of a ConnectionSqlSource
  // (which then follows a failover between statements).
  std::function<protocol::ConnectOptions()> SourceFollowing() const {
    return [this] { return SourceConnect(); };
  }
  // The source's flavour, read at Plan: MySQL has no binlog position for a
  // consistent snapshot (table_move.cc, SourceSnapshot).
  bool source_is_mariadb_ = true;
  // The checksum's SQL on each server, by its version (read at Plan).
  RangeChecksum::Server source_checksum_ = RangeChecksum::Server::kMariaDb;
  RangeChecksum::Server target_checksum_ = RangeChecksum::Server::kMariaDb;
  std::vector<std::unique_ptr<Table>> tables_;
  absl::flat_hash_map<std::string, Table*> by_name_;  // "db\0table"
  std::unique_ptr<ApplyPipeline> pipeline_;  // set once, under mu_
  // The move thread's: progress writes, and the guard's named locks.
  std::unique_ptr<replication::ConnectionSqlSource> progress_sql_;
  std::unique_ptr<protocol::ClientConnection> guard_conn_;
  std::vector<std::string> locks_;  // SQL expressions naming the locks held
  replication::StorePin early_pin_;  // from Start until the pipeline pins
  replication::BinlogPosition start_;  // where the pipeline started
  // XA transactions prepared on the source when this run began (sorted).
  std::vector<std::string> xa_before_start_;
  bool resumed_ = false;       // continuing from a checkpoint
  bool resumed_done_ = false;  // the checkpoint says it already cut over
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> cutover_requested_{false};
  std::atomic<bool> planned_{false};  // tables_ and by_name_ are complete

  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status outcome_ ABSL_GUARDED_BY(mu_);
  MoveStatus status_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> rows_copied_{0};
  std::atomic<uint64_t> rows_left_to_checksum_{0};
  std::atomic<uint64_t> chunks_copied_{0};
  absl::Time copy_started_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace binrelay::apply
