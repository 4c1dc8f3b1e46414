// TargetFlusher: writes a pipeline's drains to the target, then records the
// drain's checkpoint there.
//
// A drain's rows go out over up to `concurrency` sessions: per table, its
// upserts (multi-row REPLACE text, COM_STMT_BULK_EXECUTE commands where
// the target takes them, else prepared multi-row REPLACEs), in two waves for tables with UNIQUE keys
// (PartitionUpserts), then every delete; a table without a primary key in
// binlog order on one session. Each statement is retried by the one policy
// of writes to a target (target_session.h: contention and lost connections
// for as long as they last); contention also halves concurrency and batch
// size, which grow back after three clean drains (AIMD). Rows a move's
// copier still has to copy are held back (deferred_rows.h) and the
// checkpoint kept before them.
//
// Thread safety: Flush, SetUpsertProtocol and the drain-thread accessors
// from one thread at a time (the pipeline's drain thread, or its reader
// while no drain runs); the counters from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "apply/apply_table.h"
#include "apply/deferred_rows.h"
#include "apply/drain.h"
#include "apply/pipeline_options.h"
#include "apply/target_session.h"
#include "protocol/worker_pool.h"
#include "replication/binlog_position.h"

namespace binrelay::apply {

// How upserts reach the target.
enum class UpsertWrite : uint8_t {
  kText,     // multi-row REPLACE text
  kBulk,     // COM_STMT_BULK_EXECUTE of the one-row statement (MariaDB)
  kExecute,  // COM_STMT_EXECUTE of a multi-row statement (MySQL)
};

class TargetFlusher {
 public:
  // What the flusher needs from the pipeline that runs it.
  class Host {
   public:
    // Waits `d`; false (at once) when the pipeline is stopping.
    virtual bool Sleep(absl::Duration d) = 0;
    virtual bool stopping() const = 0;
    // A statement is retried: `code` is the server's error (2013 for a lost
    // connection); `target_lost` when the target cannot be reached (the
    // pipeline shows "retrying" with `error`).
    virtual void OnRetry(int code, bool target_lost, std::string_view error) = 0;
    // A statement succeeded after being retried.
    virtual void OnRecovered() = 0;
    // The target's checkpoint row now says `at` (the local file and the
    // store's pin follow).
    virtual absl::Status OnCheckpointWritten(const replication::BinlogPosition& at) = 0;

   protected:
    ~Host() = default;
  };

  TargetFlusher(const PipelineOptions& options, Host* host);
  TargetFlusher(const TargetFlusher&) = delete;
  TargetFlusher& operator=(const TargetFlusher&) = delete;

  // The first session: the pipeline's checks at start run on it.
  TargetSession& setup_session() { return *sessions_[0]; }
  // How upserts are written; `how` is what /status shows ("bulk",
  // "prepared", "text (bulk_replace = off)").
  void SetUpsertProtocol(UpsertWrite write, std::string how);

  // Applies every row of `drain` (and held-back rows whose chunk is now
  // copied), then writes the checkpoint (lowered to before any row still
  // held back) unless nothing changed. Cancelled when stopping.
  absl::Status Flush(Drain& drain);

  // Drain thread.
  bool has_deferred() const { return !deferred_.empty(); }
  uint64_t deferred_rows() const { return deferred_.rows(); }
  // The checkpoint of the last drain flushed, before lowering for held-back
  // rows.
  const replication::BinlogPosition& drained_to() const { return drained_to_; }
  size_t concurrency() const { return cur_concurrency_; }
  size_t batch_rows() const { return cur_batch_rows_; }

  // Any thread.
  uint64_t rows_written() const { return rows_written_.load(std::memory_order_relaxed); }
  uint64_t target_warnings() const;
  std::string upsert_protocol() const;

 private:
  using Job = std::function<absl::Status(TargetSession&)>;

  // Runs `jobs` over up to cur_concurrency_ sessions; the first error.
  absl::Status RunJobs(std::vector<Job>& jobs);
  absl::Status Execute(TargetSession& session, std::string_view sql, size_t rows);
  // Upserts rows[0, n) of `t` as upsert_ says.
  absl::Status Replace(TargetSession& session, const ApplyTable& t,
                       const BufferedRow* const* rows, size_t n, size_t max_rows,
                       size_t max_bytes);
  // Runs `run` (one statement or command on `session`) until it succeeds,
  // by the retry policy; `what` names it in a hard error.
  absl::Status RunWithRetry(TargetSession& session, std::string_view what, size_t rows,
                            absl::FunctionRef<absl::Status()> run);
  // After a statement the target ran with warnings: counts them and logs
  // the first few (SHOW WARNINGS), naming `what`.
  void NoteWarnings(TargetSession& session, std::string_view what, uint16_t warnings);

  const PipelineOptions& options_;
  Host* host_;
  std::vector<std::unique_ptr<TargetSession>> sessions_;
  // Runs a drain's jobs beside the flushing thread (concurrency - 1
  // threads, kept for the pipeline's life rather than started per drain).
  std::unique_ptr<WorkerPool> pool_;
  DeferredRows deferred_;  // held back for a move's copier
  replication::BinlogPosition drained_to_;
  replication::BinlogPosition written_;  // the checkpoint last written
  // Set to kText for the rest of the run when the target refuses a bulk or
  // execute command; read by the flush threads.
  std::atomic<UpsertWrite> upsert_{UpsertWrite::kText};
  size_t cur_concurrency_;
  size_t cur_batch_rows_;
  size_t clean_drains_ = 0;
  std::atomic<bool> contention_{false};  // set by flush threads during a drain
  std::atomic<uint64_t> rows_written_{0};

  mutable absl::Mutex mu_;
  uint64_t target_warnings_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t warnings_logged_ ABSL_GUARDED_BY(mu_) = 0;
  std::string upsert_protocol_ ABSL_GUARDED_BY(mu_);
};

}  // namespace binrelay::apply
