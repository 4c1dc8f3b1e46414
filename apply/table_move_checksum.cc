// TableMove's checksum: every chunk summed on both servers at one binlog
// position (source_snapshot.h, the pipeline advanced there and paused),
// differing chunks repaired from the source's snapshot and summed again.
#include <algorithm>
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
#include "replication/binlog_status.h"
#include "replication/connection_sql_source.h"
#include "spdlog/spdlog.h"

namespace binrelay::apply {

absl::StatusOr<std::vector<std::string>> TableMove::PreparedXids(
    replication::SqlSource& source) {
  // formatID, gtrid_length, bqual_length, data (sql/handler.cc,
  // mysql_xa_recover): one row per prepared transaction.
  // MySQL 8.0.14+ lists other sessions' prepared transactions only to
  // XA_RECOVER_ADMIN (MySQL manual, "XA Transaction SQL Statements").
  auto rows = source.Query("XA RECOVER");
  if (!rows.ok()) return Annotate(rows.status(), absl::StrCat("XA RECOVER on ", source.Peer()));
  std::vector<std::string> xids;
  for (const auto& r : *rows) {
    if (r.size() < 4) continue;
    xids.push_back(absl::StrCat("'", r[3].value_or(""), "' (formatID ", r[0].value_or("?"), ")"));
  }
  std::sort(xids.begin(), xids.end());
  return xids;
}

absl::Status TableMove::WaitForXaPreparedBeforeStart() {
  // An XA transaction prepared before the pipeline's start position has
  // its rows in the binlog before it: the pipeline never sees them, and
  // the copy could not (they were not committed). Committed later, they
  // are on the source only. The checksum, which compares every range and
  // copies a differing one again, must therefore come after every such
  // transaction is resolved: it then repairs what they wrote.
  if (xa_before_start_.empty()) return absl::OkStatus();
  replication::ConnectionSqlSource source(SourceFollowing());
  absl::Time logged = absl::InfinitePast();
  while (true) {
    BR_ASSIGN_OR_RETURN(std::vector<std::string> now, PreparedXids(source));
    std::vector<std::string> waiting;
    std::set_intersection(xa_before_start_.begin(), xa_before_start_.end(), now.begin(),
                          now.end(), std::back_inserter(waiting));
    if (waiting.empty()) {
      if (logged != absl::InfinitePast()) {
        spdlog::info("move {}: the XA transactions prepared before it began are resolved", name());
      }
      return absl::OkStatus();
    }
    if (absl::Now() - logged > absl::Seconds(60)) {
      spdlog::warn("move {}: waiting for {} XA transaction(s) prepared on the source before the "
                   "move began: {}. What they wrote is not in the binlog the move reads, so its "
                   "checksum must follow their XA COMMIT or XA ROLLBACK (resolve them on {})",
                   name(), waiting.size(), absl::StrJoin(waiting, ", "), source.Peer());
      logged = absl::Now();
    }
    if (!Sleep(absl::Seconds(1))) return absl::CancelledError("stopping");
    BR_RETURN_IF_ERROR(PipelineError());
  }
}

absl::Status TableMove::WaitCaughtUp(absl::Duration max_wait) {
  const absl::Time give_up = absl::Now() + max_wait;
  while (true) {
    BR_RETURN_IF_ERROR(PipelineError());
    PipelineStatus p = pipeline_->Status();
    // "Trivial": what is left applies in well under a second.
    if (p.lag_bytes <= (256u << 10) && p.deferred == 0 && p.state != PipelineState::kPreparing) {
      return absl::OkStatus();
    }
    if (absl::Now() > give_up) {
      return absl::UnavailableError(absl::StrCat("the apply pipeline is ", p.lag_bytes,
                                                 " bytes behind binrelay's store"));
    }
    if (!Sleep(absl::Milliseconds(100))) return absl::CancelledError("stopping");
  }
}

absl::Status TableMove::SumAtOnePosition(Table& t, const std::vector<KeyRange>& ranges,
                                         std::vector<size_t>* differing,
                                         const std::function<void()>& target_done) {
  // The target's ranges are summed by two connections, each on its own
  // snapshot at the same position (opened while the pipeline is paused), the
  // source's by one: the target is done first, and what follows it there
  // (target_done: the index build) overlaps the source's sums.
  const size_t on_target = std::min<size_t>(2, ranges.size());
  // Pause first: the reader then stands at or before the source's
  // position, so it can be advanced to the snapshot's.
  std::optional<Snapshot> source;
  std::vector<Snapshot> targets;
  {
    ResumeOnExit resume(pipeline_.get());  // also when the pause fails
    BR_RETURN_IF_ERROR(pipeline_->Pause(absl::Seconds(60)).status());
    BR_ASSIGN_OR_RETURN(Snapshot s, SnapshotAtPipeline(t));
    source.emplace(std::move(s));
    for (size_t k = 0; k < on_target; ++k) {
      BR_ASSIGN_OR_RETURN(Snapshot d, OpenSnapshot(options_.apply.target));
      targets.push_back(std::move(d));
    }
  }
  // One expression on both sides: the source's shape, read from the
  // target's table.
  TableShape as_target = t.plan.source;
  as_target.db = t.target.db;
  as_target.table = t.target.table;
  RangeChecksum source_sum(t.plan.source, source_checksum_);
  RangeChecksum target_sum(as_target, target_checksum_);
  std::vector<absl::StatusOr<RangeSum>> theirs(ranges.size(), absl::UnknownError("not run"));
  std::atomic<bool> abort{false};  // either side failed: the other stops too
  std::atomic<size_t> targets_left{on_target};
  std::vector<absl::StatusOr<RangeSum>> ours;
  ours.reserve(ranges.size());
  {
    std::vector<std::jthread> on_targets;
    for (size_t k = 0; k < on_target; ++k) {
      on_targets.emplace_back([&, k] {
        // Connection k sums every on_target-th range from k.
        for (size_t i = k; i < ranges.size() && !abort && !stopping_; i += on_target) {
          auto sum = target_sum.Sum(*targets[k].sql, ranges[i].where);
          if (sum.ok()) {
            theirs[i] = std::move(sum);
          } else {
            theirs[i] = Annotate(sum.status(), absl::StrCat("summing ", t.TargetSql(),
                                                            " on the target"));
            abort = true;
          }
        }
        // Its snapshot ends here: an index build must not wait for it.
        (void)targets[k].sql->Query("COMMIT");
        if (targets_left.fetch_sub(1) == 1 && !abort && !stopping_ && target_done) {
          target_done();
        }
      });
    }
    for (size_t i = 0; i < ranges.size() && !abort && !stopping_; ++i) {
      ours.push_back(source_sum.Sum(*source->sql, ranges[i].where));
      if (!ours.back().ok()) abort = true;
    }
  }  // joined here, whatever happened
  if (stopping_) return absl::CancelledError("stopping");
  if (abort) {  // the first error of either side
    for (const auto& r : ours) BR_RETURN_IF_ERROR(r.status());
    for (const auto& r : theirs) {
      if (!r.ok() && !absl::IsUnknown(r.status())) return r.status();
    }
  }
  if (ours.size() < ranges.size()) {
    return absl::UnavailableError(absl::StrCat("move ", name(), ": the checksum of ", t.Name(),
                                               " stopped early"));
  }
  for (size_t i = 0; i < ranges.size(); ++i) {
    const std::string& where = ranges[i].where;
    BR_ASSIGN_OR_RETURN(RangeSum a, std::move(ours[i]));
    BR_ASSIGN_OR_RETURN(RangeSum b, std::move(theirs[i]));
    if (!(a == b)) {
      spdlog::warn("move {}: {} differs where {} at {}: source {} row(s), target {} row(s)",
                   name(), t.Name(), where, source->position.ToString(), a.rows, b.rows);
      differing->push_back(i);
    }
  }
  (void)source->sql->Query("COMMIT");
  return absl::OkStatus();
}

absl::StatusOr<Snapshot> TableMove::SnapshotAtPipeline(const Table& t) {
  return SourceSnapshotAtPipeline(
      SourceConnect(), source_is_mariadb_, t.SourceSql(), name(),
      [this](absl::Duration d) { return Sleep(d); },
      [this](const replication::BinlogPosition& at) {
        return pipeline_->AdvanceTo(at, absl::Seconds(120));
      });
}

absl::Status TableMove::Repair(Table& t, const KeyRange& range) {
  ResumeOnExit resume(pipeline_.get());
  BR_RETURN_IF_ERROR(pipeline_->Pause(absl::Seconds(60)).status());
  BR_ASSIGN_OR_RETURN(Snapshot source, SnapshotAtPipeline(t));
  // The pipeline stays paused at the snapshot's position: the range on the
  // target becomes exactly the source's there, and the changes after it
  // follow once it resumes.
  TargetSession target(options_.apply.target, options_.apply.lock_wait_timeout_seconds);
  const std::string what = absl::StrCat("move ", name(), ": repairing ", t.Name(), " on ",
                                        target.peer(), " where ", range.where);
  BR_RETURN_IF_ERROR(Annotate(
      target.Execute(absl::StrCat("DELETE FROM ", t.TargetSql(), " WHERE ", range.where)), what));
  // REPLACE: with the range deleted no primary key can collide; a row
  // outside it still holding one of the range's unique values at this
  // position is stale and goes (its own range is compared in turn).
  BR_RETURN_IF_ERROR(Annotate(t.copier
                                  ->Copy(*source.sql, target, range, *t.chunker,
                                         options_.copy_batch_bytes, RangeCopier::Write::kReplace)
                                  .status(),
                              what));
  (void)source.sql->Query("COMMIT");
  return absl::OkStatus();
}

absl::Status TableMove::Retry(std::string_view what, const std::function<absl::Status()>& step) {
  // A lost connection, a pause that timed out (the store behind the
  // source for a while): tried again, not the end of the move. A changed
  // row, a refused precondition or argument are final.
  RetryPolicy policy;
  policy.retryable = [this](const absl::Status& s) {
    return !stopping_ && !absl::IsDataLoss(s) && !absl::IsFailedPrecondition(s) &&
           !absl::IsInvalidArgument(s);
  };
  policy.wait = [](int attempt, const absl::Status&) { return absl::Seconds(2 * attempt); };
  policy.max_attempts = 5;
  return RunWithRetries(
             policy, [this](absl::Duration d) { return Sleep(d); }, [&] { return step(); },
             [&](int attempt, const absl::Status& s) {
               spdlog::warn("move {}: {} failed (attempt {} of 5), retrying: {}", name(), what,
                            attempt, SV(s.message()));
             })
      .status;
}

absl::Status TableMove::Checksum() {
  uint64_t total = 0;
  for (auto& t : tables_) total += t->plan.approx_rows / std::max<uint64_t>(1, t->chunk_rows) + 1;
  {
    absl::MutexLock l(&mu_);
    status_.chunks_total = total;
  }
  // Its ranges are resumable after the last one compared: the copy's,
  // joined, when this run copied the table whole, else cut by index dives
  // (an earlier run's copy ranges are gone). One snapshot per group of ranges:
  // a snapshot held open over a whole big table would keep the source's
  // undo history growing meanwhile.
  constexpr size_t kPerSnapshot = 64;
  for (auto& t : tables_) {
    if (t->progress.checksum_done) continue;
    // One index build at a time: an earlier table's ends before this
    // table's sums begin.
    for (auto& u : tables_) {
      if (u != t) JoinIndexBuild(*u);
    }
    BR_ASSIGN_OR_RETURN(KeyRangeChunker ranges,
                        KeyRangeChunker::Create(t->plan.source, t->progress.checked));
    replication::ConnectionSqlSource source(SourceFollowing());
    if (t->row_bytes == 0) {  // a resumed move: this run copied nothing
      BR_ASSIGN_OR_RETURN(auto sample, t->copier->SampleRowBytes(source, *t->chunker, 20));
      if (sample.second > 0) t->row_bytes = std::max<uint64_t>(1, sample.first / sample.second);
    }
    // A differing range is copied again whole: within copy_chunk_bytes too.
    const uint64_t rows = t->RowsWithin(std::max<uint64_t>(1000, t->chunk_rows),
                                        options_.copy_chunk_bytes);
    // A checksum from the start of a table this run copied whole: its
    // ranges joined from the copy's, consecutive ones while they hold at
    // most `rows` rows together (a single one may hold more: it was cut
    // within copy_chunk_bytes), then the copy's last range, to the end.
    const bool from_cuts = !t->progress.checked && t->copy_cuts_complete;
    const std::vector<TableMove::Table::Cut>& cuts = t->copy_cuts;
    size_t cut = 0;
    auto next = [&]() -> absl::StatusOr<std::optional<KeyRange>> {
      if (!from_cuts) return ranges.Next(source, rows);
      if (cut == cuts.size()) return ranges.NextTo(std::nullopt);
      uint64_t joined = cuts[cut++].rows;
      while (cut < cuts.size() && joined + cuts[cut].rows <= rows) joined += cuts[cut++].rows;
      return ranges.NextTo(cuts[cut - 1].upper);
    };
    bool last = false;
    while (!last) {
      if (stopping_) return absl::CancelledError("stopping");
      std::vector<KeyRange> group;
      while (group.size() < kPerSnapshot) {
        BR_ASSIGN_OR_RETURN(std::optional<KeyRange> r, next());
        if (!r) {
          last = true;
          break;
        }
        const bool to_end = !r->upper.has_value();
        group.push_back(std::move(*r));
        if (to_end) {
          last = true;
          break;
        }
      }
      if (group.empty()) break;
      std::vector<size_t> differing;
      // The last group's: the index build starts as soon as the target has
      // nothing left to sum.
      std::function<void()> then_indexes;
      if (last) then_indexes = [this, &t] { StartIndexBuild(*t); };
      int attempt = 0;
      BR_RETURN_IF_ERROR(Retry("checksum", [&] {
        differing.clear();
        // Again after the build started: its target snapshots must not
        // stand in the build's way (see below).
        if (attempt++ > 0) JoinIndexBuild(*t);
        return SumAtOnePosition(*t, group, &differing, then_indexes);
      }));
      // A repair's sums read the target: not beside an index build, whose
      // last step (an exclusive metadata lock) would wait for them, and the
      // pipeline's writes behind it.
      if (!differing.empty()) JoinIndexBuild(*t);
      {
        absl::MutexLock l(&mu_);
        status_.chunks_checked += group.size();
        status_.chunks_differing += differing.size();
      }
      for (size_t i : differing) {
        BR_RETURN_IF_ERROR(Retry("repair", [&] { return Repair(*t, group[i]); }));
        std::vector<size_t> still;
        BR_RETURN_IF_ERROR(Retry("checksum", [&] {
          still.clear();
          return SumAtOnePosition(*t, {group[i]}, &still);
        }));
        if (!still.empty()) {
          return absl::DataLossError(absl::StrCat(
              "move ", name(), ": ", t->Name(), " still differs on the target where ",
              group[i].where, " after it was copied again; the move stops before "
              "cutover. Compare the rows by hand (a trigger or another writer on the target "
              "table?)"));
        }
        absl::MutexLock l(&mu_);
        ++status_.chunks_repaired;
      }
      // The test hook stops with the checksum unfinished: after a saved
      // group when more follow, else before the last group is saved.
      if (last && !StallIfAsked("checksum")) return absl::CancelledError("stopping");
      if (group.back().upper) t->progress.checked = group.back().upper;
      t->progress.checksum_done = last;
      if (last) std::vector<TableMove::Table::Cut>().swap(t->copy_cuts);
      BR_RETURN_IF_ERROR(SaveProgress(*t));
      if (!last && !StallIfAsked("checksum")) return absl::CancelledError("stopping");
    }
  }
  MoveStatus s = Status();
  {
    absl::MutexLock l(&mu_);
    status_.chunks_total = status_.chunks_checked;
  }
  spdlog::info("move {}: checksum: {} chunk(s) checked, {} differed, {} repaired", name(),
               s.chunks_checked, s.chunks_differing, s.chunks_repaired);
  return absl::OkStatus();
}

}  // namespace binrelay::apply
