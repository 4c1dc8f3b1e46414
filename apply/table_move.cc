#include "apply/table_move.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <iterator>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "apply/range_checksum.h"
#include "apply/move_session.h"
#include "apply/range_copier.h"
#include "apply/secondary_indexes.h"
#include "apply/sql_literal.h"
#include "apply/subscription.h"
#include "apply/table_shape.h"
#include "apply/target_session.h"
#include "protocol/status_macros.h"
#include "replication/binlog_status.h"
#include "replication/connection_sql_source.h"
#include "spdlog/spdlog.h"

namespace binrelay::apply {
namespace {

std::string TableKey(std::string_view db, std::string_view table) {
  return absl::StrCat(AV(db), absl::string_view("\0", 1), AV(table));
}

std::string Qualified(std::string_view db, std::string_view table) {
  std::string out;
  AppendIdentifier(db, &out);
  out.push_back('.');
  AppendIdentifier(table, &out);
  return out;
}

// A connection inside a transaction that sees one consistent snapshot,
// and the source's binlog position for that snapshot: every change to the
// snapshot's tables before it is in the snapshot, none after it.
struct Snapshot {
  std::unique_ptr<protocol::ClientConnection> conn;
  std::unique_ptr<replication::ConnectionSqlSource> sql;
  replication::BinlogPosition position;
};

absl::StatusOr<Snapshot> OpenSnapshot(const protocol::ConnectOptions& server) {
  Snapshot s;
  BR_ASSIGN_OR_RETURN(s.conn, protocol::ClientConnection::Connect(server));
  s.sql = std::make_unique<replication::ConnectionSqlSource>(s.conn.get());
  BR_RETURN_IF_ERROR(s.sql->Query("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ").status());
  BR_RETURN_IF_ERROR(s.sql->Query("START TRANSACTION WITH CONSISTENT SNAPSHOT").status());
  return s;
}

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
  absl::Time logged = absl::InfinitePast();
  for (int attempt = 1;; ++attempt) {
    const absl::Time asked = absl::Now();
    auto locked = lock.Query(absl::StrCat("LOCK TABLES ", table, " READ"));
    if (!locked.ok()) {
      if (ServerErrorCode(locked.status()) != 1205) {
        return Annotate(locked.status(), absl::StrCat("locking ", table, " on ", lock.Peer(),
                                                      " for the checksum's snapshot"));
      }
      if (absl::Now() - logged > absl::Minutes(1)) {
        logged = absl::Now();
        spdlog::warn("move {}: LOCK TABLES {} READ on {} waited 1 s and gave up (attempt {}): a "
                     "long transaction writes it or holds its metadata lock; trying again",
                     move, table, lock.Peer(), attempt);
      }
      if (!sleep(absl::Seconds(1))) return absl::CancelledError("stopping");
      continue;
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

// Resumes a paused pipeline when it goes out of scope.
class ResumeOnExit {
 public:
  explicit ResumeOnExit(ApplyPipeline* p) : p_(p) {}
  ~ResumeOnExit() { p_->Resume(); }
  ResumeOnExit(const ResumeOnExit&) = delete;
  ResumeOnExit& operator=(const ResumeOnExit&) = delete;

 private:
  ApplyPipeline* p_;
};

// Advances the paused `pipeline` to a new consistent snapshot of the
// source and returns the snapshot, open. `sleep` returns false once the
// move is stopping.
absl::StatusOr<Snapshot> SourceSnapshotAtPipeline(
    ApplyPipeline& pipeline, const protocol::ConnectOptions& source, bool is_mariadb,
    const std::string& table, std::string_view move,
    const std::function<bool(absl::Duration)>& sleep) {
  // A new snapshot can stand before what the paused pipeline has applied: a
  // transaction already in the binlog (so in binrelay's store) but not yet
  // committed in the engine, as under semi-synchronous replication with
  // rpl_semi_sync_master_wait_point = AFTER_SYNC until a replica
  // acknowledges it (or the wait times out). Its commit is moments away:
  // take a later snapshot.
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  for (int attempt = 1;; ++attempt) {
    BR_ASSIGN_OR_RETURN(Snapshot s, SourceSnapshot(source, is_mariadb, table, move, sleep));
    absl::Status advanced = pipeline.AdvanceTo(s.position, absl::Seconds(120));
    if (!absl::IsOutOfRange(advanced)) {
      if (!advanced.ok()) return advanced;
      if (attempt > 1) {
        spdlog::info("move {}: the source's snapshot reached the pipeline's position after {} "
                     "attempt(s)", move, attempt);
      }
      return s;
    }
    if (attempt == 1) {
      spdlog::info("move {}: the source's snapshot is at {}, before what the pipeline applied "
                   "({}); a transaction in its binlog is not committed yet (semi-sync waiting "
                   "for an acknowledgement?): taking a later snapshot",
                   move, s.position.ToString(), SV(advanced.message()));
    }
    (void)s.sql->Query("COMMIT");
    if (absl::Now() > give_up) {
      return absl::UnavailableError(absl::StrCat(
          "the source's snapshots stayed before the transactions the pipeline applied for "
          "30 s (", advanced.message(), "): a transaction in the source's binlog has not "
          "become visible; is a semi-sync wait on the source stuck?"));
    }
    if (!sleep(absl::Milliseconds(100))) return absl::CancelledError("stopping");
  }
}

}  // namespace

const char* CutoverName(MoveOptions::Cutover c) {
  switch (c) {
    case MoveOptions::Cutover::kAuto: return "auto";
    case MoveOptions::Cutover::kManual: return "manual";
    case MoveOptions::Cutover::kNone: return "none";
  }
  return "?";
}

struct TableMove::Table {
  MoveTablePlan plan;
  TableShape target;
  std::unique_ptr<TableCopyGate> gate;
  std::optional<KeyRangeChunker> chunker;
  std::optional<RangeCopier> copier;
  MoveTableProgress progress;  // as last saved on the target
  uint64_t chunk_rows = 1000;  // the copy's last size, the checksum's first
  // Bytes per row as the copy reads them (a sample, then the last chunk's
  // average; 0: unknown): caps chunks at copy_chunk_bytes.
  std::atomic<uint64_t> row_bytes{0};
  // `rows`, or fewer (at least one) if they would exceed `max_bytes`.
  uint64_t RowsWithin(uint64_t rows, size_t max_bytes) const {
    const uint64_t b = row_bytes.load();
    if (b == 0) return rows;
    return std::clamp<uint64_t>(max_bytes / b, 1, std::max<uint64_t>(1, rows));
  }
  std::string Name() const { return absl::StrCat(plan.name.db, ".", plan.name.table); }
  std::string TargetSql() const { return Qualified(plan.name.target_db, plan.name.table); }
  std::string SourceSql() const { return Qualified(plan.name.db, plan.name.table); }
};

TableMove::TableMove(MoveOptions options, replication::StoreReadSide* store,
                     protocol::ConnectOptions source)
    : options_(std::move(options)), store_(store), source_(InMoveSession(std::move(source))) {
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
        std::lock_guard<std::mutex> l(mu_);
        pipeline = pipeline_.get();
      }
      if (pipeline != nullptr) pipeline->Stop();
    }
    if (!s.ok() && !stopping_) {
      spdlog::error("move {}: {}", name(), SV(s.message()));
      SetPhase(MovePhase::kError);
    }
    std::lock_guard<std::mutex> l(mu_);
    if (!s.ok()) status_.error = std::string(s.message());
    outcome_ = s;
    finished_ = true;
    cv_.notify_all();
  });
}

void TableMove::Stop() {
  ApplyPipeline* pipeline;
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
    pipeline = pipeline_.get();
  }
  cv_.notify_all();
  // First: the move's thread may be waiting for the pipeline to pause.
  if (pipeline != nullptr) pipeline->Stop();
  if (thread_.joinable()) thread_.join();
  if (pipeline_) pipeline_->Stop();
}

absl::Status TableMove::Wait() {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [&] { return finished_; });
  return outcome_;
}

bool TableMove::Finished() const {
  std::lock_guard<std::mutex> l(mu_);
  return finished_;
}

void TableMove::RequestCutover() {
  cutover_requested_ = true;
  cv_.notify_all();
}

MoveStatus TableMove::Status() const {
  MoveStatus s;
  ApplyPipeline* pipeline;
  {
    std::lock_guard<std::mutex> l(mu_);
    s = status_;
    pipeline = pipeline_.get();
  }
  s.rows_copied = rows_copied_.load();
  s.rows_left_to_checksum = rows_left_to_checksum_.load();
  s.chunks_copied = chunks_copied_.load();
  absl::Time copy_started;
  {
    std::lock_guard<std::mutex> l(mu_);
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
  std::lock_guard<std::mutex> l(mu_);
  status_.phase = phase;
}

bool TableMove::Sleep(absl::Duration d) {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait_for(l, absl::ToChronoMilliseconds(d), [&] { return stopping_.load(); });
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

absl::Status TableMove::Plan() {
  SetPhase(MovePhase::kPreflight);
  replication::ConnectionSqlSource source(source_);
  replication::ConnectionSqlSource target(options_.apply.target);
  progress_sql_ = std::make_unique<replication::ConnectionSqlSource>(options_.apply.target);
  BR_ASSIGN_OR_RETURN(Subscription pattern, Subscription::Parse(options_.apply.tables));
  // The name's lock first: the checkpoint read next is then this run's.
  BR_RETURN_IF_ERROR(GuardName());
  BR_ASSIGN_OR_RETURN(std::optional<std::string> version,
                      replication::QueryValue(source, "SELECT VERSION()"));
  source_is_mariadb_ = version && absl::StrContains(*version, "MariaDB");
  auto listed = ListTables(source);
  if (!listed.ok()) return Annotate(listed.status(), "listing the source's tables");
  auto exists = [&](const std::string& db, const std::string& table) {
    for (const auto& [d, t] : *listed) {
      if (d == db && t == table) return true;
    }
    return false;
  };
  const std::string& tschema = options_.apply.target_schema;
  std::vector<MoveTableName> names;
  for (const auto& [db, table] : *listed) {
    if (!pattern.Matches(db, table) || db == options_.apply.checkpoint_schema) continue;
    if (!tschema.empty() && db == tschema) continue;
    names.push_back(MoveTableName{db, table, tschema.empty() ? db : tschema});
  }
  BR_ASSIGN_OR_RETURN(auto saved, LoadMoveCheckpoint(target, options_.apply.checkpoint_schema,
                                                     name()));
  if (!saved.empty()) {
    // A resumed move's tables are its checkpoint's: after its cutover they
    // may be renamed away on the source.
    std::vector<MoveTableName> from_checkpoint;
    bool all_done = true;
    std::vector<std::string> renamed, live;
    for (const auto& [key, p] : saved) {
      from_checkpoint.push_back(MoveTableName{p.db, p.table, tschema.empty() ? p.db : tschema});
      all_done = all_done && p.phase == MovePhase::kDone;
      const bool gone = !exists(p.db, p.table) && exists(p.db, p.table + "_old");
      (gone ? renamed : live).push_back(key);
    }
    bool cutting_over = true;
    for (const auto& [key, p] : saved) cutting_over = cutting_over && (p.phase == MovePhase::kCutover || p.phase == MovePhase::kDone);
    if (all_done || (cutting_over && options_.rename_source && !renamed.empty() && live.empty())) {
      // Cut over (a crash may have come before "done" was written).
      for (const auto& [key, p] : saved) {
        MoveTableProgress q = p;
        q.phase = MovePhase::kDone;
        BR_RETURN_IF_ERROR(SaveMoveCheckpoint(target, options_.apply.checkpoint_schema, name(),
                                              p.db, p.table, q));
      }
      resumed_done_ = true;
      return absl::OkStatus();
    }
    if (!renamed.empty() && !cutting_over) {
      return absl::FailedPreconditionError(absl::StrCat(
          "move ", name(), ": ", absl::StrJoin(renamed, ", "), " became <table>_old on ",
          source.Peer(), " while the move was in phase ", MovePhaseName(saved.begin()->second.phase),
          " (another move or an operator renamed it); its copy on the target is not complete. "
          "Rename it back to resume, or delete the move's rows from ",
          options_.apply.checkpoint_schema, ".move_checkpoint to give it up"));
    }
    if (!renamed.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "move ", name(), ": its cutover was interrupted after renaming ",
          absl::StrJoin(renamed, ", "), " to <table>_old on ", source.Peer(), " but not ",
          absl::StrJoin(live, ", "), ". The target has every change to the renamed tables. "
          "Finish by hand: stop writes to the others, compare them on both servers (CHECKSUM "
          "TABLE) once binrelay.apply_checkpoint has passed SHOW MASTER STATUS, rename them to "
          "<table>_old, then set phase = 'done' in ", options_.apply.checkpoint_schema,
          ".move_checkpoint for this move"));
    }
    std::vector<std::string> want, have;
    for (const MoveTableName& n : names) want.push_back(absl::StrCat(n.db, ".", n.table));
    for (const auto& [table, p] : saved) have.push_back(table);
    std::sort(want.begin(), want.end());
    if (want != have) {
      return absl::FailedPreconditionError(absl::StrCat(
          "move ", name(), " has a checkpoint on ", target.Peer(), " for ",
          absl::StrJoin(have, ", "), " but tables = ", options_.apply.tables, " now names ",
          absl::StrJoin(want, ", "), "; put tables back as it was to resume it, or give this "
          "move another name (the target tables of the first hold a partial copy)"));
    }
    names = std::move(from_checkpoint);
  }
  if (names.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "move ", name(), ": no table on ", source.Peer(), " matches tables = ",
        options_.apply.tables));
  }
  BR_RETURN_IF_ERROR(Guard(names));
  MovePlan plan;
  if (saved.empty()) {
    // Every problem at once: the tables' own (MovePreflight), the accounts'
    // privileges, and room in the store.
    std::vector<std::string> more = MovePrivilegeProblems(
        source, target, names, options_.cutover != MoveOptions::Cutover::kNone,
        options_.cutover != MoveOptions::Cutover::kNone && options_.rename_source,
        options_.indexes_after_copy, options_.apply.checkpoint_schema,
        /*snapshot_locks=*/!source_is_mariadb_);
    // Row events with full images are what the pipeline applies: checked
    // here too, before anything is written (the pipeline would refuse the
    // first partial image only once the copy is under way).
    auto format = source.Query("SELECT @@GLOBAL.binlog_format, @@GLOBAL.binlog_row_image");
    if (format.ok() && !format->empty() && (*format)[0].size() == 2) {
      const std::string f = (*format)[0][0].value_or("?"), i = (*format)[0][1].value_or("?");
      if (f != "ROW") {
        more.push_back(absl::StrCat("the source ", source.Peer(), " has binlog_format = ", f,
                                    ": a move applies row events; SET GLOBAL binlog_format = "
                                    "'ROW' (and in my.cnf), then reconnect the applications"));
      }
      if (i != "FULL") {
        more.push_back(absl::StrCat("the source ", source.Peer(), " has binlog_row_image = ", i,
                                    ": a move applies whole rows; SET GLOBAL binlog_row_image = "
                                    "'FULL' (and in my.cnf)"));
      }
    }
    auto planned = MovePreflight(source, target, names);
    if (!options_.store_dir.empty()) {
      uint64_t rate = 0;
      auto space = StoreSpaceProblem(source, options_.store_dir,
                                     planned.ok() ? planned->approx_bytes : 0, 20 << 20,
                                     absl::Milliseconds(250), &rate);
      if (space.ok() && space->has_value()) more.push_back(**space);
      if (space.ok()) {
        spdlog::info("move {}: the source writes about {} KiB/s of binlog; the store keeps it "
                     "while the move runs", name(), rate >> 10);
      }
    }
    if (!planned.ok()) {
      if (more.empty()) return planned.status();
      return absl::FailedPreconditionError(
          absl::StrCat(planned.status().message(), "; ", absl::StrJoin(more, "; ")));
    }
    if (!more.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("binrelay move cannot start: ", absl::StrJoin(more, "; ")));
    }
    plan = std::move(*planned);
    for (const std::string& w : plan.warnings) spdlog::warn("move {}: {}", name(), w);
  } else {
    // Resuming: the target tables exist and hold what was copied (names
    // are the checkpoint's, checked against `tables` above).
    for (const MoveTableName& n : names) {
      MoveTablePlan p;
      p.name = n;
      BR_ASSIGN_OR_RETURN(p.source, LoadTableShape(source, n.db, n.table));
      std::string sql = "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = ";
      AppendQuotedString(n.db, &sql);
      sql.append(" AND TABLE_NAME = ");
      AppendQuotedString(n.table, &sql);
      if (auto r = source.Query(sql); r.ok() && !r->empty() && (*r)[0][0]) {
        (void)absl::SimpleAtoi(*(*r)[0][0], &p.approx_rows);
      }
      plan.tables.push_back(std::move(p));
    }
    // Statements a killed run still has running on the target (a chunk's
    // INSERT IGNORE) must not commit after the highest key is read below.
    BR_RETURN_IF_ERROR(KillEarlierCopies(target, names));
    spdlog::info("move {}: resuming from its checkpoint on {} (phase {})", name(),
                 target.Peer(), MovePhaseName(saved.begin()->second.phase));
  }
  if (options_.rename_source) {
    // Cutover renames each source table to <t>_old: a name already taken
    // would fail it halfway, with the source locked.
    std::vector<std::string> taken;
    for (const MoveTablePlan& t : plan.tables) {
      BR_ASSIGN_OR_RETURN(bool used, TableExists(source, t.name.db, t.name.table + "_old"));
      if (used) {
        taken.push_back(absl::StrCat(t.name.db, ".", t.name.table, "_old"));
      }
    }
    if (!taken.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "move ", name(), ": cutover renames each source table to <table>_old, but ",
          absl::StrJoin(taken, ", "), " already exist(s) on ", source.Peer(),
          "; drop or rename them, or set rename_source = off"));
    }
  }
  if (saved.empty()) SetPhase(MovePhase::kCreate);
  // Indexes wait for the copy unless a table of the move has a foreign key
  // (secondary_indexes.h).
  bool defer_indexes = options_.indexes_after_copy;
  for (const MoveTablePlan& p : plan.tables) {
    if (!defer_indexes || !p.create_on_target) continue;
    BR_ASSIGN_OR_RETURN(std::string ddl, ShowCreateTable(source, p.name.db, p.name.table));
    if (ReferencesOtherTables(ddl)) {
      defer_indexes = false;
      spdlog::info("move {}: {}.{} has a foreign key: every table's indexes are created with "
                   "it", name(), p.name.db, p.name.table);
    }
  }
  uint64_t rows = 0;
  std::vector<std::string> exact;
  for (MoveTablePlan& p : plan.tables) {
    if (p.create_on_target) {
      if (absl::Status created = CreateTargetTable(source, target, p.name, defer_indexes);
          !created.ok()) {
        // Typically another flavour's definition: a collation, type or
        // option the target's release does not have.
        return Annotate(created, absl::StrCat(
            "creating ", p.name.target_db, ".", p.name.table, " on ", target.Peer(),
            " from the source's SHOW CREATE TABLE; if the target cannot take that definition, "
            "create the table there by hand (the same columns, types, collations and keys, "
            "empty) and run the move again"));
      }
      spdlog::info("move {}: created {}.{} on {}", name(), p.name.target_db, p.name.table,
                   target.Peer());
    }
    auto t = std::make_unique<Table>();
    BR_ASSIGN_OR_RETURN(t->target, LoadTableShape(target, p.name.target_db, p.name.table));
    if (!saved.empty()) {
      BR_RETURN_IF_ERROR(CheckTargetShape(
          p.source, t->target,
          absl::StrCat("move ", name(), " target table ", p.name.target_db, ".", p.name.table)));
      t->progress = saved[absl::StrCat(p.name.db, ".", p.name.table)];
    }
    std::optional<KeyBound> after = t->progress.copy_done ? std::nullopt : t->progress.copied;
    BR_ASSIGN_OR_RETURN(KeyRangeChunker chunker, KeyRangeChunker::Create(p.source, after));
    t->chunker.emplace(std::move(chunker));
    BR_ASSIGN_OR_RETURN(RangeCopier copier, RangeCopier::Create(p.source, t->target, options_.bulk_copy));
    t->copier.emplace(std::move(copier));
    const bool exact_order = KeyIsMemComparable(t->target);
    if (t->progress.copy_done) {
      t->gate = std::make_unique<TableCopyGate>(CopyWatermarks(exact_order));
      t->gate->Disable();
    } else if (!saved.empty()) {
      // Rows a chunk in flight wrote before the stop are on the target but
      // above `copied`: no change to them may be dropped (copy_watermarks.h).
      auto highest = t->chunker->Highest(target, Qualified(p.name.target_db, p.name.table));
      if (!highest.ok()) {
        return Annotate(highest.status(), absl::StrCat("move ", name(), ": reading the highest "
                                                       "key of ", p.name.target_db, ".",
                                                       p.name.table, " on ", target.Peer()));
      }
      std::optional<std::string> copied, top;
      if (t->progress.copied) copied = t->progress.copied->ordered;
      if (*highest) top = (*highest)->ordered;
      t->gate = std::make_unique<TableCopyGate>(
          CopyWatermarks(exact_order, copied, t->progress.guard, top));
    } else {
      t->gate = std::make_unique<TableCopyGate>(CopyWatermarks(exact_order));
    }
    rows += p.approx_rows;
    exact.push_back(absl::StrCat(p.name.db, ".", p.name.table));
    t->plan = std::move(p);
    by_name_[TableKey(t->plan.name.db, t->plan.name.table)] = t.get();
    tables_.push_back(std::move(t));
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    status_.rows_estimate = rows;
  }
  if (saved.empty()) {
    // A fresh move: rows an earlier move of the same name left on the
    // target would start its pipeline before this copy.
    BR_RETURN_IF_ERROR(ClearMoveCheckpoint(target, options_.apply.checkpoint_schema, name()));
    BR_ASSIGN_OR_RETURN(bool has_cp,
                        TableExists(target, options_.apply.checkpoint_schema, "apply_checkpoint"));
    if (has_cp) {
      std::string del = "DELETE FROM ";
      AppendIdentifier(options_.apply.checkpoint_schema, &del);
      del.append(".`apply_checkpoint` WHERE pipeline = ");
      AppendQuotedString(options_.apply.name, &del);
      BR_RETURN_IF_ERROR(target.Query(del).status());
    }
  } else {
    auto at = replication::ParseStartSpec(tables_.front()->progress.start);
    if (!at.ok() || at->kind != replication::StartSpec::Kind::kPosition) {
      return absl::DataLossError(absl::StrCat(
          "move ", name(), ": its checkpoint on ", target.Peer(), " holds start_at '",
          tables_.front()->progress.start, "', not FILE:POS"));
    }
    start_ = at->position;
  }
  BR_RETURN_IF_ERROR(CreateMoveCheckpointTable(target, options_.apply.checkpoint_schema));
  resumed_ = !saved.empty();
  options_.apply.tables = absl::StrJoin(exact, ",");
  planned_.store(true, std::memory_order_release);
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
    replication::ConnectionSqlSource source(source_);
    BR_ASSIGN_OR_RETURN(start_, replication::ReadBinlogStatus(source));
  }
  {
    // After the start position is fixed: every XA transaction prepared
    // before it and still open is listed (see WaitForXaPreparedBeforeStart).
    replication::ConnectionSqlSource source(source_);
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
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_) return absl::CancelledError("stopping");
    pipeline_ = std::make_unique<ApplyPipeline>(p, store_, source_, this);
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
    std::lock_guard<std::mutex> l(mu_);
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
  // Also after a restart with indexes_after_copy changed: a table created
  // without its indexes gets them.
  SetPhase(MovePhase::kIndexes);
  BR_RETURN_IF_ERROR(SaveAll());
  BR_RETURN_IF_ERROR(AddIndexes());

  SetPhase(MovePhase::kCatchUp);
  if (!StallIfAsked("catch up")) return absl::CancelledError("stopping");
  BR_RETURN_IF_ERROR(WaitCaughtUp(absl::InfiniteDuration()));
  BR_RETURN_IF_ERROR(WaitForXaPreparedBeforeStart());
  if (!HoldIfAsked("checksum", /*only_if_named=*/true)) return absl::CancelledError("stopping");
  SetPhase(MovePhase::kChecksum);
  BR_RETURN_IF_ERROR(SaveAll());
  BR_RETURN_IF_ERROR(Checksum());

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

absl::Status TableMove::CopyTable(Table& t) {
  replication::ConnectionSqlSource source(source_);
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

  auto work = [&] {
    replication::ConnectionSqlSource src(source_);
    TargetSession target(options_.apply.target, options_.apply.lock_wait_timeout_seconds);
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
      absl::StatusOr<CopyResult> n;
      for (int attempt = 0;; ++attempt) {
        // INSERT IGNORE of the same range again is harmless.
        n = t.copier->Copy(src, target, job.range, *t.chunker, options_.copy_batch_bytes);
        // Retried like the pipeline's writes, for as long as the target's
        // locks or a lost connection last (target_session.h). DataLoss (the
        // target changed a row) is not: a retry would find the changed row
        // there and see only a duplicate.
        const ErrorClass c = Classify(n.status());
        if (n.ok() || stopping_ || absl::IsDataLoss(n.status()) || c == ErrorClass::kHard) break;
        if (attempt == 0 || attempt % 30 == 0) {
          spdlog::warn("move {}: copying a chunk of {} ({}) failed (attempt {}), retrying: {}",
                       name(), t.Name(), job.range.where, attempt + 1, SV(n.status().message()));
        }
        if (!Sleep(RetryWait(c, attempt))) break;
      }
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
  std::vector<std::thread> threads;
  for (size_t i = 0; i < workers; ++i) threads.emplace_back(work);

  // Upper bounds handed out, by ordered key: the checkpoint stores the
  // bound the low watermark reached as the chunker resumes from it.
  std::map<std::string, KeyBound> bounds;
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
    auto next = t.chunker->Next(source, chunk_rows.load());
    if (!next.ok()) {
      s = Annotate(next.status(), absl::StrCat("move ", name(), ": cutting ", t.Name()));
      break;
    }
    if (!next->has_value()) break;  // every chunk handed out
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
  for (auto& th : threads) th.join();
  t.chunk_rows = chunk_rows.load();
  if (!error.ok()) return error;
  if (stopping_) return absl::CancelledError("stopping");
  return absl::OkStatus();
}

absl::Status TableMove::AddIndexes() {
  replication::ConnectionSqlSource source(source_);
  // A big table's index build outlasts the usual 60 s read timeout.
  protocol::ConnectOptions long_reads = options_.apply.target;
  long_reads.io_timeout = std::chrono::hours(6);
  for (auto& t : tables_) {
    // The source's indexes as they are now, compared by name with the
    // target's: also right after a restart in this phase, and for a target
    // table an operator created without them.
    BR_ASSIGN_OR_RETURN(std::string ddl,
                        ShowCreateTable(source, t->plan.name.db, t->plan.name.table));
    const std::vector<IndexDefinition> indexes = DeferrableIndexes(ddl);
    if (indexes.empty()) continue;
    const absl::Time started = absl::Now();
    std::vector<std::string> added;
    BR_RETURN_IF_ERROR(Retry("adding secondary indexes", [&]() -> absl::Status {
      replication::ConnectionSqlSource target(long_reads);
      std::string not_online;
      auto a = AddMissingIndexes(target, t->TargetSql(), indexes, &not_online);
      if (!not_online.empty()) {
        spdlog::warn("move {}: the indexes of {} could not be built online on {} ({}); built "
                     "with the pipeline's writes waiting", name(), t->Name(), target.Peer(),
                     not_online);
      }
      if (ServerErrorCode(a.status()) == 1799) {
        // ER_INNODB_ONLINE_LOG_TOO_BIG: the changes applied during the build
        // outgrew innodb_online_alter_log_max_size; build it with the
        // pipeline paused (the store keeps what it has not applied).
        ResumeOnExit resume(pipeline_.get());
        BR_RETURN_IF_ERROR(pipeline_->Pause(absl::Seconds(60)).status());
        a = AddMissingIndexes(target, t->TargetSql(), indexes, &not_online);
      }
      if (!a.ok()) {
        return Annotate(a.status(), absl::StrCat("move ", name(), ": adding the secondary "
                                                 "indexes of ", t->Name(), " on ",
                                                 target.Peer()));
      }
      added = std::move(*a);
      return absl::OkStatus();
    }));
    if (!added.empty()) {
      spdlog::info("move {}: built {} index(es) of {} on the target in {}: {}", name(),
                   added.size(), t->Name(), absl::FormatDuration(absl::Now() - started),
                   absl::StrJoin(added, ", "));
    }
  }
  return absl::OkStatus();
}

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
  replication::ConnectionSqlSource source(source_);
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
                                         std::vector<size_t>* differing) {
  // Pause first: the reader then stands at or before the source's
  // position, so it can be advanced to the snapshot's.
  std::optional<Snapshot> source, target;
  {
    ResumeOnExit resume(pipeline_.get());  // also when the pause fails
    BR_RETURN_IF_ERROR(pipeline_->Pause(absl::Seconds(60)).status());
    BR_ASSIGN_OR_RETURN(Snapshot s, SourceSnapshotAtPipeline(*pipeline_, source_, source_is_mariadb_,
                                                             t.SourceSql(), name(),
                                                                  [this](absl::Duration d) {
                                                                    return Sleep(d);
                                                                  }));
    source.emplace(std::move(s));
    BR_ASSIGN_OR_RETURN(Snapshot d, OpenSnapshot(options_.apply.target));
    target.emplace(std::move(d));
  }
  // One expression on both sides: the source's shape, read from the
  // target's table.
  TableShape as_target = t.plan.source;
  as_target.db = t.target.db;
  as_target.table = t.target.table;
  RangeChecksum source_sum(t.plan.source), target_sum(as_target);
  // Both servers sum at once (each on its own snapshot): the checksum takes
  // the slower server's time, not the sum of both.
  std::vector<absl::StatusOr<RangeSum>> theirs(ranges.size(), absl::UnknownError("not run"));
  std::atomic<bool> abort{false};  // either side failed: the other stops too
  std::vector<absl::StatusOr<RangeSum>> ours;
  ours.reserve(ranges.size());
  {
    std::jthread on_target([&] {
      for (size_t i = 0; i < ranges.size() && !abort && !stopping_; ++i) {
        auto sum = target_sum.Sum(*target->sql, ranges[i].where);
        if (sum.ok()) {
          theirs[i] = std::move(sum);
        } else {
          theirs[i] = Annotate(sum.status(), absl::StrCat("summing ", t.TargetSql(),
                                                          " on the target"));
          abort = true;
        }
      }
    });
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
  (void)target->sql->Query("COMMIT");
  return absl::OkStatus();
}

absl::Status TableMove::Repair(Table& t, const KeyRange& range) {
  ResumeOnExit resume(pipeline_.get());
  BR_RETURN_IF_ERROR(pipeline_->Pause(absl::Seconds(60)).status());
  BR_ASSIGN_OR_RETURN(Snapshot source, SourceSnapshotAtPipeline(*pipeline_, source_, source_is_mariadb_,
                                                             t.SourceSql(), name(),
                                                                  [this](absl::Duration d) {
                                                                    return Sleep(d);
                                                                  }));
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
  // source for a while): tried again, not the end of the move.
  for (int attempt = 1;; ++attempt) {
    absl::Status s = step();
    if (s.ok() || stopping_ || attempt == 5 || absl::IsDataLoss(s) ||
        absl::IsFailedPrecondition(s) || absl::IsInvalidArgument(s)) {
      return s;
    }
    spdlog::warn("move {}: {} failed (attempt {} of 5), retrying: {}", name(), what, attempt,
                 SV(s.message()));
    if (!Sleep(absl::Seconds(2 * attempt))) return absl::CancelledError("stopping");
  }
}

absl::Status TableMove::Checksum() {
  uint64_t total = 0;
  for (auto& t : tables_) total += t->plan.approx_rows / std::max<uint64_t>(1, t->chunk_rows) + 1;
  {
    std::lock_guard<std::mutex> l(mu_);
    status_.chunks_total = total;
  }
  // Ranges of its own, resumable after the last one compared: the copy's
  // ranges of an earlier run are gone. One snapshot per group of ranges:
  // a snapshot held open over a whole big table would keep the source's
  // undo history growing meanwhile.
  constexpr size_t kPerSnapshot = 64;
  for (auto& t : tables_) {
    if (t->progress.checksum_done) continue;
    BR_ASSIGN_OR_RETURN(KeyRangeChunker ranges,
                        KeyRangeChunker::Create(t->plan.source, t->progress.checked));
    replication::ConnectionSqlSource source(source_);
    if (t->row_bytes == 0) {  // a resumed move: this run copied nothing
      BR_ASSIGN_OR_RETURN(auto sample, t->copier->SampleRowBytes(source, *t->chunker, 20));
      if (sample.second > 0) t->row_bytes = std::max<uint64_t>(1, sample.first / sample.second);
    }
    // A differing range is copied again whole: within copy_chunk_bytes too.
    const uint64_t rows = t->RowsWithin(std::max<uint64_t>(1000, t->chunk_rows),
                                        options_.copy_chunk_bytes);
    bool last = false;
    while (!last) {
      if (stopping_) return absl::CancelledError("stopping");
      std::vector<KeyRange> group;
      while (group.size() < kPerSnapshot) {
        BR_ASSIGN_OR_RETURN(std::optional<KeyRange> r, ranges.Next(source, rows));
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
      BR_RETURN_IF_ERROR(Retry("checksum", [&] {
        differing.clear();
        return SumAtOnePosition(*t, group, &differing);
      }));
      {
        std::lock_guard<std::mutex> l(mu_);
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
        std::lock_guard<std::mutex> l(mu_);
        ++status_.chunks_repaired;
      }
      // The test hook stops with the checksum unfinished: after a saved
      // group when more follow, else before the last group is saved.
      if (last && !StallIfAsked("checksum")) return absl::CancelledError("stopping");
      if (group.back().upper) t->progress.checked = group.back().upper;
      t->progress.checksum_done = last;
      BR_RETURN_IF_ERROR(SaveProgress(*t));
      if (!last && !StallIfAsked("checksum")) return absl::CancelledError("stopping");
    }
  }
  MoveStatus s = Status();
  {
    std::lock_guard<std::mutex> l(mu_);
    status_.chunks_total = status_.chunks_checked;
  }
  spdlog::info("move {}: checksum: {} chunk(s) checked, {} differed, {} repaired", name(),
               s.chunks_checked, s.chunks_differing, s.chunks_repaired);
  return absl::OkStatus();
}

absl::Status TableMove::Cutover() {
  for (size_t attempt = 1;; ++attempt) {
    absl::Status s = TryCutover();
    if (s.ok() || !absl::IsUnavailable(s)) return s;
    if (attempt >= options_.cutover_attempts) {
      return absl::DeadlineExceededError(absl::StrCat(
          "move ", name(), ": cutover failed ", attempt, " times (cutover_attempts), the last: ",
          s.message(), "; the source's tables are unlocked and the move keeps its checkpoint: "
          "run it again when the source is quieter, or raise cutover_timeout or "
          "cutover_lock_wait"));
    }
    spdlog::warn("move {}: cutover attempt {} of {} not possible now, the source's tables are "
                 "unlocked; retrying in 5 s: {}",
                 name(), attempt, options_.cutover_attempts, SV(s.message()));
    if (!Sleep(absl::Seconds(5))) return absl::CancelledError("stopping");
  }
}

absl::Status TableMove::CarryAutoIncrement(replication::SqlSource& locked_source) {
  // The copy leaves the target's counter at its largest id + 1; the
  // source's may be higher (its top rows deleted, or raised by ALTER TABLE).
  // Writers moving to the target must not be handed ids the source already
  // gave out. Read under the lock, from SHOW CREATE TABLE: MySQL's
  // information_schema.TABLES.AUTO_INCREMENT is a cached statistic
  // (information_schema_stats_expiry).
  std::unique_ptr<replication::ConnectionSqlSource> target;
  for (auto& t : tables_) {
    const std::string from = Qualified(t->plan.name.db, t->plan.name.table);
    BR_ASSIGN_OR_RETURN(auto rows, locked_source.Query(absl::StrCat("SHOW CREATE TABLE ", from)));
    if (rows.empty() || rows[0].size() < 2 || !rows[0][1].has_value()) continue;
    const std::string& ddl = *rows[0][1];
    // In the table options after the column list, which the server writes
    // before any COMMENT (sql/sql_show.cc, store_create_info).
    const size_t options = ddl.rfind("\n)");
    const size_t at =
        options == std::string::npos ? options : ddl.find(" AUTO_INCREMENT=", options);
    if (at == std::string::npos) continue;  // no AUTO_INCREMENT column
    const size_t digits = at + std::strlen(" AUTO_INCREMENT=");
    const size_t end = ddl.find_first_not_of("0123456789", digits);
    uint64_t next = 0;
    if (!absl::SimpleAtoi(ddl.substr(digits, end - digits), &next) || next == 0) continue;
    if (target == nullptr) {
      target = std::make_unique<replication::ConnectionSqlSource>(options_.apply.target);
    }
    // Lower than the target's largest id + 1, the server keeps its own.
    BR_RETURN_IF_ERROR(
        target->Query(absl::StrCat("ALTER TABLE ", t->TargetSql(), " AUTO_INCREMENT = ", next))
            .status());
    spdlog::info("move {}: {} continues with AUTO_INCREMENT {} as on the source", name(),
                 t->TargetSql(), next);
  }
  return absl::OkStatus();
}

absl::Status TableMove::TryCutover() {
  {
    std::lock_guard<std::mutex> l(mu_);
    ++status_.cutover_attempts;
  }
  BR_RETURN_IF_ERROR(WaitCaughtUp(absl::Seconds(60)));
  // The pipeline keeps applying while LOCK TABLES waits; once the tables are
  // locked at `at`, any transaction boundary at or after it is as good as
  // `at` itself for them (AdvanceTo's or_after).
  ResumeOnExit resume(pipeline_.get());
  const absl::Duration limit = absl::FromChrono(options_.cutover_timeout);
  BR_ASSIGN_OR_RETURN(std::unique_ptr<protocol::ClientConnection> conn,
                      protocol::ClientConnection::Connect(source_));
  replication::ConnectionSqlSource lock(conn.get());
  const int64_t wait_s = std::max<int64_t>(
      1, std::chrono::duration_cast<std::chrono::seconds>(options_.cutover_lock_wait).count());
  // If binrelay's host dies or the network fails while this session holds
  // the lock, nothing closes the connection: the source drops an idle
  // session after wait_timeout (MySQL manual, "Server System Variables"),
  // and the session is idle here only while the pipeline advances, at most
  // cutover_timeout.
  const int64_t idle_s = absl::ToInt64Seconds(absl::Ceil(limit, absl::Seconds(1))) + 5;
  BR_RETURN_IF_ERROR(lock.Query(absl::StrCat("SET SESSION lock_wait_timeout = ", wait_s,
                                             ", wait_timeout = ", idle_s))
                         .status());
  BR_ASSIGN_OR_RETURN(auto id_rows, lock.Query("SELECT CONNECTION_ID()"));
  const std::string lock_id =
      !id_rows.empty() && !id_rows[0].empty() ? id_rows[0][0].value_or("") : "";
  std::string sql = "LOCK TABLES ";
  for (size_t i = 0; i < tables_.size(); ++i) {
    if (i > 0) sql.append(", ");
    sql.append(Qualified(tables_[i]->plan.name.db, tables_[i]->plan.name.table));
    sql.append(" WRITE");
  }
  if (auto locked = lock.Query(sql); !locked.ok()) {
    return absl::UnavailableError(absl::StrCat("LOCK TABLES on ", lock.Peer(), ": ",
                                               locked.status().message()));
  }
  // From here every way out unlocks (closing the connection would too).
  const absl::Time locked_at = absl::Now();
  auto unlock = [&] {
    absl::Status unlocked = lock.Query("UNLOCK TABLES").status();
    if (unlocked.ok()) return;
    // The session may still hold the lock: end it from another one.
    absl::Status killed = absl::UnavailableError("no connection id");
    if (!lock_id.empty()) {
      if (auto other = protocol::ClientConnection::Connect(source_); other.ok()) {
        replication::ConnectionSqlSource admin(other->get());
        killed = admin.Query(absl::StrCat("KILL CONNECTION ", lock_id)).status();
      } else {
        killed = other.status();
      }
    }
    spdlog::error("move {}: UNLOCK TABLES on the source failed ({}); ending the locking "
                  "session {} with KILL: {}",
                  name(), SV(unlocked.message()), lock_id,
                  killed.ok() ? std::string("done") : std::string(killed.message()));
  };
  auto at = replication::ReadBinlogStatus(lock);
  if (!at.ok()) {
    unlock();
    return absl::UnavailableError(absl::StrCat("SHOW MASTER STATUS: ", at.status().message()));
  }
  absl::Status applied = pipeline_->AdvanceTo(
      *at, std::max(absl::Milliseconds(1), limit - (absl::Now() - locked_at)), /*or_after=*/true);
  if (!applied.ok()) {
    unlock();
    if (!PipelineError().ok()) return PipelineError();
    return absl::UnavailableError(absl::StrCat(
        "the last changes up to ", at->ToString(), " did not reach the target within "
        "cutover_timeout (", absl::FormatDuration(limit), "): ", applied.message()));
  }
  // Everything the source committed to these tables is on the target.
  if (absl::Status carried = CarryAutoIncrement(lock); !carried.ok()) {
    unlock();
    return absl::UnavailableError(absl::StrCat("carrying AUTO_INCREMENT to the target: ",
                                               carried.message()));
  }
  if (!StallIfAsked("cutover locked")) {
    unlock();
    return absl::CancelledError("stopping");
  }
  if (options_.rename_source) {
    for (auto& t : tables_) {
      const std::string from = Qualified(t->plan.name.db, t->plan.name.table);
      const std::string to = Qualified(t->plan.name.db, t->plan.name.table + "_old");
      auto renamed = lock.Query(absl::StrCat("ALTER TABLE ", from, " RENAME TO ", to));
      if (!renamed.ok()) {
        unlock();
        return absl::FailedPreconditionError(absl::StrCat(
            "move ", name(), ": renaming ", from, " to ", to, " on ", lock.Peer(), ": ",
            renamed.status().message(), "; the tables are unlocked, check which were "
            "renamed before writing to them again"));
      }
    }
  }
  unlock();
  const absl::Duration held = absl::Now() - locked_at;
  // The pipeline stays at the position of the cutover: it must not apply
  // the renames.
  pipeline_->Stop();
  spdlog::info("move {}: cut over at {}; the source's tables were locked for {}", name(),
               at->ToString(), absl::FormatDuration(held));
  return absl::OkStatus();
}

}  // namespace binrelay::apply
