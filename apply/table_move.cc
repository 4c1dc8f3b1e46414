// TableMove: its life (start, stop, status), the guard of named locks on
// the target, its saved progress, and Run, which takes it through its phases
// (each in its own file: table_move_plan.cc, _copy, _checksum, _cutover).
#include <algorithm>
#include <deque>
#include <iterator>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "apply/move_session.h"
#include "apply/moved_table.h"
#include "apply/range_checksum.h"
#include "apply/range_copier.h"
#include "apply/secondary_indexes.h"
#include "apply/source_snapshot.h"
#include "apply/sql_literal.h"
#include "apply/subscription.h"
#include "apply/table_key.h"
#include "apply/table_move.h"
#include "apply/table_shape.h"
#include "apply/target_session.h"
#include "protocol/status_macros.h"
#include "replication/store_era.h"
#include "replication/binlog_status.h"
#include "replication/connection_sql_source.h"
#include "spdlog/spdlog.h"

namespace binrelay::apply {

const char* CutoverName(MoveOptions::Cutover c) {
  switch (c) {
    case MoveOptions::Cutover::kAuto: return "auto";
    case MoveOptions::Cutover::kManual: return "manual";
    case MoveOptions::Cutover::kNone: return "none";
  }
  return "?";
}

TableMove::TableMove(MoveOptions options, replication::StoreReadSide* store, SourceLogin source)
    : options_(std::move(options)), store_(store), source_login_(std::move(source)) {
  options_.apply.target = InMoveSession(std::move(options_.apply.target));
  status_.name = options_.apply.name;
  status_.phase = MovePhase::kStarting;
  status_.tables = options_.apply.tables;
  status_.cutover = CutoverName(options_.cutover);
}

bool TableMove::HoldIfAsked(std::string_view point, bool only_if_named) {
  if (options_.test_points == nullptr) return !stopping_;
  return options_.test_points->Hold(name(), point, !only_if_named,
                                    [this](absl::Duration d) { return Sleep(d); }) &&
         !stopping_;
}

bool TableMove::StallIfAsked(std::string_view point) {
  if (options_.test_points == nullptr) return !stopping_;
  return options_.test_points->Stall(name(), point,
                                     [this](absl::Duration d) { return Sleep(d); }) &&
         !stopping_;
}

TableMove::~TableMove() { Stop(); }

void TableMove::Start() {
  // Until its pipeline pins where it resumes, the move holds every stored
  // file: retention's first pass must not purge what a resumed move needs.
  early_pin_ = store_->Pin({"", 4}, absl::StrCat("move ", name(), " (starting)"));
  thread_ = std::thread([this] {
    absl::Status s = Run();
    // A move that ended (done, failed or stopped) holds nothing: its named
    // locks go with the connection, its claim on the store with the pin.
    guard_conn_.reset();
    early_pin_.Release();
    if (!s.ok()) {
      // Nothing of a failed move may keep running: no change stays held
      // back for a chunk that will never complete, no pipeline stays
      // paused or keeps its pin on the store. A restart resumes it.
      if (planned_.load(std::memory_order_acquire)) {
        for (auto& t : tables_) t->gate->Disable();
      }
      ApplyPipeline* pipeline;
      {
        absl::MutexLock l(&mu_);
        pipeline = pipeline_.get();
      }
      if (pipeline != nullptr) pipeline->Stop();
    }
    if (!s.ok() && !stopping_) {
      spdlog::error("move {}: {}", name(), SV(s.message()));
      SetPhase(MovePhase::kError);
    }
    absl::MutexLock l(&mu_);
    if (!s.ok()) status_.error = std::string(s.message());
    outcome_ = s;
    finished_ = true;
    cv_.SignalAll();
  });
}

void TableMove::Stop() {
  ApplyPipeline* pipeline;
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
    pipeline = pipeline_.get();
  }
  cv_.SignalAll();
  // First: the move's thread may be waiting for the pipeline to pause.
  if (pipeline != nullptr) pipeline->Stop();
  if (thread_.joinable()) thread_.join();
  if (pipeline_) pipeline_->Stop();
}

absl::Status TableMove::Wait() {
  absl::MutexLock l(&mu_);
  while (!finished_) cv_.Wait(&mu_);
  return outcome_;
}

bool TableMove::Finished() const {
  absl::MutexLock l(&mu_);
  return finished_;
}

void TableMove::RequestCutover() {
  cutover_requested_ = true;
  cv_.SignalAll();
}

MoveStatus TableMove::Status() const {
  MoveStatus s;
  ApplyPipeline* pipeline;
  {
    absl::MutexLock l(&mu_);
    s = status_;
    pipeline = pipeline_.get();
  }
  s.rows_copied = rows_copied_.load();
  s.rows_left_to_checksum = rows_left_to_checksum_.load();
  s.chunks_copied = chunks_copied_.load();
  absl::Time copy_started;
  {
    absl::MutexLock l(&mu_);
    copy_started = copy_started_;
  }
  if (copy_started != absl::InfinitePast()) {
    const double secs = absl::ToDoubleSeconds(absl::Now() - copy_started);
    if (secs > 0) s.copy_rows_per_second = static_cast<double>(s.rows_copied) / secs;
  }
  if (planned_.load(std::memory_order_acquire)) {  // tables_ is fixed from then on
    for (const auto& t : tables_) s.changes_dropped += t->gate->snapshot().dropped;
  }
  if (pipeline != nullptr) {
    s.has_apply = true;
    s.apply = pipeline->Status();
  }
  return s;
}

TableCopyGate* TableMove::ForTable(std::string_view db, std::string_view table) {
  auto it = by_name_.find(TableKey(db, table));
  return it == by_name_.end() ? nullptr : it->second->gate.get();
}

void TableMove::SetPhase(MovePhase phase) {
  spdlog::info("move {}: {}", name(), MovePhaseName(phase));
  absl::MutexLock l(&mu_);
  status_.phase = phase;
}

bool TableMove::Sleep(absl::Duration d) {
  absl::MutexLock l(&mu_);
  const absl::Time deadline = absl::Now() + d;
  while (!stopping_) {
    if (cv_.WaitWithDeadline(&mu_, deadline)) break;
  }
  return !stopping_;
}

absl::Status TableMove::PipelineError() const {
  PipelineStatus p = pipeline_->Status();
  if (p.state == PipelineState::kError) {
    return absl::FailedPreconditionError(
        absl::StrCat("move ", name(), ": its apply pipeline stopped: ", p.last_error));
  }
  return absl::OkStatus();
}

absl::Status TableMove::SaveProgress(Table& t) {
  BR_RETURN_IF_ERROR(CheckGuard());
  t.progress.phase = Status().phase;
  t.progress.start = start_.ToString();
  return Annotate(SaveMoveCheckpoint(*progress_sql_, options_.apply.checkpoint_schema, name(),
                                     t.plan.name.db, t.plan.name.table, t.progress),
                  absl::StrCat("move ", name(), ": saving its progress on ",
                               progress_sql_->Peer()));
}

absl::Status TableMove::SaveAll() {
  // One multi-row statement, atomic under autocommit: a restart never
  // finds rows for only some tables (an explicit transaction would not
  // survive the connection's silent reconnect).
  BR_RETURN_IF_ERROR(CheckGuard());
  const MovePhase phase = Status().phase;
  const std::string where = absl::StrCat("move ", name(), ": saving its progress on ",
                                         progress_sql_->Peer());
  std::string sql;
  for (auto& t : tables_) {
    t->progress.phase = phase;
    t->progress.start = start_.ToString();
    const std::string one = MoveCheckpointStatement(options_.apply.checkpoint_schema, name(),
                                                    t->plan.name.db, t->plan.name.table,
                                                    t->progress);
    const size_t values = one.find(") VALUES (");
    if (values == std::string::npos) return absl::InternalError("bad checkpoint statement");
    if (sql.empty()) {
      sql = one;
    } else {
      absl::StrAppend(&sql, ",", one.substr(values + 9));  // "(...)" of this row
    }
  }
  if (sql.empty()) return absl::OkStatus();
  return Annotate(progress_sql_->Query(sql).status(), where);
}

namespace {

// Named-lock names: a hash of the quoted name, so no two tables or moves
// share one, cut so that any name fits GET_LOCK's 64 characters. SHA2:
// MySQL 9 removed SHA1() and MD5() (a call parses as a stored function's,
// error 1046 without a default database).
std::string LockName(std::string_view kind, const std::string& what) {
  std::string quoted;
  AppendQuotedString(what, &quoted);
  return absl::StrCat("CONCAT('binrelay-", AV(kind), ":', LEFT(SHA2(", quoted, ", 256), 40))");
}

}  // namespace

absl::Status TableMove::TakeLock(const std::string& lock, const std::string& what) {
  replication::ConnectionSqlSource guard(guard_conn_.get());
  BR_ASSIGN_OR_RETURN(auto got, guard.Query(absl::StrCat("SELECT GET_LOCK(", lock, ", 0), "
                                                         "IS_USED_LOCK(", lock, ")")));
  if (got.empty() || !got[0][0] || *got[0][0] != "1") {
    const std::string holder = !got.empty() && got[0].size() > 1 && got[0][1] ? *got[0][1] : "?";
    return absl::FailedPreconditionError(absl::StrCat(
        "move ", name(), ": another move of ", what, " on ", guard.Peer(),
        " is running (its lock is held by connection ", holder,
        " there); stop it first, or wait for it to end"));
  }
  locks_.push_back(lock);
  return absl::OkStatus();
}

absl::Status TableMove::GuardName() {
  // Named locks on the target, held by one connection for the move's life:
  // a second move of the same name, or of the same tables to the same
  // target, fails before it writes anything (the server frees them if this
  // process dies). The connection never idles out: wait_timeout is raised,
  // and CheckGuard asks at every progress write that it still holds them.
  BR_ASSIGN_OR_RETURN(guard_conn_, protocol::ClientConnection::Connect(options_.apply.target));
  replication::ConnectionSqlSource guard(guard_conn_.get());
  BR_RETURN_IF_ERROR(guard.Query("SET SESSION wait_timeout = 31536000").status());
  return TakeLock(LockName("move-name", name()), absl::StrCat("the name ", name()));
}

absl::Status TableMove::Guard(const std::vector<MoveTableName>& names) {
  for (const MoveTableName& n : names) {
    BR_RETURN_IF_ERROR(TakeLock(LockName("move", Qualified(n.target_db, n.table)),
                                absl::StrCat(n.db, ".", n.table, " to ", n.target_db, ".",
                                             n.table)));
  }
  return absl::OkStatus();
}

absl::Status TableMove::CheckGuard() {
  if (guard_conn_ == nullptr || locks_.empty()) return absl::OkStatus();
  replication::ConnectionSqlSource guard(guard_conn_.get());
  auto held = guard.Query(absl::StrCat("SELECT IS_USED_LOCK(", locks_.front(),
                                       ") = CONNECTION_ID()"));
  if (!held.ok() || held->empty() || !(*held)[0][0] || *(*held)[0][0] != "1") {
    return absl::FailedPreconditionError(absl::StrCat(
        "move ", name(), ": lost its lock on the target (connection closed?); it stops so that "
        "no second move can write the same tables unseen. Run it again: it resumes"));
  }
  return absl::OkStatus();
}

absl::Status TableMove::KillEarlierCopies(replication::SqlSource& target,
                                          const std::vector<MoveTableName>& names) {
  BR_ASSIGN_OR_RETURN(
      auto running,
      target.Query("SELECT ID, INFO FROM information_schema.PROCESSLIST WHERE ID <> "
                   "CONNECTION_ID() AND USER = SUBSTRING_INDEX(USER(), '@', 1) AND (INFO LIKE "
                   "'INSERT IGNORE INTO %' OR INFO LIKE 'ALTER TABLE %')"));
  std::vector<std::string> killed;
  for (const auto& row : running) {
    if (row.size() < 2 || !row[0] || !row[1]) continue;
    for (const MoveTableName& n : names) {
      // A chunk's copy, or the index build (secondary_indexes.h), which
      // would otherwise hold the table until it ends and then make this
      // run's ALTER fail on the same index names.
      const std::string t = Qualified(n.target_db, n.table);
      const bool copy = absl::StartsWith(*row[1], absl::StrCat("INSERT IGNORE INTO ", t));
      const bool build = absl::StartsWith(*row[1], absl::StrCat("ALTER TABLE ", t, " ADD "));
      if (!copy && !build) continue;
      spdlog::warn("move {}: killing connection {} on {}, {} {}.{} by an earlier run", name(),
                   *row[0], target.Peer(), copy ? "a copy of" : "an index build on", n.db,
                   n.table);
      BR_RETURN_IF_ERROR(target.Query(absl::StrCat("KILL ", *row[0])).status());
      killed.push_back(*row[0]);
      break;
    }
  }
  // KILL returns at once; a statement already committing may still land.
  for (const std::string& id : killed) {
    const absl::Time give_up = absl::Now() + absl::Seconds(30);
    while (true) {
      BR_ASSIGN_OR_RETURN(auto still, target.Query(absl::StrCat(
          "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ", id)));
      if (still.empty() || !still[0][0] || *still[0][0] == "0") break;
      if (absl::Now() > give_up) {
        return absl::UnavailableError(absl::StrCat(
            "move ", name(), ": connection ", id, " on ", target.Peer(), " (a copy or index "
            "build by an earlier run) is still there 30 s after KILL; run the move again once "
            "it is gone"));
      }
      if (!Sleep(absl::Milliseconds(50))) return absl::CancelledError("stopping");
    }
  }
  return absl::OkStatus();
}

absl::Status TableMove::Run() {
  BR_RETURN_IF_ERROR(Plan());
  if (resumed_done_) {
    SetPhase(MovePhase::kDone);
    spdlog::info("move {}: already cut over (its checkpoint says done)", name());
    return absl::OkStatus();
  }
  if (stopping_) return absl::CancelledError("stopping");

  PipelineOptions p = options_.apply;
  if (!resumed_) {
    // The pipeline starts at the source's binlog position now, before any
    // chunk is read: a change committed before it is in every chunk's
    // snapshot, and a change after it is read by the pipeline (once the
    // store has it; the store may still be behind the source, and the
    // tables' CREATE statements before this position must not be read as
    // DDL on them). Saved before the copy starts, so a resumed move starts
    // there too if its pipeline never wrote a checkpoint.
    replication::ConnectionSqlSource source(SourceFollowing());
    BR_ASSIGN_OR_RETURN(replication::BinlogPosition at, replication::ReadBinlogStatus(source));
    start_ = replication::StoredPositionOf(store_->era(), at);
  }
  {
    // After the start position is fixed: every XA transaction prepared
    // before it and still open is listed (see WaitForXaPreparedBeforeStart).
    replication::ConnectionSqlSource source(SourceFollowing());
    auto xids = PreparedXids(source);
    if (xids.ok()) {
      xa_before_start_ = std::move(*xids);
    } else {
      spdlog::warn("move {}: XA RECOVER on the source failed ({}): an XA transaction prepared "
                   "before the move began and committed after its checksum would not reach the "
                   "target; allow the source account XA RECOVER (MySQL: GRANT "
                   "XA_RECOVER_ADMIN), or make sure none is prepared",
                   name(), SV(xids.status().message()));
    }
  }
  p.start.kind = replication::StartSpec::Kind::kPosition;
  p.start.position = start_;
  {
    absl::MutexLock l(&mu_);
    if (stopping_) return absl::CancelledError("stopping");
    pipeline_ = std::make_unique<ApplyPipeline>(
        p, store_, [this] { return SourceConnect(); }, this);
  }
  if (!resumed_) {
    // Before the first save: once it exists a restart resumes, and must not
    // find an earlier move's local checkpoint of the same name.
    BR_RETURN_IF_ERROR(pipeline_->ForgetLocalCheckpoint());
    SetPhase(MovePhase::kCopy);
    BR_RETURN_IF_ERROR(SaveAll());
  }
  BR_RETURN_IF_ERROR(pipeline_->Restore());
  early_pin_.Release();  // the pipeline's own pin holds what it needs now
  pipeline_->Start();
  const absl::Time prepare_deadline = absl::Now() + absl::Seconds(60);
  while (true) {
    PipelineStatus ps = pipeline_->Status();
    if (ps.state == PipelineState::kRunning || ps.state == PipelineState::kCaughtUp) break;
    BR_RETURN_IF_ERROR(PipelineError());
    if (absl::Now() > prepare_deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "move ", name(), ": its apply pipeline did not start in 60 s (state ", ps.StateText(),
          ps.last_error.empty() ? "" : ": ", ps.last_error, ")"));
    }
    if (!Sleep(absl::Milliseconds(50))) return absl::CancelledError("stopping");
  }

  SetPhase(MovePhase::kCopy);
  {
    absl::MutexLock l(&mu_);
    copy_started_ = absl::Now();
  }
  for (auto& t : tables_) {
    if (t->progress.copy_done) continue;
    BR_RETURN_IF_ERROR(CopyTable(*t));
    t->progress.copy_done = true;
    BR_RETURN_IF_ERROR(SaveProgress(*t));
    spdlog::info("move {}: {} copied", name(), t->Name());
  }
  // Every change is applied from now on.
  for (auto& t : tables_) t->gate->Disable();
  // An index build started by the checksum ends before Run does, whatever
  // happens: it uses this move's tables and connections.
  absl::Cleanup join_index_builds = [this] {
    for (auto& t : tables_) {
      if (t->index_build.valid()) t->index_build.wait();
    }
  };

  SetPhase(MovePhase::kCatchUp);
  if (!StallIfAsked("catch up")) return absl::CancelledError("stopping");
  BR_RETURN_IF_ERROR(WaitCaughtUp(absl::InfiniteDuration()));
  BR_RETURN_IF_ERROR(WaitForXaPreparedBeforeStart());
  if (!HoldIfAsked("checksum", /*only_if_named=*/true)) return absl::CancelledError("stopping");
  SetPhase(MovePhase::kChecksum);
  BR_RETURN_IF_ERROR(SaveAll());
  // The checksum reads rows by primary key only, so it may come before the
  // plain secondary indexes (no row changes when they are built): each
  // table's build starts once its last target sums are done and overlaps
  // the source's (Checksum).
  BR_RETURN_IF_ERROR(Checksum());
  // Also after a restart with indexes_after_copy changed: a table created
  // without its indexes gets them.
  if (!HoldIfAsked("indexes", /*only_if_named=*/true)) return absl::CancelledError("stopping");
  SetPhase(MovePhase::kIndexes);
  BR_RETURN_IF_ERROR(SaveAll());
  BR_RETURN_IF_ERROR(FinishIndexes());

  switch (options_.cutover) {
    case MoveOptions::Cutover::kNone:
      SetPhase(MovePhase::kApplying);
      BR_RETURN_IF_ERROR(SaveAll());
      while (Sleep(absl::Milliseconds(200))) BR_RETURN_IF_ERROR(PipelineError());
      return absl::OkStatus();
    case MoveOptions::Cutover::kManual:
      SetPhase(MovePhase::kReadyForCutover);
      BR_RETURN_IF_ERROR(SaveAll());
      while (!cutover_requested_) {
        if (!Sleep(absl::Milliseconds(100))) return absl::OkStatus();
        BR_RETURN_IF_ERROR(PipelineError());
      }
      break;
    case MoveOptions::Cutover::kAuto:
      break;
  }
  SetPhase(MovePhase::kCutover);
  BR_RETURN_IF_ERROR(SaveAll());
  BR_RETURN_IF_ERROR(Cutover());
  SetPhase(MovePhase::kDone);
  BR_RETURN_IF_ERROR(SaveAll());
  return absl::OkStatus();
}

}  // namespace binrelay::apply
