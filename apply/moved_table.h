// TableMove::Table: the state of one table of a move (its plan, its copy
// gate, chunker and copier, its saved progress), shared by the move's
// parts (table_move*.cc). Internal to them.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "apply/copy_watermarks.h"
#include "apply/key_range_chunker.h"
#include "apply/move_checkpoint.h"
#include "apply/move_preflight.h"
#include "apply/range_copier.h"
#include "apply/sql_literal.h"
#include "apply/table_move.h"
#include "apply/table_shape.h"

namespace binrelay::apply {

// `db`.`table`, quoted.
inline std::string Qualified(std::string_view db, std::string_view table) {
  std::string out;
  AppendIdentifier(db, &out);
  out.push_back('.');
  AppendIdentifier(table, &out);
  return out;
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

struct TableMove::Table {
  MoveTablePlan plan;
  TableShape target;
  std::unique_ptr<TableCopyGate> gate;
  std::optional<KeyRangeChunker> chunker;
  std::optional<RangeCopier> copier;
  MoveTableProgress progress;  // as last saved on the target
  uint64_t chunk_rows = 1000;  // the copy's last size, the checksum's first
  // The copy's upper bounds in key order, each with the rows its range was
  // cut for; complete when this run cut the whole table (not a resumed
  // copy). The checksum then cuts its ranges from them rather than reading
  // the key again (an index dive per range: 0.3 s for 2M rows).
  struct Cut {
    KeyBound upper;
    uint64_t rows;
  };
  std::vector<Cut> copy_cuts;
  bool copy_cuts_complete = false;
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

  // The deferred secondary indexes built (StartIndexBuild or AddIndexesOf)
  // and how long that took, for the log.
  std::vector<std::string> indexes_added;
  absl::Duration index_build_took;
  // The build started once the checksum's last target sums are done
  // (StartIndexBuild), joined by JoinIndexBuild (before a repair or a later
  // table's checksum, in FinishIndexes, and when Run ends). Last: it is
  // destroyed (waited for) before the members its thread writes.
  std::future<absl::Status> index_build;
};

}  // namespace binrelay::apply
