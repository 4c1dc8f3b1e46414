// MovePreflight: the checks `binrelay move` runs on its tables before it
// writes anything, every problem reported at once with what to do about
// it (an operator fixes them in one go): each table exists on the source,
// has a primary key of a type the copier can range over, and is either
// absent on the target (it is then created from SHOW CREATE TABLE) or
// present, empty and identical there. The source's own requirements
// (binlog_format=ROW, FULL row images, privileges) are
// replication/preflight.h's. A source binlog retention shorter than the
// move's estimated duration is a warning, not an error: binrelay's store
// keeps every binlog byte the move still needs.
//
// Thread safety: functions over SqlSources, one caller each.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "apply/table_shape.h"
#include "replication/sql_source.h"

namespace binrelay::apply {

struct MoveTableName {
  std::string db;
  std::string table;
  std::string target_db;  // the source's db unless target_schema is set
};

struct MoveTablePlan {
  MoveTableName name;
  TableShape source;
  bool create_on_target = false;
  uint64_t approx_rows = 0;   // information_schema.TABLES estimates
  uint64_t approx_bytes = 0;
};

struct MovePlan {
  std::vector<MoveTablePlan> tables;
  std::vector<std::string> warnings;
  uint64_t approx_bytes = 0;
};

// The tables' plan, or FailedPrecondition listing every problem found.
// `copy_bytes_per_second` estimates the move's duration for the retention
// warning.
absl::StatusOr<MovePlan> MovePreflight(replication::SqlSource& source,
                                       replication::SqlSource& target,
                                       const std::vector<MoveTableName>& tables,
                                       uint64_t copy_bytes_per_second = 20 << 20);

// What the move's accounts may lack, one line each (empty: nothing):
// on the source SELECT on each table, LOCK TABLES if the cutover locks or
// `snapshot_locks` (a MySQL source: table_move.cc, MySqlSnapshotAt),
// ALTER, DROP, CREATE and INSERT if it renames (ALTER TABLE ... RENAME); on the
// target CREATE, SELECT, INSERT, DELETE on each table's database and on
// `checkpoint_schema`, and ALTER on each table's database if
// `adds_indexes` (secondary_indexes.h). Read from information_schema's *_PRIVILEGES views
// for the current user; an account using roles is not checked (its
// privileges are not listed there) and a failed read is not a problem.
std::vector<std::string> MovePrivilegeProblems(replication::SqlSource& source,
                                               replication::SqlSource& target,
                                               const std::vector<MoveTableName>& tables,
                                               bool cutover_locks, bool cutover_renames,
                                               bool adds_indexes,
                                               const std::string& checkpoint_schema,
                                               bool snapshot_locks = false);

// The store must hold every binlog byte the source writes while the move
// runs: the source's write rate (the higher of its average since it
// started, from Binlog_bytes_written and Uptime, and its binlogs' growth
// over `sample`) times the move's estimated duration (`copy_bytes` at
// `copy_bytes_per_second`, twice for the checksum, plus a minute), against
// the free space of `store_dir`. A problem line if it will not fit; `rate`
// gets the measured bytes per second.
absl::StatusOr<std::optional<std::string>> StoreSpaceProblem(
    replication::SqlSource& source, const std::string& store_dir, uint64_t copy_bytes,
    uint64_t copy_bytes_per_second, absl::Duration sample, uint64_t* rate = nullptr);

// The source's SHOW CREATE TABLE of db.table; FailedPrecondition for a
// view or anything else that is not a base table.
absl::StatusOr<std::string> ShowCreateTable(replication::SqlSource& source, const std::string& db,
                                            const std::string& table);

// Creates `t` on the target from the source's SHOW CREATE TABLE, in
// t.target_db (foreign keys included, as the source declares them);
// `defer_indexes`: without its plain secondary indexes, which the move adds
// after the copy (secondary_indexes.h).
absl::Status CreateTargetTable(replication::SqlSource& source, replication::SqlSource& target,
                               const MoveTableName& t, bool defer_indexes);

}  // namespace binrelay::apply
