// ApplyPipeline: keeps a set of source tables identical on a target server,
// reading binrelay's own store (never the source's binlog, never the
// source's rows), at its own pace, on its own threads.
//
//   store --StoreReader--> ChangeDecoder (raw images of subscribed tables
//   only) --> one TableBuffer per table (last image per key) --drain-->
//   flusher connections (multi-row REPLACE, then DELETE) --> checkpoint
//
// Reading: the reader thread walks the store from the checkpoint, feeding
// events to the decoder; rows land in the buffers. A drain takes everything
// buffered and hands it to the drainer thread; the reader keeps reading
// meanwhile. At most one drain is in flight, so drains apply in order and a
// key's later image can never be overtaken by an earlier one. A drain starts
// when the reader has caught up with the store, when flush_interval has
// passed since the last one, or when the buffers hold soft_limit_bytes
// (then the reader parks until the drain in flight completes; a row is
// always admitted below the limit, so progress never stops).
//
// Position: a drain's checkpoint is the end of the last transaction read
// whole before the hand-off. Rows of a transaction cut by a hand-off are in
// the drain, but the checkpoint stays before that transaction: after a crash
// it is read again, and since every statement writes a row's full image or
// deletes it by key, replaying from an older checkpoint converges to the
// same state. The checkpoint is written to the target table
// `<checkpoint_schema>`.`apply_checkpoint` (README: "The checkpoint table")
// and then to <store>/.apply/NAME; the store pin follows it, so retention
// keeps every file the pipeline still needs, from before the first purge
// after a restart.
//
// Errors: deadlocks and lock wait timeouts are retried with backoff, and
// shrink concurrency and batch size, which grow back after clean drains; a
// lost target is retried until it returns. A hard error (a statement the
// target refuses, a DDL on a subscribed table, row images that are not
// FULL) stops this pipeline with that error in its status; nothing
// buffered is dropped (it is re-read from the checkpoint after a restart).
// Failing to prepare (target unreachable or refusing, a table that does not
// match) is retried every 5 s, its error shown meanwhile.
//
// A move (table_move.h) runs a pipeline with a CopyGate (copy_gate.h): at
// ingest a change its copier will read later is dropped, and at flush a
// change whose chunk is being copied is held back (deferred_rows.h) with
// the checkpoint kept before it. A move also stops the reader at a chosen
// transaction boundary with everything before it on the target (Pause,
// AdvanceTo, Resume), to read both servers at the same binlog position.
//
// Thread safety: Start/Stop/Status/Pause/AdvanceTo/Resume from any thread.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "apply/apply_table.h"
#include "apply/change_reader.h"
#include "apply/copy_gate.h"
#include "apply/drain.h"
#include "apply/hold_gate.h"
#include "apply/pipeline_checkpoint.h"
#include "apply/pipeline_options.h"
#include "apply/pipeline_state.h"
#include "apply/source_login.h"
#include "apply/subscription.h"
#include "apply/table_buffer.h"
#include "apply/target_flusher.h"
#include "apply/xa_holds.h"
#include "replication/binlog_position.h"
#include "replication/store_read_side.h"

namespace binrelay::apply {

struct PipelineStatus {
  std::string name;
  PipelineState state = PipelineState::kPreparing;
  // Set while a move holds the pipeline paused (Pause/AdvanceTo).
  std::optional<replication::BinlogPosition> paused_at;
  // What it is doing in that state, for people ("reading the store from
  // ... for DDL on subscribed tables"); "" for the state alone.
  std::string activity;
  // The state as /status prints it: "running", "paused at mysql-bin.000003:4",
  // or the activity.
  std::string StateText() const;
  std::string last_error;
  std::string target;  // host:port
  std::string tables;  // as configured
  replication::BinlogPosition flushed;  // checkpoint
  replication::BinlogPosition read;     // end of the last transaction read
  double lag_seconds = 0;
  uint64_t lag_bytes = 0;
  uint64_t buffered_keys = 0;
  uint64_t buffered_bytes = 0;
  uint64_t parked = 0;         // times the reader waited on soft_limit_bytes
  // Statements the target ran with warnings (a value it changed, e.g.
  // truncated, would show here): logged, never silent.
  uint64_t target_warnings = 0;
  // Prepared XA transactions with rows of these tables, not yet decided on
  // the source: the checkpoint waits before the oldest.
  uint64_t xa_held = 0;
  // Changes held back while a move's copier copies their chunk.
  uint64_t deferred = 0;
  uint64_t changes_read = 0;   // row changes buffered
  uint64_t rows_written = 0;   // rows in REPLACE/DELETE statements
  uint64_t drains = 0;
  double last_flush_seconds = 0;
  uint64_t concurrency = 0;    // current
  uint64_t batch_rows = 0;     // current
  // How upserts reach the target: "bulk" (COM_STMT_BULK_EXECUTE),
  // "prepared" (COM_STMT_EXECUTE of multi-row REPLACEs) or "text (why)"
  // (multi-row REPLACE text); "" until the target was checked.
  std::string upsert_protocol;
  std::map<int, uint64_t> retries;  // by server error code (2013: connection)
};

// The coordinator of the parts below: table setup at start
// (pipeline_table_setup.cc), the reader (change_reader.h), the flusher
// (target_flusher.h), the checkpoint (pipeline_checkpoint.h) and the hold
// gate (hold_gate.h). It owns the threads, the single drain slot between
// reader and flusher, and the status.
class ApplyPipeline final : private TargetFlusher::Host, private ChangeReader::Host {
 public:
  // `gate` (a move's copier; may be null) must outlive the pipeline.
  ApplyPipeline(PipelineOptions options, replication::StoreReadSide* store, SourceLogin source,
                CopyGate* gate = nullptr);
  ~ApplyPipeline();
  ApplyPipeline(const ApplyPipeline&) = delete;
  ApplyPipeline& operator=(const ApplyPipeline&) = delete;

  // Pins the store where the pipeline will resume (its local checkpoint, or
  // its configured start), before serve starts retention. Errors name the
  // pipeline and the file.
  absl::Status Restore();
  void Start();
  void Stop();  // joins; idempotent
  PipelineStatus Status() const;
  const std::string& name() const { return options_.name; }

  // Stops reading at the next transaction boundary, once everything read
  // before it is on the target (checkpoint written); returns that
  // position. DeadlineExceeded after `timeout`; the pipeline's own error
  // if it stopped.
  absl::StatusOr<replication::BinlogPosition> Pause(absl::Duration timeout);
  // Paused: reads on up to `at` (a transaction boundary at or after the
  // paused position, e.g. a snapshot's binlog position) and pauses there
  // the same way. OutOfRange if paused past `at` already (the caller's
  // snapshot is older than what the target has: a later one may not be);
  // FailedPrecondition if a transaction ends past `at` before it is
  // reached (it was not a boundary).
  // `or_after`: any transaction boundary at or after `at` will do (the
  // cutover: once the moved tables are locked at `at`, nothing after it
  // touches them), so it also works unpaused.
  absl::Status AdvanceTo(const replication::BinlogPosition& at, absl::Duration timeout,
                         bool or_after = false);
  void Resume();
  // Removes the local checkpoint file (a move starting afresh), before
  // Restore.
  absl::Status ForgetLocalCheckpoint() { return local_checkpoint_.Forget(); }

 private:
  // Coordinator (pipeline.cc).
  void Run();
  void DrainLoop();
  // The state, with the error that put it there.
  void SetStateWithError(PipelineState state, std::string error);
  // A hold request's timeout, with the state the pipeline is in.
  absl::Status WithState(absl::Status s) const;
  // Both hosts.
  bool Sleep(absl::Duration d) override;  // false if stopping
  bool stopping() const override { return stopping_; }
  // TargetFlusher::Host.
  void OnRetry(int code, bool target_lost, std::string_view error) override;
  void OnRecovered() override;
  absl::Status OnCheckpointWritten(const replication::BinlogPosition& at) override;
  // ChangeReader::Host.
  void SetState(PipelineState state) override;
  // The state with what it is doing in it (PipelineStatus::activity).
  void SetActivity(PipelineState state, std::string activity) override;
  absl::Status ClaimDrainSlot() override;
  void SubmitDrain(std::unique_ptr<Drain> drain, size_t keys) override;
  absl::Status WaitForDrain() override;
  bool WaitWhileDraining(absl::Duration up_to) override;
  absl::Status DrainError() override;
  bool OnTransactionRead(const replication::BinlogPosition& end) override;
  size_t InflightBytes() const override { return inflight_bytes_; }
  uint64_t DeferredRows() override;

  // Table setup (pipeline_table_setup.cc): the checkpoint, the tables and
  // their checks, before each read.
  absl::Status Prepare();
  // options_.start (gtid:...) as a position in the store.
  absl::StatusOr<replication::BinlogPosition> ResolveGtidStart() const;
  // The first DDL statement stored after a position for one table.
  struct DdlAhead {
    std::string at;          // "file:pos"
    bool redefines = false;  // DdlTarget::redefines
    bool appears = false;    // DdlTarget::appears
  };
  // Subscribed tables that a DDL stored after `from` names, keyed "db\0table"
  // ("db\0" for DROP DATABASE). Rows before that statement were logged under
  // the table's earlier definition (Prepare).
  absl::StatusOr<absl::flat_hash_map<std::string, DdlAhead>> FindDdlAhead(
      const replication::BinlogPosition& from);

  PipelineOptions options_;
  replication::StoreReadSide* store_;
  SourceLogin source_;
  CopyGate* gate_;
  LocalCheckpoint local_checkpoint_;
  // The configured tables and the source's naming rules (set by Prepare;
  // the reader reads them).
  SourceTableRules rules_;

  std::atomic<bool> stopping_{false};
  std::thread reader_thread_;
  std::thread drainer_;
  HoldGate hold_;
  replication::StorePin pin_;
  // The resume point (checkpoint) the next read starts from: set by
  // Restore and Prepare (reader thread).
  replication::BinlogPosition position_;
  ChangeReader reader_;

  // Drain thread state (and the reader's, during Prepare).
  std::unique_ptr<TargetFlusher> flusher_;
  std::atomic<size_t> inflight_bytes_{0};

  mutable absl::Mutex mu_;
  absl::Mutex stop_mu_;  // serializes Stop()
  absl::CondVar cv_;
  std::unique_ptr<Drain> pending_ ABSL_GUARDED_BY(mu_);  // handed off, not yet taken
  bool draining_ ABSL_GUARDED_BY(mu_) = false;  // a drain is pending or running
  absl::Status drain_error_ ABSL_GUARDED_BY(mu_);
  PipelineStatus status_ ABSL_GUARDED_BY(mu_);
  uint32_t flushed_ts_ ABSL_GUARDED_BY(mu_) = 0;  // the source's commit time at the checkpoint
};

}  // namespace binrelay::apply
