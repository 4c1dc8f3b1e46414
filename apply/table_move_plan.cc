// TableMove's preflight and plan: the tables checked on both servers, the
// absent ones created, the pipeline and copy set up or resumed from the
// move's checkpoint.
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

absl::Status TableMove::Plan() {
  SetPhase(MovePhase::kPreflight);
  replication::ConnectionSqlSource source(SourceFollowing());
  replication::ConnectionSqlSource target(options_.apply.target);
  progress_sql_ = std::make_unique<replication::ConnectionSqlSource>(options_.apply.target);
  BR_ASSIGN_OR_RETURN(Subscription pattern, Subscription::Parse(options_.apply.tables));
  // The name's lock first: the checkpoint read next is then this run's.
  BR_RETURN_IF_ERROR(GuardName());
  BR_ASSIGN_OR_RETURN(std::optional<std::string> version,
                      replication::QueryValue(source, "SELECT VERSION()"));
  source_is_mariadb_ = version && absl::StrContains(*version, "MariaDB");
  BR_ASSIGN_OR_RETURN(std::optional<std::string> target_version,
                      replication::QueryValue(target, "SELECT VERSION()"));
  source_checksum_ = RangeChecksum::ServerFor(version.value_or(""));
  target_checksum_ = RangeChecksum::ServerFor(target_version.value_or(""));
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
    absl::MutexLock l(&mu_);
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

}  // namespace binrelay::apply
