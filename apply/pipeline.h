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
#include "apply/copy_gate.h"
#include "apply/drain.h"
#include "apply/hold_gate.h"
#include "apply/pipeline_checkpoint.h"
#include "apply/pipeline_options.h"
#include "apply/pipeline_state.h"
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
  // How upserts reach the target: "bulk" (COM_STMT_BULK_EXECUTE) or "text"
  // (multi-row REPLACE); "" until the target was checked.
  std::string upsert_protocol;
  std::map<int, uint64_t> retries;  // by server error code (2013: connection)
};

// The coordinator of the parts below: table setup at start
// (pipeline_table_setup.cc), the reader (pipeline_reader.cc, with its
// ChangeSink in pipeline_sink.h), the flusher (target_flusher.h), the
// checkpoint (pipeline_checkpoint.h) and the hold gate (hold_gate.h).
class ApplyPipeline final : private TargetFlusher::Host {
 public:
  // `gate` (a move's copier; may be null) must outlive the pipeline.
  ApplyPipeline(PipelineOptions options, replication::StoreReadSide* store,
                protocol::ConnectOptions source, CopyGate* gate = nullptr);
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
  class Sink;

  // Coordinator (pipeline.cc).
  void Run();
  void DrainLoop();
  void SetState(PipelineState state, std::string error = "");
  // The state with what it is doing in it (PipelineStatus::activity).
  void SetActivity(PipelineState state, std::string activity);
  // A hold request's timeout, with the state the pipeline is in.
  absl::Status WithState(absl::Status s) const;
  // TargetFlusher::Host.
  bool Sleep(absl::Duration d) override;  // false if stopping
  bool stopping() const override { return stopping_; }
  void OnRetry(int code, bool target_lost, std::string_view error) override;
  void OnRecovered() override;
  absl::Status OnCheckpointWritten(const replication::BinlogPosition& at) override;

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
  // Whether a table named by a DDL is one of ours, and its key among
  // DdlAhead entries, by the source's rule for letter case.
  bool DdlNamesOurs(std::string_view db, std::string_view table) const;
  std::string DdlKey(std::string_view db, std::string_view table) const;

  // Reader (pipeline_reader.cc).
  absl::Status ReadLoop();
  // Hands the buffers to the drainer (waits if one is in flight).
  absl::Status HandOff();
  absl::Status WaitForDrain();
  // Whether an idle drain thread should take the buffer before
  // flush_interval: see the definition.
  bool WorthDrainingEarly() const;
  // Holds here if the hold gate asks to (at a transaction boundary, `at`
  // being the end of the last event read), with everything before it on
  // the target.
  absl::Status MaybeHold(const replication::BinlogPosition& at);
  // The rows of XA transaction `xid`, committed now but prepared before
  // read_start_ (ScanForXa reads them back once per read). None, with a
  // warning, when the store no longer holds its XA PREPARE;
  // FailedPrecondition when they cannot be applied to the table as it is.
  absl::StatusOr<std::vector<HeldRow>> ReadBackXa(const std::string& xid);
  absl::Status ScanForXa();

  PipelineOptions options_;
  replication::StoreReadSide* store_;
  protocol::ConnectOptions source_;
  CopyGate* gate_;
  LocalCheckpoint local_checkpoint_;
  Subscription pattern_;  // the configured tables (DDL and new tables are matched by it)
  std::optional<Subscription> exact_;  // the tables checked at start
  // Arena chunks recycled from flushed drains to the buffers (declared
  // before everything holding an arena, so it outlives them).
  std::unique_ptr<ImageArena::Pool> image_pool_;

  std::atomic<bool> stopping_{false};
  std::thread reader_;
  std::thread drainer_;
  HoldGate hold_;

  // Reader thread state.
  absl::flat_hash_map<std::string, std::unique_ptr<ApplyTable>> tables_;  // "db\0t"
  absl::flat_hash_map<const ApplyTable*, std::unique_ptr<TableBuffer>> buffers_;
  replication::BinlogPosition position_;  // resume point (checkpoint)
  replication::BinlogPosition read_start_;  // where the current read began
  // XA transactions prepared before read_start_ and undecided there, read
  // back from the store by the first XA COMMIT that needed one.
  struct ReadBack {
    XaHolds holds;
    std::map<std::string, std::string> unusable;  // xid -> why it cannot be applied
    std::map<const ApplyTable*, ApplyTable> shapes;  // for tables not yet seen live
    std::string missing;  // why the store could not tell (empty: it could)
  };
  std::optional<ReadBack> read_back_;
  replication::BinlogPosition last_commit_;
  replication::BinlogPosition handed_checkpoint_;  // of the last hand-off
  // The checkpoint the last drain carried (before which no change of the
  // next drain lies): the next drain's `since`.
  replication::BinlogPosition last_drain_checkpoint_;
  uint32_t last_commit_ts_ = 0;
  std::atomic<size_t> buffered_bytes_{0};  // written by the reader, read by status
  absl::Time last_handoff_ = absl::InfinitePast();
  uint64_t changes_since_handoff_ = 0;  // row changes buffered since the last hand-off
  absl::Status ddl_stop_;  // set by a DDL on a subscribed table
  // Whether the source carries out ON DELETE/UPDATE CASCADE and SET NULL
  // without logging the changes (set by Prepare).
  bool cascades_unlogged_ = true;
  // The source's lower_case_table_names (set by Prepare): nonzero, a DDL may
  // name a subscribed table in another letter case.
  int lower_case_table_names_ = 0;
  XaHolds xa_;             // prepared XA transactions' rows, until decided
  std::atomic<uint64_t> xa_held_{0};  // xa_.held(), for status
  std::atomic<uint64_t> changes_read_{0};

  // Drain thread state (and the reader's, during Prepare).
  std::unique_ptr<TargetFlusher> flusher_;
  std::atomic<size_t> inflight_bytes_{0};
  replication::StorePin pin_;

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
