// TableMove's cutover: the source's tables locked (bounded), the pipeline
// advanced to the source's position under the lock, AUTO_INCREMENT carried,
// the source tables renamed away, unlocked; retried within limits.
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

absl::Status TableMove::Cutover() {
  // Unavailable: not possible now (the source busy, the pipeline behind);
  // anything else ends the move.
  RetryPolicy policy;
  policy.retryable = [](const absl::Status& s) { return absl::IsUnavailable(s); };
  policy.wait = [](int, const absl::Status&) { return absl::Seconds(5); };
  policy.max_attempts = static_cast<int>(std::max<size_t>(1, options_.cutover_attempts));
  RetryResult r = RunWithRetries(
      policy, [this](absl::Duration d) { return Sleep(d); }, [this] { return TryCutover(); },
      [&](int attempt, const absl::Status& s) {
        spdlog::warn("move {}: cutover attempt {} of {} not possible now, the source's tables "
                     "are unlocked; retrying in 5 s: {}",
                     name(), attempt, options_.cutover_attempts, SV(s.message()));
      });
  if (!r.exhausted) return r.status;
  return absl::DeadlineExceededError(absl::StrCat(
      "move ", name(), ": cutover failed ", r.attempts, " times (cutover_attempts), the last: ",
      r.status.message(), "; the source's tables are unlocked and the move keeps its "
      "checkpoint: run it again when the source is quieter, or raise cutover_timeout or "
      "cutover_lock_wait"));
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
    absl::MutexLock l(&mu_);
    ++status_.cutover_attempts;
  }
  BR_RETURN_IF_ERROR(WaitCaughtUp(absl::Seconds(60)));
  // The pipeline keeps applying while LOCK TABLES waits; once the tables are
  // locked at `at`, any transaction boundary at or after it is as good as
  // `at` itself for them (AdvanceTo's or_after).
  ResumeOnExit resume(pipeline_.get());
  const absl::Duration limit = absl::FromChrono(options_.cutover_timeout);
  BR_ASSIGN_OR_RETURN(std::unique_ptr<protocol::ClientConnection> conn,
                      protocol::ClientConnection::Connect(SourceConnect()));
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
  // The source's last changes, stored, reach the pipeline at once rather
  // than at the store's next interval sync (a move's is 100 ms): the lock
  // is held until they are applied.
  store_->SyncPromptlyFor(limit);
  auto unlock = [&] {
    absl::Status unlocked = lock.Query("UNLOCK TABLES").status();
    if (unlocked.ok()) return;
    // The session may still hold the lock: end it from another one.
    absl::Status killed = absl::UnavailableError("no connection id");
    if (!lock_id.empty()) {
      if (auto other = protocol::ClientConnection::Connect(SourceConnect()); other.ok()) {
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
