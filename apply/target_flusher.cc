#include "apply/target_flusher.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "apply/pipeline_checkpoint.h"
#include "apply/retry_policy.h"
#include "protocol/status_macros.h"
#include "replication/store_index.h"
#include "spdlog/spdlog.h"

namespace binrelay::apply {

TargetFlusher::TargetFlusher(const PipelineOptions& options, Host* host)
    : options_(options),
      host_(host),
      cur_concurrency_(options.concurrency),
      cur_batch_rows_(options.batch_rows) {
  const size_t sessions = std::max<size_t>(1, options_.concurrency);
  for (size_t i = 0; i < sessions; ++i) {
    sessions_.push_back(
        std::make_unique<TargetSession>(options_.target, options_.lock_wait_timeout_seconds));
  }
  if (sessions > 1) pool_ = std::make_unique<WorkerPool>(sessions - 1, sessions);
}

void TargetFlusher::SetUpsertProtocol(UpsertWrite write, std::string how) {
  upsert_ = write;
  absl::MutexLock l(&mu_);
  upsert_protocol_ = std::move(how);
}

uint64_t TargetFlusher::target_warnings() const {
  absl::MutexLock l(&mu_);
  return target_warnings_;
}

std::string TargetFlusher::upsert_protocol() const {
  absl::MutexLock l(&mu_);
  return upsert_protocol_;
}

absl::Status TargetFlusher::Execute(TargetSession& session, std::string_view sql, size_t rows) {
  uint16_t warnings = 0;
  BR_RETURN_IF_ERROR(
      RunWithRetry(session, sql, rows, [&] { return session.Execute(sql, &warnings); }));
  if (warnings > 0) NoteWarnings(session, sql, warnings);
  return absl::OkStatus();
}

void TargetFlusher::NoteWarnings(TargetSession& session, std::string_view what,
                                 uint16_t warnings) {
  {
    absl::MutexLock l(&mu_);
    ++target_warnings_;
    if (warnings_logged_ >= 10) return;
    ++warnings_logged_;
  }
  std::string shown;
  auto w = session.Query("SHOW WARNINGS LIMIT 3");
  if (w.ok()) {
    for (const auto& row : w->rows) {
      if (row.size() < 3) continue;
      absl::StrAppend(&shown, shown.empty() ? "" : "; ", row[1].value_or(""), " ",
                      row[2].value_or(""));
    }
  }
  spdlog::warn("apply pipeline {}: target {} ran {} with {} warning(s): {}", options_.name,
               session.peer(), what.substr(0, 120), warnings, shown);
}

absl::Status TargetFlusher::RunWithRetry(TargetSession& session, std::string_view what,
                                         size_t rows, absl::FunctionRef<absl::Status()> run) {
  static const RetryPolicy kPolicy = TargetWritePolicy();
  RetryResult r = RunWithRetries(
      kPolicy, [this](absl::Duration d) { return host_->Sleep(d); }, run,
      [&](int attempt, const absl::Status& s) {
        if (host_->stopping()) return;  // no retry will follow: nothing to count
        const ErrorClass c = Classify(s);
        const int code = ServerErrorCode(s) != 0 ? ServerErrorCode(s) : 2013;
        host_->OnRetry(code, c == ErrorClass::kConnection,
                       c == ErrorClass::kConnection
                           ? absl::StrCat("target ", session.peer(), ": ", s.message())
                           : std::string());
        if (c == ErrorClass::kContention) {
          contention_ = true;
        } else if (attempt == 1) {
          spdlog::warn("apply pipeline {}: target {} unavailable ({}); retrying", options_.name,
                       session.peer(), SV(s.message()));
        }
      });
  if (r.status.ok()) {
    rows_written_.fetch_add(rows, std::memory_order_relaxed);
    if (r.attempts > 1) host_->OnRecovered();
    return absl::OkStatus();
  }
  if (host_->stopping() || r.stopped) return absl::CancelledError("stopping");
  // 1665: a STATEMENT-format binlog the applier may not switch to ROW.
  const char* hint = ServerErrorCode(r.status) != 1665
                         ? ""
                         : "; grant the applier BINLOG ADMIN (binrelay then logs its writes "
                           "as rows) or set binlog_format = MIXED or ROW on the target";
  return Annotate(r.status, absl::StrCat("apply pipeline ", options_.name, ", target ",
                                         session.peer(), ", statement ",
                                         std::string(what.substr(0, 200)),
                                         what.size() > 200 ? "..." : "", hint));
}

namespace {
// Rows longer than this on average go to a MySQL target as text (Replace).
constexpr size_t kMaxBoundRowBytes = 1024;
}  // namespace

absl::Status TargetFlusher::Replace(TargetSession& session, const ApplyTable& t,
                                    const BufferedRow* const* rows, size_t n, size_t max_rows,
                                    size_t max_bytes) {
  size_t applied = 0;  // rows[0, applied) are on the target
  // Text keeps the caller's limits (kExecute lowers them below).
  auto text = [&, text_rows = max_rows, text_bytes = max_bytes] {
    return BuildReplaces(t, rows + applied, n - applied, text_rows, text_bytes,
                         [&](std::string_view sql, size_t k) { return Execute(session, sql, k); });
  };
  const UpsertWrite how = upsert_.load();
  // A table whose columns are all generated has nothing to bind.
  if (how == UpsertWrite::kText || t.bulk_params == 0 || !t.bind_values) return text();
  const bool execute = how == UpsertWrite::kExecute;
  if (execute) {
    // MySQL writes a bound statement's text out with every value escaped
    // for its logs even with no log on (sql/sql_prepare.cc m_with_log: the
    // default caching_sha2_password sets the audit mask), so a long value
    // costs it as much bound as parsed; binding pays for short values.
    // bench/apply_bench.sh on 9.7: 200-byte rows 1.16-1.21x faster bound,
    // 64 KiB rows 0.82-0.98x.
    size_t bytes = 0;
    for (size_t i = 0; i < n; ++i) bytes += rows[i]->image.size();
    if (n > 0 && bytes / n > kMaxBoundRowBytes) return text();
  }
  // kExecute: a batch of `full` rows runs as one statement; a shorter one
  // (the last of a run, or cut by bytes) as pieces (NextExecutePiece).
  size_t full = max_rows;
  if (execute) {
    // The execute command's types and NULL bitmap (about 1.2 bytes per
    // marker) are larger than the bulk command's indicators.
    const size_t slack = kMaxExecuteMarkers + kMaxExecuteMarkers / 8 + 64;
    if (t.max_statement_bytes > 2 * slack) {
      max_bytes = std::min(max_bytes, t.max_statement_bytes - slack);
    }
    full = ExecuteRowsPerStatement(t.bulk_params, max_rows);
    max_rows = full;
  }
  std::map<size_t, std::string> statements;  // kExecute: by rows; stable addresses
  auto statement = [&](size_t k) -> const std::string& {
    auto it = statements.find(k);
    if (it == statements.end()) {
      it = statements.emplace(k, MultiRowStatement(t.bulk_replace, k)).first;
    }
    return it->second;
  };
  // One command in flight on the session: each is sent, the next is built
  // while the target runs it, and its reply is read before the next is sent
  // (so batches still reach the target in order, one at a time).
  protocol::BulkExecuteBuilder bulk, inflight;
  size_t inflight_first = 0, inflight_rows = 0;  // rows of `inflight` sent
  const std::string* inflight_sql = &t.bulk_replace;
  bool sent = false;  // the command went out; its reply is unread
  auto finish = [&]() -> absl::Status {
    if (inflight_rows == 0) return absl::OkStatus();
    uint16_t warnings = 0;
    bool pending = sent;
    absl::Status s = RunWithRetry(session, *inflight_sql, inflight_rows, [&] {
      if (pending) {
        pending = false;
        absl::Status r = session.FinishBulk(&warnings);
        // 1243: the handle was gone (FinishBulk forgot it): prepare again.
        if (ServerErrorCode(r) != 1243) return r;
      }
      // A retry: the whole command.
      return execute ? session.ExecuteRows(*inflight_sql, inflight, inflight_first,
                                           inflight_rows, &warnings)
                     : session.ExecuteBulk(t.bulk_replace, inflight, &warnings);
    });
    const size_t done = inflight_rows;
    inflight_rows = 0;
    sent = false;
    BR_RETURN_IF_ERROR(s);
    applied += done;
    if (warnings > 0) NoteWarnings(session, *inflight_sql, warnings);
    return absl::OkStatus();
  };
  auto send = [&](size_t first, size_t k) {
    inflight_first = first;
    inflight_rows = k;
    // A send that fails is retried whole (or classified) by finish().
    if (execute) {
      inflight_sql = &statement(k);
      sent = session.SendExecute(*inflight_sql, inflight, first, k).ok();
    } else {
      sent = session.SendBulk(t.bulk_replace, inflight).ok();
    }
  };
  absl::Status s = BuildBulkReplaces(t, rows, n, max_rows, max_bytes, &bulk, [&](size_t k) {
    BR_RETURN_IF_ERROR(finish());
    // BuildBulkReplaces starts the next command in `bulk`, reusing the
    // buffer of the one just finished.
    std::swap(bulk, inflight);
    if (!execute || k == full) {
      send(0, k);
      return absl::OkStatus();
    }
    // Each piece but the last is finished before the next is sent (one
    // command in flight).
    for (size_t first = 0, piece; first < k; first += piece) {
      piece = NextExecutePiece(k - first, full);
      BR_RETURN_IF_ERROR(finish());
      send(first, piece);
    }
    return absl::OkStatus();
  });
  // The last command, or the one in flight when building failed: its reply
  // must be read before the session runs anything else.
  absl::Status last = finish();
  if (s.ok()) s = last;
  if (s.ok() || absl::IsCancelled(s) || Classify(s) != ErrorClass::kHard) return s;
  // The target refused a bulk or execute command (one it does not support,
  // too many prepared statements, a server that lost the capability, or a
  // value it will not take that way). Nothing of that command was applied
  // (it is one statement), and REPLACE text is authoritative: the rest of
  // this run uses it, starting with the refused command's rows (those
  // before it are on the target), and a real problem with the rows fails
  // there with their values in the message.
  UpsertWrite expected = how;
  if (upsert_.compare_exchange_strong(expected, UpsertWrite::kText)) {
    spdlog::warn("apply pipeline {}: target {} refused a {} command for {} ({}); using "
                 "REPLACE text from now on",
                 options_.name, session.peer(), execute ? "prepared" : "bulk", t.Name(),
                 SV(s.message()));
    absl::MutexLock l(&mu_);
    upsert_protocol_ = absl::StrCat("text (", execute ? "prepared" : "bulk", " refused: ",
                                    s.message(), ")");
  }
  return text();
}

absl::Status TargetFlusher::RunJobs(std::vector<Job>& jobs) {
  if (jobs.empty()) return absl::OkStatus();
  const size_t n = std::min(jobs.size(), std::max<size_t>(1, cur_concurrency_));
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex err_mu;
  absl::Status first;
  auto work = [&](size_t w) {
    for (size_t i; !failed && (i = next.fetch_add(1)) < jobs.size();) {
      absl::Status s = jobs[i](*sessions_[w]);
      if (!s.ok()) {
        std::lock_guard<std::mutex> l(err_mu);
        if (first.ok()) first = s;
        failed = true;
      }
    }
  };
  {
    JobGroup group(pool_.get());
    for (size_t w = 1; w < n; ++w) group.Run([&work, w] { work(w); });
    work(0);  // this thread is session 0's worker
  }  // waits for the others
  return first;
}

absl::Status TargetFlusher::Flush(Drain& drain) {
  contention_ = false;
  const size_t batch_rows = std::max<size_t>(1, cur_batch_rows_);
  const size_t batch_bytes = options_.batch_bytes;
  // Row pointers per table: upserts (and ordered tables) first, deletes last.
  struct TableRows {
    const ApplyTable* table;
    std::vector<const BufferedRow*> upserts, deletes, ordered;
  };
  std::vector<TableRows> per_table;
  auto add = [&](TableRows& r, bool keyed, const BufferedRow* row) {
    if (!keyed) {
      r.ordered.push_back(row);
    } else {
      (row->is_delete ? r.deletes : r.upserts).push_back(row);
    }
  };
  // Tables a move's copier is copying: changes whose chunk is in flight
  // are held back, and earlier held ones whose chunk is done join in.
  deferred_.BeginDrain();
  std::vector<const BufferedRow*> sifted;
  absl::flat_hash_set<const ApplyTable*> gated;
  for (auto& [table, drained] : drain.tables) {
    TableRows r{table, {}, {}, {}};
    if (table->gate != nullptr) {
      sifted.clear();
      BR_RETURN_IF_ERROR(
          deferred_.Sift(*table, *table->gate, &drained.rows, drain.since, &sifted));
      for (const BufferedRow* row : sifted) add(r, drained.keyed, row);
      gated.insert(table);
    } else {
      for (const BufferedRow& row : drained.rows) add(r, drained.keyed, &row);
    }
    per_table.push_back(std::move(r));
  }
  for (const auto& [table, gate] : deferred_.tables()) {
    if (gated.contains(table)) continue;
    TableRows r{table, {}, {}, {}};
    sifted.clear();
    BR_RETURN_IF_ERROR(deferred_.Sift(*table, *gate, nullptr, drain.since, &sifted));
    for (const BufferedRow* row : sifted) add(r, table->keyed, row);
    gated.insert(table);
    per_table.push_back(std::move(r));
  }
  // Even and odd upsert batches of a table run in separate waves (see
  // PartitionUpserts), then every delete.
  std::vector<Job> upserts;
  std::vector<Job> odd_upserts;
  std::vector<Job> deletes;
  for (TableRows& r : per_table) {
    const ApplyTable* t = r.table;
    if (t->target.unique_keys.empty()) {
      // One contiguous run of the drain's rows per connection (first-change
      // order: key order for ascending inserts), each sent as batches in
      // order, the next built while the target runs the last. Batches
      // handed out in turn make every connection insert beside the others
      // at the same end of the primary key, contending for the same pages:
      // bench/apply_bench.sh insert-heavy (1M rows, 2 connections) took
      // 5.3-5.9 CPU seconds (binrelay and target) that way, 3.6-5.0 with runs.
      // As many runs as the rows fill batches, by count or by bytes: a
      // drain of 1,000 rows of 64 KiB is one batch by count but 64 by
      // bytes, and on one connection it left the target's other cores
      // idle (bench/apply_bench.sh wide).
      const size_t n = r.upserts.size();
      size_t bytes = 0;
      for (const BufferedRow* row : r.upserts) bytes += row->image.size();
      auto ceil_div = [](size_t a, size_t b) { return a == 0 ? 0 : (a - 1) / std::max<size_t>(1, b) + 1; };
      const size_t batches = std::max(ceil_div(n, batch_rows), ceil_div(bytes, batch_bytes));
      const size_t runs = std::min({batches, n, std::max<size_t>(1, cur_concurrency_)});
      for (size_t k = 0, at = 0; k < runs; ++k) {
        const size_t end = n * (k + 1) / runs;
        const BufferedRow* const* rows = r.upserts.data() + at;
        const size_t count = end - at;
        upserts.push_back([this, t, rows, count, batch_rows, batch_bytes](TargetSession& s) {
          return Replace(s, *t, rows, count, batch_rows, batch_bytes);
        });
        at = end;
      }
    }
    std::vector<std::pair<size_t, size_t>> batches;
    if (!t->target.unique_keys.empty()) {
      BR_ASSIGN_OR_RETURN(batches, PartitionUpserts(*t, &r.upserts, batch_rows));
    }
    for (size_t b = 0; b < batches.size(); ++b) {
      const size_t n = batches[b].second - batches[b].first;
      const BufferedRow* const* rows = r.upserts.data() + batches[b].first;
      const bool odd = b % 2 == 1 && !t->target.unique_keys.empty();
      (odd ? odd_upserts : upserts)
          .push_back([this, t, rows, n, batch_rows, batch_bytes](TargetSession& s) {
            return Replace(s, *t, rows, n, batch_rows, batch_bytes);
          });
    }
    for (size_t at = 0; at < r.deletes.size(); at += batch_rows) {
      const size_t n = std::min(batch_rows, r.deletes.size() - at);
      const BufferedRow* const* rows = r.deletes.data() + at;
      deletes.push_back([this, t, rows, n, batch_rows, batch_bytes](TargetSession& s) {
        return BuildDeletes(*t, rows, n, batch_rows, batch_bytes,
                            [&](std::string_view sql, size_t k) { return Execute(s, sql, k); });
      });
    }
    if (!r.ordered.empty()) {
      // Binlog order on one connection; runs of one kind share a statement.
      const std::vector<const BufferedRow*>* rows = &r.ordered;
      upserts.push_back([this, t, rows, batch_rows, batch_bytes](TargetSession& s) {
        size_t i = 0;
        while (i < rows->size()) {
          size_t j = i;
          const bool del = (*rows)[i]->is_delete;
          while (j < rows->size() && (*rows)[j]->is_delete == del) ++j;
          auto emit = [&](std::string_view sql, size_t k) { return Execute(s, sql, k); };
          BR_RETURN_IF_ERROR(del ? BuildDeletes(*t, rows->data() + i, j - i, batch_rows,
                                                batch_bytes, emit)
                                 : Replace(s, *t, rows->data() + i, j - i, batch_rows,
                                           batch_bytes));
          i = j;
        }
        return absl::OkStatus();
      });
    }
  }
  BR_RETURN_IF_ERROR(RunJobs(upserts));
  BR_RETURN_IF_ERROR(RunJobs(odd_upserts));
  BR_RETURN_IF_ERROR(RunJobs(deletes));
  drained_to_ = drain.checkpoint;
  // Not past a change still held back: it is not on the target.
  if (auto floor = deferred_.floor(); floor && replication::PositionBefore(*floor, drain.checkpoint)) {
    drain.checkpoint = *floor;
  }
  for (const ApplyTable* t : gated) t->gate->SetDeferred(deferred_.rows(t));
  if (!(drain.checkpoint == written_) || !drain.tables.empty()) {
    BR_RETURN_IF_ERROR(Execute(*sessions_[0],
                               WriteCheckpointSql(options_.checkpoint_schema, options_.name,
                                                  options_.tables, drain.checkpoint),
                               0));
    BR_RETURN_IF_ERROR(host_->OnCheckpointWritten(drain.checkpoint));
    written_ = drain.checkpoint;
  }
  // Additive increase after clean drains, multiplicative decrease on
  // contention.
  if (contention_) {
    cur_concurrency_ = std::max<size_t>(1, cur_concurrency_ / 2);
    cur_batch_rows_ = std::max<size_t>(1, cur_batch_rows_ / 2);
    clean_drains_ = 0;
  } else if (++clean_drains_ >= 3) {
    cur_concurrency_ = std::min(options_.concurrency, cur_concurrency_ + 1);
    cur_batch_rows_ = std::min(options_.batch_rows,
                               cur_batch_rows_ + std::max<size_t>(1, options_.batch_rows / 10));
    clean_drains_ = 0;
  }
  return absl::OkStatus();
}

}  // namespace binrelay::apply
