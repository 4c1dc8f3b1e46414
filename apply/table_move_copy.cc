// TableMove's copy: each table cut into primary-key chunks copied by
// worker threads beside the pipeline (the copy gate between them), then
// the secondary indexes added.
#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <deque>
#include <iterator>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "apply/move_session.h"
#include "apply/moved_table.h"
#include "apply/range_checksum.h"
#include "apply/range_copier.h"
#include "apply/retry_policy.h"
#include "apply/secondary_indexes.h"
#include "apply/source_snapshot.h"
#include "apply/sql_literal.h"
#include "apply/subscription.h"
#include "apply/table_key.h"
#include "apply/table_move.h"
#include "apply/table_shape.h"
#include "apply/target_session.h"
#include "protocol/status_macros.h"
#include "protocol/text_rows.h"
#include "protocol/worker_pool.h"
#include "replication/binlog_status.h"
#include "replication/connection_sql_source.h"
#include "spdlog/spdlog.h"

namespace binrelay::apply {

absl::Status TableMove::CopyTable(Table& t) {
  replication::ConnectionSqlSource source(SourceFollowing());
  const bool exact = t.gate->exact_order();
  // Keys under a collation: one chunk at a time, and none while the
  // pipeline still holds changes back (it holds every change of the table
  // while any chunk is in flight: copy_watermarks.h).
  const size_t workers = exact ? std::max<size_t>(1, options_.copy_threads) : 1;
  struct Job {
    KeyRange range;
    uint64_t id;
  };
  std::mutex qmu;
  std::condition_variable qcv;
  std::deque<Job> queue;
  size_t busy = 0;  // queued or being copied
  bool closed = false;
  absl::Status error;
  // What a row costs to hold, before the first chunk is read whole.
  auto sample = t.copier->SampleRowBytes(source, *t.chunker, 20);
  if (!sample.ok()) {
    return Annotate(sample.status(), absl::StrCat("move ", name(), ": sampling ", t.Name()));
  }
  if (sample->second > 0) t.row_bytes = std::max<uint64_t>(1, sample->first / sample->second);
  std::atomic<uint64_t> chunk_rows{t.RowsWithin(t.chunk_rows, options_.copy_chunk_bytes)};
  const double target_seconds =
      std::max(0.05, std::chrono::duration<double>(options_.chunk_time).count());

  RetryPolicy copy_policy = TargetWritePolicy();
  copy_policy.retryable = [this](const absl::Status& s) {
    return !stopping_ && !absl::IsDataLoss(s) && Classify(s) != ErrorClass::kHard;
  };
  auto work = [&] {
    replication::ConnectionSqlSource src(SourceFollowing());
    TargetSession target(options_.apply.target, options_.apply.lock_wait_timeout_seconds);
    protocol::TextRows rows;  // one range's rows, its memory kept for the next
    while (true) {
      Job job;
      {
        std::unique_lock<std::mutex> l(qmu);
        qcv.wait(l, [&] { return !queue.empty() || closed || !error.ok() || stopping_; });
        if (queue.empty() || !error.ok() || stopping_) return;
        job = std::move(queue.front());
        queue.pop_front();
      }
      const absl::Time start = absl::Now();
      absl::StatusOr<CopyResult> n = absl::UnknownError("not copied");
      // INSERT IGNORE of the same range again is harmless. Retried like the
      // pipeline's writes, for as long as the target's locks or a lost
      // connection last (target_session.h). DataLoss (the target changed a
      // row) is not: a retry would find the changed row there and see only
      // a duplicate. On stopping, `n` keeps the last failure.
      RunWithRetries(
          copy_policy, [this](absl::Duration d) { return Sleep(d); },
          [&] {
            n = t.copier->Copy(src, target, job.range, *t.chunker, options_.copy_batch_bytes,
                               RangeCopier::Write::kInsertIgnore, &rows);
            return n.status();
          },
          [&](int attempt, const absl::Status& s) {
            if (attempt == 1 || (attempt - 1) % 30 == 0) {
              spdlog::warn("move {}: copying a chunk of {} ({}) failed (attempt {}), retrying: {}",
                           name(), t.Name(), job.range.where, attempt, SV(s.message()));
            }
          });
      std::lock_guard<std::mutex> l(qmu);
      --busy;
      if (!n.ok()) {
        error = Annotate(n.status(), absl::StrCat("move ", name(), ": copying ", t.Name(),
                                                  " where ", job.range.where));
        qcv.notify_all();
        return;
      }
      t.gate->Complete(job.id);
      rows_copied_ += n->rows;
      ++chunks_copied_;
      if (n->unique_conflicts > 0) {
        // Not lost: the checksum compares this range at one binlog position
        // and copies it again if it differs (range_copier.h).
        rows_left_to_checksum_ += n->unique_conflicts;
        spdlog::warn("move {}: {} row(s) of {} where {} not copied: a UNIQUE value they hold "
                     "is still held on the target by a row whose change the pipeline has not "
                     "applied yet; the checksum will compare and repair the range",
                     name(), n->unique_conflicts, t.Name(), job.range.where);
      }
      // Next chunks sized to take about chunk_time: by this one's rate,
      // growing at most 2x and shrinking at most 4x at a time.
      const double secs = std::max(0.001, absl::ToDoubleSeconds(absl::Now() - start));
      // Never above copy_chunk_bytes by the rows just read.
      const uint64_t cur = chunk_rows.load();
      if (n->rows > 0) {
        t.row_bytes = std::max<uint64_t>(1, n->bytes / n->rows);
        double ideal = static_cast<double>(n->rows) / secs * target_seconds;
        ideal = std::clamp(ideal, static_cast<double>(cur) / 4, static_cast<double>(cur) * 2);
        chunk_rows = t.RowsWithin(std::clamp<uint64_t>(static_cast<uint64_t>(ideal), 100, 500000),
                                  options_.copy_chunk_bytes);
      }
      qcv.notify_all();
    }
  };
  // One thread per copier for this table's copy; the job loops run until
  // the queue closes, so the pool has exactly as many threads.
  WorkerPool pool(workers, workers);
  JobGroup copiers(&pool);
  for (size_t i = 0; i < workers; ++i) copiers.Run(work);

  // Upper bounds handed out, by ordered key: the checkpoint stores the
  // bound the low watermark reached as the chunker resumes from it.
  std::map<std::string, KeyBound> bounds;
  t.copy_cuts.clear();
  t.copy_cuts_complete = false;
  const bool from_start = !t.progress.copied.has_value();
  absl::Time saved_at = absl::Now();
  auto save = [&]() -> absl::Status {
    TableCopyGate::Snapshot w = t.gate->snapshot();
    if (w.low_watermark) {
      auto it = bounds.find(*w.low_watermark);
      if (it != bounds.end()) t.progress.copied = it->second;
      bounds.erase(bounds.begin(), bounds.upper_bound(*w.low_watermark));
    }
    t.progress.guard = w.checkpoint_guard;
    saved_at = absl::Now();
    return SaveProgress(t);
  };
  absl::Status s;
  while (true) {
    {
      std::unique_lock<std::mutex> l(qmu);
      qcv.wait(l, [&] { return busy < workers || !error.ok() || stopping_; });
      if (!error.ok() || stopping_) break;
    }
    // Every second: a resumed copy recopies at most what was handed out
    // since.
    if (absl::Now() - saved_at >= absl::Seconds(1)) {
      if (s = save(); !s.ok()) break;
    }
    if (!exact) {
      while (!t.gate->WaitNoneDeferred(absl::Milliseconds(200))) {
        if (stopping_) break;
        if (s = PipelineError(); !s.ok()) break;
      }
      if (stopping_ || !s.ok()) break;
    }
    const uint64_t cut_rows = chunk_rows.load();
    auto next = t.chunker->Next(source, cut_rows);
    if (!next.ok()) {
      s = Annotate(next.status(), absl::StrCat("move ", name(), ": cutting ", t.Name()));
      break;
    }
    if (!next->has_value()) {  // every chunk handed out
      t.copy_cuts_complete = from_start;
      break;
    }
    if (dispatches_ < 2 && !HoldIfAsked(absl::StrCat("dispatch ", dispatches_ + 1))) {
      s = absl::CancelledError("stopping");
      break;
    }
    ++dispatches_;
    KeyRange range = std::move(**next);
    std::optional<std::string> upper;
    if (range.upper) {
      upper = range.upper->ordered;
      bounds[range.upper->ordered] = *range.upper;
      t.copy_cuts.push_back({*range.upper, cut_rows});
    }
    // Handed out before its SELECT runs: from here on changes to its keys
    // are kept and held back until its rows are on the target.
    auto id = t.gate->Dispatch(std::move(upper));
    if (!id.ok()) {
      s = Annotate(id.status(), absl::StrCat("move ", name(), ": handing out a chunk of ",
                                             t.Name(), " where ", range.where));
      break;
    }
    std::lock_guard<std::mutex> l(qmu);
    queue.push_back(Job{std::move(range), *id});
    ++busy;
    qcv.notify_all();
  }
  {
    std::lock_guard<std::mutex> l(qmu);
    closed = true;
    if (!s.ok() && error.ok()) error = s;
    qcv.notify_all();
  }
  copiers.Wait();
  t.chunk_rows = chunk_rows.load();
  if (!error.ok()) return error;
  if (stopping_) return absl::CancelledError("stopping");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<IndexDefinition>> TableMove::DeferredIndexesOf(const Table& t) {
  // The source's indexes as they are now, compared by name with the
  // target's: also right after a restart, and for a target table an
  // operator created without them.
  replication::ConnectionSqlSource source(SourceFollowing());
  BR_ASSIGN_OR_RETURN(std::string ddl,
                      ShowCreateTable(source, t.plan.name.db, t.plan.name.table));
  return DeferrableIndexes(ddl);
}

protocol::ConnectOptions TableMove::IndexBuilderSession() const {
  // A big table's index build outlasts the usual 60 s read timeout.
  protocol::ConnectOptions long_reads = options_.apply.target;
  long_reads.io_timeout = std::chrono::hours(6);
  return long_reads;
}

void TableMove::StartIndexBuild(Table& t) {
  if (t.index_build.valid()) return;  // a retried checksum group
  // One attempt, online only, beside the checksum's last source sums: a
  // build with the pipeline's writes waiting would stall a later table's
  // checksum, which pauses and advances the pipeline. FinishIndexes builds
  // again, with retries and that fallback, what it could not.
  t.index_build = std::async(std::launch::async, [this, &t]() -> absl::Status {
    const absl::Time started = absl::Now();
    BR_ASSIGN_OR_RETURN(std::vector<IndexDefinition> indexes, DeferredIndexesOf(t));
    if (indexes.empty()) return absl::OkStatus();
    replication::ConnectionSqlSource target(IndexBuilderSession());
    BR_ASSIGN_OR_RETURN(t.indexes_added,
                        AddMissingIndexes(target, t.TargetSql(), indexes, /*not_online=*/nullptr,
                                          /*online_only=*/true));
    t.index_build_took = absl::Now() - started;
    return absl::OkStatus();
  });
}

void TableMove::JoinIndexBuild(Table& t) {
  if (!t.index_build.valid()) return;
  if (absl::Status built = t.index_build.get(); !built.ok()) {
    spdlog::warn("move {}: building the secondary indexes of {} beside the checksum failed ({}); "
                 "they are built again after it", name(), t.Name(), SV(built.message()));
  }
}

absl::Status TableMove::FinishIndexes() {
  for (auto& t : tables_) {
    JoinIndexBuild(*t);
    const size_t built_before = t->indexes_added.size();
    const absl::Time started = absl::Now();
    BR_RETURN_IF_ERROR(AddIndexesOf(*t));
    if (t->indexes_added.size() > built_before) t->index_build_took += absl::Now() - started;
    if (!t->indexes_added.empty()) {
      spdlog::info("move {}: built {} index(es) of {} on the target in {}: {}", name(),
                   t->indexes_added.size(), t->Name(), absl::FormatDuration(t->index_build_took),
                   absl::StrJoin(t->indexes_added, ", "));
      t->indexes_added.clear();
      t->index_build_took = absl::ZeroDuration();
    }
  }
  return absl::OkStatus();
}

absl::Status TableMove::AddIndexesOf(Table& t) {
  BR_ASSIGN_OR_RETURN(std::vector<IndexDefinition> indexes, DeferredIndexesOf(t));
  if (indexes.empty()) return absl::OkStatus();
  return Retry("adding secondary indexes", [&]() -> absl::Status {
    replication::ConnectionSqlSource target(IndexBuilderSession());
    std::string not_online;
    auto a = AddMissingIndexes(target, t.TargetSql(), indexes, &not_online);
    if (!not_online.empty()) {
      spdlog::warn("move {}: the indexes of {} could not be built online on {} ({}); built "
                   "with the pipeline's writes waiting", name(), t.Name(), target.Peer(),
                   not_online);
    }
    if (ServerErrorCode(a.status()) == 1799) {
      // ER_INNODB_ONLINE_LOG_TOO_BIG: the changes applied during the build
      // outgrew innodb_online_alter_log_max_size; build it with the
      // pipeline paused (the store keeps what it has not applied).
      ResumeOnExit resume(pipeline_.get());
      BR_RETURN_IF_ERROR(pipeline_->Pause(absl::Seconds(60)).status());
      a = AddMissingIndexes(target, t.TargetSql(), indexes, &not_online);
    }
    if (!a.ok()) {
      return Annotate(a.status(), absl::StrCat("move ", name(), ": adding the secondary "
                                               "indexes of ", t.Name(), " on ",
                                               target.Peer()));
    }
    t.indexes_added.insert(t.indexes_added.end(), a->begin(), a->end());
    return absl::OkStatus();
  });
}

}  // namespace binrelay::apply
