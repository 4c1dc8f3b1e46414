#include "proxy/status_fields.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace binrelay::proxy {

std::string StatusValueText(const StatusValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* n = std::get_if<uint64_t>(&v)) return absl::StrCat(*n);
  return absl::StrFormat("%.3f", std::get<double>(v));
}

const std::vector<StatusField<ApplyStatus>>& ApplyStatusFields() {
  using P = ApplyStatus;
  static const std::vector<StatusField<P>> fields = {
      {"name", nullptr, false, "", [](const P& p) -> StatusValue { return p.name; }},
      {"state", nullptr, false, "", [](const P& p) -> StatusValue { return p.state; }},
      {"up", "binrelay_apply_up", false,
       "1 while an apply pipeline runs (not stopped by an error).",
       [](const P& p) -> StatusValue { return uint64_t{p.failed ? 0u : 1u}; }},
      {"last_error", nullptr, false, "", [](const P& p) -> StatusValue { return p.last_error; }},
      {"target", nullptr, false, "", [](const P& p) -> StatusValue { return p.target; }},
      {"tables", nullptr, false, "", [](const P& p) -> StatusValue { return p.tables; }},
      {"flushed_file", nullptr, false, "",
       [](const P& p) -> StatusValue { return p.flushed_file; }},
      {"flushed_offset", nullptr, false, "",
       [](const P& p) -> StatusValue { return p.flushed_offset; }},
      {"read_file", nullptr, false, "", [](const P& p) -> StatusValue { return p.read_file; }},
      {"read_offset", nullptr, false, "",
       [](const P& p) -> StatusValue { return p.read_offset; }},
      {"lag_seconds", "binrelay_apply_lag_seconds", false,
       "Age of the last flushed transaction while behind.",
       [](const P& p) -> StatusValue { return p.lag_seconds; }},
      {"lag_bytes", "binrelay_apply_lag_bytes", false, "Stored bytes not yet flushed to the target.",
       [](const P& p) -> StatusValue { return p.lag_bytes; }},
      {"buffered_keys", "binrelay_apply_buffered_keys", false,
       "Rows buffered or in flight to the target.",
       [](const P& p) -> StatusValue { return p.buffered_keys; }},
      {"buffered_bytes", "binrelay_apply_buffered_bytes", false,
       "Bytes buffered or in flight to the target.",
       [](const P& p) -> StatusValue { return p.buffered_bytes; }},
      {"parked", "binrelay_apply_parked_total", true, "Times reading waited on soft_limit_bytes.",
       [](const P& p) -> StatusValue { return p.parked; }},
      {"target_warnings", "binrelay_apply_target_warnings_total", true,
       "Statements or bulk commands the target ran with warnings (see the log).",
       [](const P& p) -> StatusValue { return p.target_warnings; }},
      {"xa_held", "binrelay_apply_xa_held", false,
       "Prepared XA transactions not yet decided on the source whose rows a pipeline holds.",
       [](const P& p) -> StatusValue { return p.xa_held; }},
      {"deferred", "binrelay_apply_deferred", false,
       "Row changes held back while a move's copier copies their chunk (the checkpoint waits "
       "before them).",
       [](const P& p) -> StatusValue { return p.deferred; }},
      {"changes_read", "binrelay_apply_changes_read_total", true,
       "Row changes read from the store.",
       [](const P& p) -> StatusValue { return p.changes_read; }},
      {"rows_written", "binrelay_apply_rows_written_total", true, "Rows written to the target.",
       [](const P& p) -> StatusValue { return p.rows_written; }},
      {"dedup_ratio", "binrelay_apply_dedup_ratio", false, "Row changes read per row written.",
       [](const P& p) -> StatusValue { return p.dedup_ratio(); }},
      {"drains", "binrelay_apply_drains_total", true, "Completed drains (checkpoints written).",
       [](const P& p) -> StatusValue { return p.drains; }},
      {"last_flush_seconds", "binrelay_apply_flush_seconds", false, "Duration of the last drain.",
       [](const P& p) -> StatusValue { return p.last_flush_seconds; }},
      {"concurrency", "binrelay_apply_concurrency", false, "Target connections a drain uses now.",
       [](const P& p) -> StatusValue { return p.concurrency; }},
      {"batch_rows", "binrelay_apply_batch_rows", false, "Rows per statement now.",
       [](const P& p) -> StatusValue { return p.batch_rows; }},
      {"upsert_protocol", nullptr, false, "",
       [](const P& p) -> StatusValue { return p.upsert_protocol; }},
  };
  return fields;
}

const std::vector<StatusField<MoveProgress>>& MoveProgressFields() {
  using M = MoveProgress;
  static const std::vector<StatusField<M>> fields = {
      {"name", nullptr, false, "", [](const M& m) -> StatusValue { return m.name; }},
      {"phase", nullptr, false, "", [](const M& m) -> StatusValue { return m.phase; }},
      {"done", "binrelay_move_done", false, "1 once a move has cut over.",
       [](const M& m) -> StatusValue { return uint64_t{m.done ? 1u : 0u}; }},
      {"error", nullptr, false, "", [](const M& m) -> StatusValue { return m.error; }},
      {"tables", nullptr, false, "", [](const M& m) -> StatusValue { return m.tables; }},
      {"cutover", nullptr, false, "", [](const M& m) -> StatusValue { return m.cutover; }},
      {"rows_estimate", "binrelay_move_rows_estimate", false,
       "Rows of a move's tables (information_schema estimate).",
       [](const M& m) -> StatusValue { return m.rows_estimate; }},
      {"rows_copied", "binrelay_move_rows_copied", false, "Rows a move's copier has copied.",
       [](const M& m) -> StatusValue { return m.rows_copied; }},
      {"chunks_copied", "binrelay_move_chunks_copied", false, "Chunks a move's copier has copied.",
       [](const M& m) -> StatusValue { return m.chunks_copied; }},
      {"rows_left_to_checksum", "binrelay_move_rows_left_to_checksum", false,
       "Rows a move's copy left out on a UNIQUE value still taken on the target; its checksum "
       "repairs them.",
       [](const M& m) -> StatusValue { return m.rows_left_to_checksum; }},
      {"copy_rows_per_second", "binrelay_move_copy_rows_per_second", false,
       "Rows a move's copy writes per second (since the copy began).",
       [](const M& m) -> StatusValue { return m.copy_rows_per_second; }},
      {"eta_seconds", "binrelay_move_eta_seconds", false,
       "Copy phase: estimated seconds left at the current rate.",
       [](const M& m) -> StatusValue { return m.eta_seconds; }},
      {"changes_dropped", "binrelay_move_changes_dropped", false,
       "Changes the pipeline dropped because the copier reads their rows later.",
       [](const M& m) -> StatusValue { return m.changes_dropped; }},
      {"chunks_checked", "binrelay_move_chunks_checked", false,
       "Chunks a move's checksum has compared.",
       [](const M& m) -> StatusValue { return m.chunks_checked; }},
      {"chunks_total", "binrelay_move_chunks_total", false, "Chunks a move's checksum compares.",
       [](const M& m) -> StatusValue { return m.chunks_total; }},
      {"chunks_differing", "binrelay_move_chunks_differing", false,
       "Chunks a move's checksum found different.",
       [](const M& m) -> StatusValue { return m.chunks_differing; }},
      {"chunks_repaired", "binrelay_move_chunks_repaired", false,
       "Chunks a move's checksum found different and repaired.",
       [](const M& m) -> StatusValue { return m.chunks_repaired; }},
      {"cutover_attempts", "binrelay_move_cutover_attempts", false,
       "Cutovers a move has tried.",
       [](const M& m) -> StatusValue { return m.cutover_attempts; }},
      {"apply_lag_seconds", "binrelay_move_apply_lag_seconds", false,
       "Lag of the move's apply pipeline.",
       [](const M& m) -> StatusValue { return m.apply_lag_seconds; }},
  };
  return fields;
}

}  // namespace binrelay::proxy
