// ApplyPipeline's table setup, before each read: the checkpoint the target
// holds, the upsert protocol the target takes, and every subscribed table
// checked (its shape on both servers, a DDL stored after the checkpoint
// that explains a difference, foreign keys whose actions are not logged,
// two sources written to one target table), then a fence against
// statements an earlier run left running.
#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "apply/ddl_tables.h"
#include "apply/pipeline.h"
#include "apply/sql_literal.h"
#include "apply/table_key.h"
#include "apply/table_shape.h"
#include "protocol/event_type.h"
#include "protocol/query_event.h"
#include "protocol/status_macros.h"
#include "replication/store_era.h"
#include "replication/binlog_status.h"
#include "replication/connection_sql_source.h"
#include "replication/gtid_start.h"
#include "replication/store_reader.h"
#include "spdlog/spdlog.h"

namespace binrelay::apply {
namespace {

// A SqlSource over a TargetSession, for the shape check.
class SessionSqlSource : public replication::SqlSource {
 public:
  explicit SessionSqlSource(TargetSession* s) : s_(s) {}
  absl::StatusOr<std::vector<replication::SqlRow>> Query(std::string_view sql) override {
    BR_ASSIGN_OR_RETURN(protocol::QueryResult r, s_->Query(sql));
    return std::move(r.rows);
  }
  std::string Peer() const override { return s_->peer(); }

 private:
  TargetSession* s_;
};

}  // namespace

absl::StatusOr<replication::BinlogPosition> ApplyPipeline::ResolveGtidStart() const {
  auto at = replication::FirstTransactionNotIn(*store_, options_.start.gtid_set);
  if (!at.ok()) {
    return Annotate(at.status(), absl::StrCat("apply pipeline ", options_.name,
                                              ": start = gtid:", options_.start.gtid_set));
  }
  return *at;
}

absl::Status ApplyPipeline::Prepare() {
  SetState(PipelineState::kPreparing);
  TargetSession& target = flusher_->setup_session();
  const std::string where = absl::StrCat("apply pipeline ", options_.name, ", target ",
                                         target.peer());
  std::string schema;
  AppendIdentifier(options_.checkpoint_schema, &schema);
  BR_RETURN_IF_ERROR(Annotate(target.Execute(absl::StrCat("CREATE DATABASE IF NOT EXISTS ", schema)),
                              where));
  BR_RETURN_IF_ERROR(
      Annotate(target.Execute(CreateCheckpointTableSql(options_.checkpoint_schema)), where));
  BR_ASSIGN_OR_RETURN(protocol::QueryResult cp,
                      target.Query(SelectCheckpointSql(options_.checkpoint_schema, options_.name)));
  if (!cp.rows.empty() && cp.rows[0].size() == 2 && cp.rows[0][0] && cp.rows[0][1]) {
    replication::BinlogPosition at{*cp.rows[0][0], 4};
    if (!absl::SimpleAtoi(*cp.rows[0][1], &at.offset)) {
      return absl::DataLossError(absl::StrCat(where, ": checkpoint row holds binlog_pos '",
                                              *cp.rows[0][1], "'"));
    }
    position_ = at;  // the target's checkpoint is the truth
  }
  if (position_.file.empty()) {
    auto files = store_->CommittedFiles();
    if (files.empty()) return absl::UnavailableError("the store holds no binlog yet");
    if (options_.start.kind == replication::StartSpec::Kind::kGtid) {
      BR_ASSIGN_OR_RETURN(position_, ResolveGtidStart());
    } else {
      position_ = options_.start.kind == replication::StartSpec::Kind::kCurrent
                      ? store_->committed().position
                      : replication::BinlogPosition{files.front().name, 4};
    }
  }
  pin_.Advance(position_);

  // The tables: every source table the pattern matches, checked against
  // the target's.
  UpsertWrite write = UpsertWrite::kText;
  std::string why_text = options_.bulk_replace ? "" : " (bulk_replace = off)";
  if (options_.bulk_replace) {
    BR_ASSIGN_OR_RETURN(const bool bulk, target.SupportsBulk());
    // MySQL has no bulk command: prepared multi-row REPLACEs bind values in
    // binary form just the same (protocol/stmt_execute.h).
    write = bulk ? UpsertWrite::kBulk : UpsertWrite::kExecute;
    // A bulk command is logged by the statement it prepared, markers and
    // all, when the target writes a STATEMENT-format binlog (MariaDB only
    // switches bulk operations to row format under MIXED; sql_class.cc
    // THD::decide_logging_format): its replicas could not run that. Where
    // the session could not switch to ROW (TargetSession), REPLACE text.
    if (target.logs_statements()) {
      write = UpsertWrite::kText;
      why_text = " (the target logs statements: binlog_format is STATEMENT)";
    }
  }
  flusher_->SetUpsertProtocol(write, write == UpsertWrite::kBulk      ? "bulk"
                                     : write == UpsertWrite::kExecute ? "prepared"
                                                                      : absl::StrCat("text", why_text));
  BR_ASSIGN_OR_RETURN(const size_t max_statement, target.MaxStatementBytes());
  // A DDL the source ran after the checkpoint: information_schema shows the
  // table as it is after it, but the rows stored before it were logged
  // under its earlier definition, and a MariaDB binlog with the default
  // binlog_row_metadata=NO_LOG carries no signedness or character set to
  // tell them apart. The target table still has that earlier definition
  // (the pipeline stops at every DDL until the operator changes it), so
  // those rows are read with the target's; the pipeline then stops at the
  // statement as it does when it meets one live. The store is scanned for
  // such statements only when something needs explaining: a table whose
  // source and target definitions differ, or one the target has and the
  // source no longer has (dropped or renamed since). Where the two agree,
  // either reads the rows alike.
  replication::ConnectionSqlSource source(source_);
  // InnoDB carries out referential actions below the binlog (MariaDB's
  // "Replication and Foreign Keys": cascaded changes are not logged). MySQL
  // 9.7 can carry them out in the server instead, innodb_native_foreign_keys
  // = OFF: the child table's changes are then logged as row events (MySQL
  // 9.7 manual, "Replication and Foreign Keys").
  {
    auto native = source.Query("SHOW GLOBAL VARIABLES LIKE 'innodb_native_foreign_keys'");
    if (!native.ok()) return Annotate(native.status(), "reading the source's foreign key handling");
    rules_.cascades_unlogged = native->empty() || native->front().size() < 2 ||
                         !absl::EqualsIgnoreCase(native->front()[1].value_or("ON"), "OFF");
    auto lctn = source.Query("SELECT @@GLOBAL.lower_case_table_names");
    if (!lctn.ok()) return Annotate(lctn.status(), "reading the source's lower_case_table_names");
    rules_.lower_case_table_names = 0;
    if (!lctn->empty() && !lctn->front().empty() && lctn->front()[0].has_value()) {
      (void)absl::SimpleAtoi(*lctn->front()[0], &rules_.lower_case_table_names);
    }
  }
  std::optional<absl::flat_hash_map<std::string, DdlAhead>> ddl_ahead;
  auto ddl_at = [&](const std::string& db,
                    const std::string& table) -> absl::StatusOr<const DdlAhead*> {
    if (!ddl_ahead) {
      // The definitions just read may already show a DDL the store has not
      // received: the scan must reach the source's position first.
      BR_ASSIGN_OR_RETURN(replication::BinlogPosition reported,
                          replication::ReadBinlogStatus(source));
      const replication::BinlogPosition now =
          replication::StoredPositionOf(store_->era(), reported);
      replication::BinlogPosition stored = store_->committed().position;
      // Usually a moment: binrelay has just started and its upstream
      // session is catching up. Waiting here (state "waiting for the store")
      // reads better than a failed start retried every 5 s.
      const absl::Time give_up = absl::Now() + absl::Seconds(60);
      if (replication::PositionBefore(stored, now)) {
        SetActivity(PipelineState::kPreparing,
                    absl::StrCat("waiting for the store to reach ", now.ToString()));
      }
      while (replication::PositionBefore(stored, now) && absl::Now() < give_up) {
        if (!Sleep(absl::Milliseconds(100))) return absl::CancelledError("stopping");
        stored = store_->committed().position;
      }
      SetState(PipelineState::kPreparing);
      if (replication::PositionBefore(stored, now)) {
        return absl::UnavailableError(absl::StrCat(
            "the definitions of ", db, ".", table, " differ between source and target, and "
            "binrelay's store (at ", stored.ToString(), ") has not reached the source's "
            "position ", now.ToString(), " after 60 s, to find the DDL that may explain it; "
            "check the upstream session (SHOW SLAVE STATUS on binrelay's port)"));
      }
      BR_ASSIGN_OR_RETURN(auto found, FindDdlAhead(position_));
      ddl_ahead = std::move(found);
    }
    auto it = ddl_ahead->find(rules_.DdlKey(db, table));
    if (it == ddl_ahead->end()) it = ddl_ahead->find(rules_.DdlKey(db, ""));
    return it == ddl_ahead->end() ? nullptr : &it->second;
  };
  auto listed = ListTables(source);
  if (!listed.ok()) return Annotate(listed.status(), "listing the source's tables");
  absl::flat_hash_set<std::string> on_source;
  for (const auto& [db, table] : *listed) on_source.insert(TableKey(db, table));
  std::vector<std::pair<std::string, std::string>> all = *listed;
  SessionSqlSource target_sql(&target);
  if (options_.target_schema.empty()) {
    // Subscribed tables a later DDL dropped or renamed are still to be read
    // up to that statement.
    auto on_target = ListTables(target_sql);
    if (!on_target.ok()) return Annotate(on_target.status(), where);
    for (auto& name : *on_target) {
      if (!rules_.pattern.Matches(name.first, name.second) || name.first == options_.checkpoint_schema ||
          on_source.contains(TableKey(name.first, name.second))) {
        continue;
      }
      BR_ASSIGN_OR_RETURN(const DdlAhead* ahead, ddl_at(name.first, name.second));
      if (ahead != nullptr && ahead->redefines) all.push_back(std::move(name));
    }
  }
  reader_.ClearTables();
  std::vector<std::string> exact;
  for (const auto& [db, table] : all) {
    if (!rules_.pattern.Matches(db, table) || db == options_.checkpoint_schema) continue;
    if (!options_.target_schema.empty() && db == options_.target_schema) continue;
    const std::string target_db = options_.target_schema.empty() ? db : options_.target_schema;
    auto tgt = LoadTableShape(target_sql, target_db, table);
    if (!tgt.ok()) {
      if (absl::IsNotFound(tgt.status()) && options_.target_schema.empty()) {
        BR_ASSIGN_OR_RETURN(const DdlAhead* ahead, ddl_at(db, table));
        if (ahead != nullptr && ahead->appears) {
          // Created (or renamed into place) after the checkpoint: no row of
          // it under this name comes before that statement, where the
          // pipeline stops.
          spdlog::info("apply pipeline {}: {}.{} is not on the target yet; it was created at "
                       "{}, after the checkpoint, where the pipeline will stop",
                       options_.name, db, table, ahead->at);
          continue;
        }
      }
      return absl::FailedPreconditionError(absl::StrCat(
          where, ": ", tgt.status().message(), "; create it with the source's definition "
          "(SHOW CREATE TABLE ", db, ".", table, ") and load its rows first"));
    }
    TableShape src;
    const DdlAhead* ahead = nullptr;
    const std::string target_name = absl::StrCat(where, " table ", target_db, ".", table);
    if (on_source.contains(TableKey(db, table))) {
      BR_ASSIGN_OR_RETURN(src, LoadTableShape(source, db, table));
      absl::Status same = CheckTargetShape(src, *tgt, target_name);
      if (!same.ok()) {
        BR_ASSIGN_OR_RETURN(ahead, ddl_at(db, table));
        // Only a statement that can change the definition explains a
        // difference (not TRUNCATE or an index).
        if (ahead == nullptr || !ahead->redefines) return same;
      }
    } else {
      BR_ASSIGN_OR_RETURN(ahead, ddl_at(db, table));  // how it got into `all`
      if (ahead == nullptr) continue;
    }
    if (ahead != nullptr) {
      spdlog::warn("apply pipeline {}: {}.{} was changed by a DDL at {}, after the checkpoint "
                   "{}: rows before that statement are applied with the target table's "
                   "definition (the source's before it), and the pipeline stops at the "
                   "statement for the target to be changed to match",
                   options_.name, db, table, ahead->at, position_.ToString());
      src = *tgt;
      src.db = db;
      src.table = table;
      // The target's own definition must still be one rows can be applied
      // to (a primary key, among others).
      BR_RETURN_IF_ERROR(CheckTargetShape(src, *tgt, target_name));
    }
    // ON DELETE/UPDATE CASCADE or SET NULL: InnoDB makes those changes
    // below the binlog, so they would never reach the target. (A table the
    // source no longer has is read only up to the DDL that removed it.)
    if (rules_.cascades_unlogged && on_source.contains(TableKey(db, table))) {
      std::string show = "SHOW CREATE TABLE ";
      AppendIdentifier(db, &show);
      show.push_back('.');
      AppendIdentifier(table, &show);
      BR_ASSIGN_OR_RETURN(auto created, source.Query(show));
      const std::string text =
          !created.empty() && created[0].size() >= 2 ? created[0][1].value_or("") : "";
      std::vector<UnloggedForeignKey> keys = UnloggedForeignKeys(text);
      if (!keys.empty()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "apply pipeline ", options_.name, ": source table ", db, ".", table,
            " has foreign key ", keys[0].name, " with ", keys[0].action,
            ": the server makes those changes without logging them, so the target would keep "
            "rows the source removed or changed; leave the table out of `tables` or make the "
            "key RESTRICT"));
      }
    }
    const std::string target_key = TableKey(target_db, table);
    for (const auto& [key, other] : reader_.tables()) {
      if (TableKey(other->target.db, other->target.table) == target_key) {
        return absl::FailedPreconditionError(absl::StrCat(
            "apply pipeline ", options_.name, ": source tables ", other->Name(), " and ", db,
            ".", table, " would both be written to ", target_db, ".", table,
            " (target_schema); give them separate pipelines or targets"));
      }
    }
    auto t = std::make_unique<ApplyTable>(MakeApplyTable(std::move(src), std::move(*tgt)));
    t->max_statement_bytes = max_statement;
    if (gate_ != nullptr) t->gate = gate_->ForTable(db, table);
    exact.push_back(absl::StrCat(db, ".", table));
    reader_.AddTable(std::move(t));
  }
  if (reader_.tables().empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "apply pipeline ", options_.name, ": no source table matches tables = ",
        options_.tables));
  }
  BR_ASSIGN_OR_RETURN(Subscription checked, Subscription::Parse(absl::StrJoin(exact, ",")));
  reader_.SetExact(std::move(checked));
  // Fence: statements an earlier binrelay process (killed while a drain ran)
  // still has running on these tables must not commit after ours.
  BR_ASSIGN_OR_RETURN(protocol::QueryResult self, target.Query("SELECT CONNECTION_ID(), USER()"));
  if (!self.rows.empty() && self.rows[0][0]) {
    BR_ASSIGN_OR_RETURN(
        protocol::QueryResult running,
        target.Query(absl::StrCat("SELECT ID, INFO FROM information_schema.PROCESSLIST WHERE "
                                  "ID <> CONNECTION_ID() AND USER = SUBSTRING_INDEX(USER(), '@', "
                                  "1) AND INFO IS NOT NULL")));
    for (const auto& row : running.rows) {
      if (row.size() < 2 || !row[0] || !row[1]) continue;
      for (const auto& [key, t] : reader_.tables()) {
        if (absl::StartsWith(*row[1], t->replace_head.substr(0, t->replace_head.find('('))) ||
            absl::StartsWith(*row[1], t->delete_head)) {
          uint32_t id = 0;
          if (absl::SimpleAtoi(*row[0], &id)) {
            spdlog::warn("apply pipeline {}: killing connection {} on {}, a statement of an "
                         "earlier run still writing {}", options_.name, id, target.peer(),
                         t->Name());
            BR_RETURN_IF_ERROR(target.KillConnection(id));
          }
          break;
        }
      }
    }
  }
  {
    absl::MutexLock l(&mu_);
    status_.flushed = position_;
    status_.read = position_;
  }
  return absl::OkStatus();
}

absl::StatusOr<absl::flat_hash_map<std::string, ApplyPipeline::DdlAhead>>
ApplyPipeline::FindDdlAhead(const replication::BinlogPosition& from) {
  absl::flat_hash_map<std::string, DdlAhead> found;
  const replication::BinlogPosition end = store_->committed().position;
  if (!replication::PositionBefore(from, end)) return found;
  SetActivity(PipelineState::kPreparing,
              absl::StrCat("reading the store from ", from.ToString(), " to ", end.ToString(),
                           " for DDL on subscribed tables"));
  BR_ASSIGN_OR_RETURN(std::unique_ptr<replication::StoreReader> reader,
                      replication::StoreReader::Open(store_, from));
  // The file's format first: without it a statement's text would run on
  // into the event's checksum.
  BR_RETURN_IF_ERROR(reader->PeekAt(4).status());
  // Statements only, framed and nothing else decoded: this runs at every
  // start over everything past the checkpoint. DDL is never inside a
  // MySQL transaction payload, which holds one DML transaction.
  std::string scratch;
  while (!stopping_ && replication::PositionBefore(reader->position(), end)) {
    protocol::EventView event;
    BR_ASSIGN_OR_RETURN(replication::StoreReader::Step step, reader->Next(&event));
    if (step == replication::StoreReader::Step::kNextFile) continue;
    if (step == replication::StoreReader::Step::kCaughtUp) break;
    if (event.type() != protocol::kQueryEvent && event.type() != protocol::kQueryCompressedEvent) {
      continue;
    }
    BR_ASSIGN_OR_RETURN(protocol::QueryEvent q,
                        protocol::ParseQueryEvent(event, reader->format(), &scratch));
    const protocol::StatementKind kind = protocol::ClassifyStatement(q.query);
    if (kind != protocol::StatementKind::kDdl && kind != protocol::StatementKind::kOther) continue;
    for (const DdlTarget& t : DdlTables(q.db, q.query)) {
      // A foreign key added: no row's shape changed (the reader stops there
      // live, when it meets the statement).
      if (t.dml || !t.unlogged_action.empty() || t.db == options_.checkpoint_schema) continue;
      if (!t.table.empty() && !rules_.NamesOurs(t.db, t.table)) continue;
      found.try_emplace(rules_.DdlKey(t.db, t.table),
                        DdlAhead{absl::StrCat(reader->position().file, ":",
                                              reader->position().offset),
                                 t.redefines, t.appears});
    }
  }
  if (stopping_) return absl::CancelledError("stopping");
  return found;
}

}  // namespace binrelay::apply
