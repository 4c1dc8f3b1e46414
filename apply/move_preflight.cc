#include "apply/move_preflight.h"

#include <sys/statvfs.h>

#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "apply/key_range_chunker.h"
#include "apply/secondary_indexes.h"
#include "apply/sql_literal.h"
#include "protocol/status_macros.h"

namespace binrelay::apply {
namespace {

std::string Qualified(std::string_view db, std::string_view table) {
  std::string out;
  AppendIdentifier(db, &out);
  out.push_back('.');
  AppendIdentifier(table, &out);
  return out;
}

std::string Duration(uint64_t seconds) {
  if (seconds >= 2 * 86400) return absl::StrCat(seconds / 86400, " days");
  if (seconds >= 2 * 3600) return absl::StrCat(seconds / 3600, " hours");
  if (seconds >= 120) return absl::StrCat(seconds / 60, " minutes");
  return absl::StrCat(seconds, " seconds");
}

// The source's binlog retention in seconds (0: none configured).
absl::StatusOr<uint64_t> BinlogRetentionSeconds(replication::SqlSource& source) {
  for (const char* var : {"binlog_expire_logs_seconds", "expire_logs_days"}) {
    BR_ASSIGN_OR_RETURN(std::optional<std::string> v,
                        replication::QueryOptionalVariable(source, var));
    if (!v) continue;
    double value = 0;
    if (!absl::SimpleAtod(*v, &value) || value <= 0) continue;
    return static_cast<uint64_t>(var[0] == 'e' ? value * 86400 : value);
  }
  return 0;
}

}  // namespace

absl::StatusOr<MovePlan> MovePreflight(replication::SqlSource& source,
                                       replication::SqlSource& target,
                                       const std::vector<MoveTableName>& tables,
                                       uint64_t copy_bytes_per_second) {
  MovePlan plan;
  std::vector<std::string> problems;
  for (const MoveTableName& t : tables) {
    const std::string src_name = absl::StrCat(t.db, ".", t.table);
    const std::string dst_name = absl::StrCat(target.Peer(), " table ", t.target_db, ".", t.table);
    auto shape = LoadTableShape(source, t.db, t.table);
    if (!shape.ok()) {
      problems.push_back(absl::IsNotFound(shape.status())
                             ? absl::StrCat(src_name, " does not exist on the source ",
                                            source.Peer())
                             : std::string(shape.status().message()));
      continue;
    }
    MoveTablePlan p;
    p.name = t;
    p.source = *shape;
    // A key the copier can range over (this also refuses a missing one).
    if (auto chunker = KeyRangeChunker::Create(*shape); !chunker.ok()) {
      problems.push_back(absl::StrCat(
          chunker.status().message(),
          shape->primary_key.empty() ? "; add one (ALTER TABLE ... ADD PRIMARY KEY)" : ""));
    }
    auto on_target = LoadTableShape(target, t.target_db, t.table);
    if (!on_target.ok()) {
      if (!absl::IsNotFound(on_target.status())) {
        problems.push_back(std::string(on_target.status().message()));
        continue;
      }
      p.create_on_target = true;
    } else {
      if (absl::Status same = CheckTargetShape(*shape, *on_target, dst_name); !same.ok()) {
        problems.push_back(absl::StrCat(same.message(),
                                        " (a move copies into an absent table, which it "
                                        "creates, or an empty identical one)"));
      }
      // MySQL's JSON column stores a document, not its text (keys sorted,
      // spacing and escapes rewritten): MariaDB's JSON text copied into it
      // reads back otherwise, and the checksum, which compares text, could
      // never agree.
      for (size_t i = 0; i < shape->columns.size() && i < on_target->columns.size(); ++i) {
        if (on_target->columns[i].data_type == "json" && shape->columns[i].data_type != "json") {
          problems.push_back(absl::StrCat(
              dst_name, " column `", on_target->columns[i].name, "` is MySQL's JSON but the "
              "source's is ", shape->columns[i].column_type, ": MySQL rewrites the text, so the "
              "move's checksum cannot compare them; make it LONGTEXT for the move (the table "
              "the move creates has it so) and ALTER it to JSON after the cutover"));
        }
      }
      auto any = replication::QueryValue(
          target, absl::StrCat("SELECT 1 FROM ", Qualified(t.target_db, t.table), " LIMIT 1"));
      if (!any.ok()) {
        problems.push_back(std::string(any.status().message()));
      } else if (any->has_value()) {
        problems.push_back(absl::StrCat(dst_name, " already holds rows; a move copies into an "
                                        "empty table: empty or drop it first"));
      }
    }
    auto size = source.Query(absl::StrCat(
        "SELECT TABLE_ROWS, DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES WHERE "
        "TABLE_SCHEMA = ",
        [&] {
          std::string q;
          AppendQuotedString(t.db, &q);
          return q;
        }(),
        " AND TABLE_NAME = ",
        [&] {
          std::string q;
          AppendQuotedString(t.table, &q);
          return q;
        }()));
    if (size.ok() && !size->empty() && (*size)[0].size() == 2) {
      if ((*size)[0][0]) (void)absl::SimpleAtoi(*(*size)[0][0], &p.approx_rows);
      if ((*size)[0][1]) (void)absl::SimpleAtoi(*(*size)[0][1], &p.approx_bytes);
    }
    plan.approx_bytes += p.approx_bytes;
    plan.tables.push_back(std::move(p));
  }
  if (!problems.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("binrelay move cannot start: ", absl::StrJoin(problems, "; ")));
  }
  BR_ASSIGN_OR_RETURN(uint64_t retention, BinlogRetentionSeconds(source));
  const uint64_t estimate = plan.approx_bytes / std::max<uint64_t>(1, copy_bytes_per_second);
  if (retention > 0 && estimate > retention) {
    plan.warnings.push_back(absl::StrCat(
        "the source ", source.Peer(), " keeps binlogs for ", Duration(retention),
        " and this move may take about ", Duration(estimate),
        " to copy; that is fine: binrelay's store keeps every binlog byte the move still "
        "needs, whatever the source purges"));
  }
  return plan;
}

absl::StatusOr<std::string> ShowCreateTable(replication::SqlSource& source, const std::string& db,
                                            const std::string& table) {
  BR_ASSIGN_OR_RETURN(std::vector<replication::SqlRow> rows,
                      source.Query(absl::StrCat("SHOW CREATE TABLE ", Qualified(db, table))));
  if (rows.empty() || rows[0].size() < 2 || !rows[0][1]) {
    return absl::InternalError(absl::StrCat("SHOW CREATE TABLE ", db, ".", table, " on ",
                                            source.Peer(), " returned no statement"));
  }
  std::string ddl = *rows[0][1];
  if (!absl::StartsWith(ddl, "CREATE TABLE ")) {
    return absl::FailedPreconditionError(absl::StrCat(
        db, ".", table, " is not a plain table (SHOW CREATE TABLE: ", ddl.substr(0, 60),
        "); binrelay move copies base tables only"));
  }
  return ddl;
}

absl::Status CreateTargetTable(replication::SqlSource& source, replication::SqlSource& target,
                               const MoveTableName& t, bool defer_indexes) {
  BR_ASSIGN_OR_RETURN(std::string ddl, ShowCreateTable(source, t.db, t.table));
  if (defer_indexes) ddl = WithoutDeferrableIndexes(ddl);
  // "CREATE TABLE `t` (...": the table name is unqualified; put it in the
  // target's database.
  const std::string head = "CREATE TABLE ";
  std::string name;
  AppendIdentifier(t.table, &name);
  if (ddl.compare(head.size(), name.size(), name) != 0) {
    return absl::InternalError(absl::StrCat("SHOW CREATE TABLE ", t.db, ".", t.table,
                                            " did not start with its name: ", ddl.substr(0, 80)));
  }
  // Foreign keys may name tables the target does not hold (yet): the move's
  // session has foreign_key_checks off (move_session.h).
  const std::string create = absl::StrCat(head,
                                          Qualified(t.target_db, t.table),
                                          ddl.substr(head.size() + name.size()));
  BR_RETURN_IF_ERROR(target.Query(absl::StrCat("CREATE DATABASE IF NOT EXISTS ",
                                               [&] {
                                                 std::string q;
                                                 AppendIdentifier(t.target_db, &q);
                                                 return q;
                                               }()))
                         .status());
  return target.Query(create).status();
}

namespace {

// The current user's privileges on db.table (global, database and table
// level), upper-case; nullopt when they cannot be listed (roles, no
// access to information_schema's views).
std::optional<std::set<std::string>> PrivilegesOn(replication::SqlSource& server,
                                                  const std::string& db,
                                                  const std::string& table) {
  auto role = server.Query("SELECT CURRENT_ROLE()");
  if (!role.ok() || (!role->empty() && (*role)[0][0] && *(*role)[0][0] != "NONE")) {
    return std::nullopt;
  }
  // GRANTEE reads 'user'@'host'; CURRENT_USER() user@host.
  const std::string grantee =
      "CONCAT(CHAR(39), SUBSTRING_INDEX(CURRENT_USER(), '@', 1), CHAR(39), '@', CHAR(39), "
      "SUBSTRING_INDEX(CURRENT_USER(), '@', -1), CHAR(39))";
  std::string q_db, q_table;
  AppendQuotedString(db, &q_db);
  AppendQuotedString(table, &q_table);
  std::string sql = absl::StrCat(
      "SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = ", grantee,
      " UNION SELECT PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = ",
      grantee, " AND TABLE_SCHEMA = ", q_db);
  if (!table.empty()) {
    absl::StrAppend(&sql,
                    " UNION SELECT PRIVILEGE_TYPE FROM information_schema.TABLE_PRIVILEGES "
                    "WHERE GRANTEE = ", grantee, " AND TABLE_SCHEMA = ", q_db,
                    " AND TABLE_NAME = ", q_table);
  }
  auto rows = server.Query(sql);
  if (!rows.ok()) return std::nullopt;
  std::set<std::string> out;
  for (const auto& r : *rows) {
    if (!r.empty() && r[0]) out.insert(*r[0]);
  }
  if (out.empty()) return std::nullopt;  // nothing listed: not ours to judge
  return out;
}

void Require(replication::SqlSource& server, const std::string& db, const std::string& table,
             const std::vector<const char*>& needed, const std::string& why,
             std::vector<std::string>* problems) {
  std::optional<std::set<std::string>> have = PrivilegesOn(server, db, table);
  if (!have) return;
  std::vector<std::string> missing;
  for (const char* p : needed) {
    if (!have->contains(p)) missing.push_back(p);
  }
  if (missing.empty()) return;
  const std::string on = table.empty() ? absl::StrCat(db, ".*") : absl::StrCat(db, ".", table);
  problems->push_back(absl::StrCat("the account on ", server.Peer(), " lacks ",
                                   absl::StrJoin(missing, ", "), " on ", on, " (", why,
                                   "): GRANT ", absl::StrJoin(missing, ", "), " ON ", on,
                                   " TO it"));
}

}  // namespace

std::vector<std::string> MovePrivilegeProblems(replication::SqlSource& source,
                                               replication::SqlSource& target,
                                               const std::vector<MoveTableName>& tables,
                                               bool cutover_locks, bool cutover_renames,
                                               bool adds_indexes,
                                               const std::string& checkpoint_schema,
                                               bool snapshot_locks) {
  std::vector<std::string> problems;
  std::set<std::string> target_dbs;
  for (const MoveTableName& t : tables) {
    Require(source, t.db, t.table, {"SELECT"}, "to copy and compare it", &problems);
    if (snapshot_locks) {
      Require(source, t.db, t.table, {"LOCK TABLES"},
              "the checksum's snapshot locks it for a moment: MySQL reports no binlog position "
              "for a snapshot", &problems);
    } else if (cutover_locks) {
      Require(source, t.db, t.table, {"LOCK TABLES"}, "cutover locks it", &problems);
    }
    if (cutover_renames) {
      Require(source, t.db, t.table, {"ALTER", "DROP", "CREATE", "INSERT"},
              "cutover renames it to <table>_old", &problems);
    }
    target_dbs.insert(t.target_db);
  }
  target_dbs.insert(checkpoint_schema);
  for (const std::string& db : target_dbs) {
    if (db == checkpoint_schema) {
      Require(target, db, "", {"CREATE", "SELECT", "INSERT", "DELETE"}, "the move's checkpoints",
              &problems);
    } else if (adds_indexes) {
      Require(target, db, "", {"ALTER", "CREATE", "SELECT", "INSERT", "DELETE"},
              "the moved tables and their secondary indexes (added after the copy)", &problems);
    } else {
      Require(target, db, "", {"CREATE", "SELECT", "INSERT", "DELETE"}, "the moved tables",
              &problems);
    }
  }
  return problems;
}

absl::StatusOr<std::optional<std::string>> StoreSpaceProblem(
    replication::SqlSource& source, const std::string& store_dir, uint64_t copy_bytes,
    uint64_t copy_bytes_per_second, absl::Duration sample, uint64_t* rate) {
  // The source's average since it started (MariaDB's Binlog_bytes_written
  // over Uptime): a move runs for hours, so its long-run rate says more than
  // any short sample, and reading it costs the move no wait.
  uint64_t per_second = 0;
  bool averaged = false;
  auto status = source.Query(
      "SHOW GLOBAL STATUS WHERE Variable_name IN ('Binlog_bytes_written', 'Uptime')");
  if (status.ok()) {
    uint64_t bytes = 0, uptime = 0;
    int found = 0;
    for (const auto& r : *status) {
      if (r.size() < 2 || !r[0] || !r[1]) continue;
      uint64_t* into = absl::EqualsIgnoreCase(*r[0], "Uptime") ? &uptime : &bytes;
      if (absl::SimpleAtoi(*r[1], into)) ++found;
    }
    if (found == 2) {
      // Up for less than a second (Uptime 0): what it wrote, per second.
      per_second = bytes / std::max<uint64_t>(uptime, 1);
      averaged = true;
    }
  }
  {
    // And the rate now, over `sample`: a source busier than its average
    // (a quiet start, then a busy day) must not be underestimated.
    // Bytes written to the binlog, across rotations.
    auto total = [&]() -> absl::StatusOr<uint64_t> {
      BR_ASSIGN_OR_RETURN(auto logs, source.Query("SHOW BINARY LOGS"));
      uint64_t sum = 0;
      for (const auto& r : logs) {
        uint64_t n = 0;
        if (r.size() >= 2 && r[1] && absl::SimpleAtoi(*r[1], &n)) sum += n;
      }
      return sum;
    };
    BR_ASSIGN_OR_RETURN(uint64_t before, total());
    std::this_thread::sleep_for(absl::ToChronoMilliseconds(sample));
    BR_ASSIGN_OR_RETURN(uint64_t after, total());
    // A purge between the samples can only make it look smaller; 0 then.
    const double secs = std::max(0.001, absl::ToDoubleSeconds(sample));
    const uint64_t now =
        after > before ? static_cast<uint64_t>(static_cast<double>(after - before) / secs) : 0;
    per_second = std::max(per_second, now);
  }
  if (rate != nullptr) *rate = per_second;
  const uint64_t duration = 2 * copy_bytes / std::max<uint64_t>(1, copy_bytes_per_second) + 60;
  const uint64_t need = per_second * duration;
  struct statvfs fs;
  if (::statvfs(store_dir.c_str(), &fs) != 0) return std::optional<std::string>();
  const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (need <= free_bytes) return std::optional<std::string>();
  return std::optional<std::string>(absl::StrCat(
      "the store directory ", store_dir, " has ", free_bytes >> 20, " MiB free, but the source ",
      source.Peer(), " writes about ", per_second >> 10, " KiB/s of binlog",
      averaged ? " (the higher of its average since it started and its rate now)" : "",
      " and this move may "
      "take about ", Duration(duration), ": about ", need >> 20, " MiB the store must keep; "
      "free space there or point [store] dir elsewhere"));
}

}  // namespace binrelay::apply
