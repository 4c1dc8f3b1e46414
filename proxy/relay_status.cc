#include "proxy/relay_status.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "protocol/json_writer.h"

namespace binrelay::proxy {
namespace {

void Key(std::string* out, const char* key) {
  if (out->back() != '{') out->push_back(',');
  protocol::AppendJsonString(key, out);
  out->push_back(':');
}
void Str(std::string* out, const char* key, const std::string& v) {
  Key(out, key);
  protocol::AppendJsonString(v, out);
}
void Num(std::string* out, const char* key, uint64_t v) {
  Key(out, key);
  absl::StrAppend(out, v);
}
void Dbl(std::string* out, const char* key, double v) {
  Key(out, key);
  absl::StrAppend(out, absl::StrFormat("%.3f", v));
}

// Prometheus label values escape backslash, quote and newline.
std::string Label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

void Metric(std::string* out, const char* name, const char* type, const char* help,
            const std::string& value) {
  absl::StrAppend(out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n", name, " ",
                  value, "\n");
}

}  // namespace

std::string RenderStatusJson(const RelayStatus& s) {
  std::string out = "{";
  Str(&out, "upstream_state", s.upstream_state);
  Str(&out, "source", s.source);
  Str(&out, "received_file", s.received_file);
  Num(&out, "received_offset", s.received_offset);
  Str(&out, "stored_file", s.stored_file);
  Num(&out, "stored_offset", s.stored_offset);
  Dbl(&out, "seconds_behind_source", s.seconds_behind_source);
  Num(&out, "events_received", s.events_received);
  Num(&out, "bytes_received", s.bytes_received);
  Num(&out, "stored_bytes", s.stored_bytes);
  Num(&out, "stored_files", s.stored_files);
  Num(&out, "reconnects", s.reconnects);
  Num(&out, "purges", s.purges);
  Str(&out, "last_error", s.last_error);
  Key(&out, "consumers");
  out.push_back('[');
  for (size_t i = 0; i < s.consumers.size(); ++i) {
    const ConsumerStatus& c = s.consumers[i];
    if (i > 0) out.push_back(',');
    out.push_back('{');
    Str(&out, "name", c.name);
    Str(&out, "file", c.file);
    Num(&out, "offset", c.offset);
    Num(&out, "lag_bytes", c.lag_bytes);
    Dbl(&out, "lag_seconds", c.lag_seconds);
    out.push_back('}');
  }
  out.push_back(']');
  Key(&out, "pipelines");
  out.push_back('[');
  for (size_t i = 0; i < s.pipelines.size(); ++i) {
    const ApplyStatus& p = s.pipelines[i];
    if (i > 0) out.push_back(',');
    out.push_back('{');
    Str(&out, "name", p.name);
    Str(&out, "state", p.state);
    Str(&out, "last_error", p.last_error);
    Str(&out, "target", p.target);
    Str(&out, "tables", p.tables);
    Str(&out, "flushed_file", p.flushed_file);
    Num(&out, "flushed_offset", p.flushed_offset);
    Str(&out, "read_file", p.read_file);
    Num(&out, "read_offset", p.read_offset);
    Dbl(&out, "lag_seconds", p.lag_seconds);
    Num(&out, "lag_bytes", p.lag_bytes);
    Num(&out, "buffered_keys", p.buffered_keys);
    Num(&out, "buffered_bytes", p.buffered_bytes);
    Num(&out, "parked", p.parked);
    Num(&out, "target_warnings", p.target_warnings);
    Num(&out, "xa_held", p.xa_held);
    Num(&out, "deferred", p.deferred);
    Num(&out, "changes_read", p.changes_read);
    Num(&out, "rows_written", p.rows_written);
    Dbl(&out, "dedup_ratio", p.dedup_ratio());
    Num(&out, "drains", p.drains);
    Dbl(&out, "last_flush_seconds", p.last_flush_seconds);
    Num(&out, "concurrency", p.concurrency);
    Num(&out, "batch_rows", p.batch_rows);
    Str(&out, "upsert_protocol", p.upsert_protocol);
    Key(&out, "retries");
    out.push_back('{');
    for (const auto& [code, n] : p.retries) {
      if (out.back() != '{') out.push_back(',');
      absl::StrAppend(&out, "\"", code, "\":", n);
    }
    out.push_back('}');
    out.push_back('}');
  }
  out.push_back(']');
  Key(&out, "moves");
  out.push_back('[');
  for (size_t i = 0; i < s.moves.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += RenderMoveJson(s.moves[i]);
  }
  out += "]}\n";
  return out;
}

std::string RenderMoveJson(const MoveProgress& m) {
  std::string out = "{";
  Str(&out, "name", m.name);
  Str(&out, "phase", m.phase);
  Str(&out, "error", m.error);
  Str(&out, "tables", m.tables);
  Str(&out, "cutover", m.cutover);
  Num(&out, "rows_estimate", m.rows_estimate);
  Num(&out, "rows_copied", m.rows_copied);
  Num(&out, "chunks_copied", m.chunks_copied);
  Num(&out, "rows_left_to_checksum", m.rows_left_to_checksum);
  Dbl(&out, "copy_rows_per_second", m.copy_rows_per_second);
  Dbl(&out, "eta_seconds", m.eta_seconds);
  Num(&out, "changes_dropped", m.changes_dropped);
  Num(&out, "chunks_checked", m.chunks_checked);
  Num(&out, "chunks_total", m.chunks_total);
  Num(&out, "chunks_differing", m.chunks_differing);
  Num(&out, "chunks_repaired", m.chunks_repaired);
  Num(&out, "cutover_attempts", m.cutover_attempts);
  Dbl(&out, "apply_lag_seconds", m.apply_lag_seconds);
  out.push_back('}');
  return out;
}

std::string SummarizePipelines(const RelayStatus& s) {
  std::string out;
  for (const ApplyStatus& p : s.pipelines) {
    if (!out.empty()) out.append("; ");
    absl::StrAppend(&out, p.name, ": ", p.state, ", flushed ", p.flushed_file, ":",
                    p.flushed_offset, ", lag ", absl::StrFormat("%.1f", p.lag_seconds), " s");
    if (!p.last_error.empty()) absl::StrAppend(&out, ", last error: ", p.last_error);
  }
  return out;
}

std::string RenderPrometheus(const RelayStatus& s) {
  std::string out;
  Metric(&out, "binrelay_events_received_total", "counter",
         "Events received from the source.", absl::StrCat(s.events_received));
  Metric(&out, "binrelay_bytes_received_total", "counter", "Bytes received from the source.",
         absl::StrCat(s.bytes_received));
  Metric(&out, "binrelay_stored_bytes", "gauge", "Bytes of binlog held in the local store.",
         absl::StrCat(s.stored_bytes));
  Metric(&out, "binrelay_stored_files", "gauge", "Binlog files held in the local store.",
         absl::StrCat(s.stored_files));
  Metric(&out, "binrelay_seconds_behind_source", "gauge",
         "Age of the last event received, relative to the source's clock.",
         absl::StrFormat("%.3f", s.seconds_behind_source));
  Metric(&out, "binrelay_reconnects_total", "counter", "Reconnections to the source.",
         absl::StrCat(s.reconnects));
  Metric(&out, "binrelay_purges_total", "counter", "Binlog files purged by retention.",
         absl::StrCat(s.purges));
  Metric(&out, "binrelay_upstream_up", "gauge", "1 while streaming from the source.",
         s.upstream_state == "streaming" ? "1" : "0");
  Metric(&out, "binrelay_consumers", "gauge", "Connected or registered consumers.",
         absl::StrCat(s.consumers.size()));
  absl::StrAppend(&out,
                  "# HELP binrelay_consumer_lag_bytes Bytes a consumer is behind the store.\n"
                  "# TYPE binrelay_consumer_lag_bytes gauge\n");
  for (const ConsumerStatus& c : s.consumers) {
    absl::StrAppend(&out, "binrelay_consumer_lag_bytes{consumer=\"", Label(c.name), "\"} ",
                    c.lag_bytes, "\n");
  }
  absl::StrAppend(&out,
                  "# HELP binrelay_consumer_lag_seconds Seconds a consumer is behind the store.\n"
                  "# TYPE binrelay_consumer_lag_seconds gauge\n");
  for (const ConsumerStatus& c : s.consumers) {
    absl::StrAppend(&out, "binrelay_consumer_lag_seconds{consumer=\"", Label(c.name), "\"} ",
                    absl::StrFormat("%.3f", c.lag_seconds), "\n");
  }
  struct Gauge {
    const char* name;
    const char* type;
    const char* help;
    std::function<std::string(const ApplyStatus&)> value;
  };
  const Gauge gauges[] = {
      {"binrelay_apply_up", "gauge", "1 while an apply pipeline runs (not stopped by an error).",
       [](const ApplyStatus& p) { return std::string(p.state == "error" ? "0" : "1"); }},
      {"binrelay_apply_lag_seconds", "gauge", "Age of the last flushed transaction while behind.",
       [](const ApplyStatus& p) { return absl::StrFormat("%.3f", p.lag_seconds); }},
      {"binrelay_apply_lag_bytes", "gauge", "Stored bytes not yet flushed to the target.",
       [](const ApplyStatus& p) { return absl::StrCat(p.lag_bytes); }},
      {"binrelay_apply_buffered_keys", "gauge", "Rows buffered or in flight to the target.",
       [](const ApplyStatus& p) { return absl::StrCat(p.buffered_keys); }},
      {"binrelay_apply_buffered_bytes", "gauge", "Bytes buffered or in flight to the target.",
       [](const ApplyStatus& p) { return absl::StrCat(p.buffered_bytes); }},
      {"binrelay_apply_parked_total", "counter", "Times reading waited on soft_limit_bytes.",
       [](const ApplyStatus& p) { return absl::StrCat(p.parked); }},
      {"binrelay_apply_target_warnings_total", "counter",
       "Statements or bulk commands the target ran with warnings (see the log).",
       [](const ApplyStatus& p) { return absl::StrCat(p.target_warnings); }},
      {"binrelay_apply_xa_held", "gauge",
       "Prepared XA transactions not yet decided on the source whose rows a pipeline holds.",
       [](const ApplyStatus& p) { return absl::StrCat(p.xa_held); }},
      {"binrelay_apply_deferred", "gauge",
       "Row changes held back while a move's copier copies their chunk (the checkpoint waits "
       "before them).",
       [](const ApplyStatus& p) { return absl::StrCat(p.deferred); }},
      {"binrelay_apply_changes_read_total", "counter", "Row changes read from the store.",
       [](const ApplyStatus& p) { return absl::StrCat(p.changes_read); }},
      {"binrelay_apply_rows_written_total", "counter", "Rows written to the target.",
       [](const ApplyStatus& p) { return absl::StrCat(p.rows_written); }},
      {"binrelay_apply_dedup_ratio", "gauge", "Row changes read per row written.",
       [](const ApplyStatus& p) { return absl::StrFormat("%.3f", p.dedup_ratio()); }},
      {"binrelay_apply_drains_total", "counter", "Completed drains (checkpoints written).",
       [](const ApplyStatus& p) { return absl::StrCat(p.drains); }},
      {"binrelay_apply_flush_seconds", "gauge", "Duration of the last drain.",
       [](const ApplyStatus& p) { return absl::StrFormat("%.3f", p.last_flush_seconds); }},
      {"binrelay_apply_concurrency", "gauge", "Target connections a drain uses now.",
       [](const ApplyStatus& p) { return absl::StrCat(p.concurrency); }},
      {"binrelay_apply_batch_rows", "gauge", "Rows per statement now.",
       [](const ApplyStatus& p) { return absl::StrCat(p.batch_rows); }},
  };
  for (const Gauge& g : gauges) {
    absl::StrAppend(&out, "# HELP ", g.name, " ", g.help, "\n# TYPE ", g.name, " ", g.type, "\n");
    for (const ApplyStatus& p : s.pipelines) {
      absl::StrAppend(&out, g.name, "{pipeline=\"", Label(p.name), "\"} ", g.value(p), "\n");
    }
  }
  struct MoveGauge {
    const char* name;
    const char* help;
    std::function<std::string(const MoveProgress&)> value;
  };
  const MoveGauge move_gauges[] = {
      {"binrelay_move_rows_copied", "Rows a move's copier has copied.",
       [](const MoveProgress& m) { return absl::StrCat(m.rows_copied); }},
      {"binrelay_move_rows_left_to_checksum",
       "Rows a move's copy left out on a UNIQUE value still taken on the target; its checksum "
       "repairs them.",
       [](const MoveProgress& m) { return absl::StrCat(m.rows_left_to_checksum); }},
      {"binrelay_move_rows_estimate", "Rows of a move's tables (information_schema estimate).",
       [](const MoveProgress& m) { return absl::StrCat(m.rows_estimate); }},
      {"binrelay_move_chunks_checked", "Chunks a move's checksum has compared.",
       [](const MoveProgress& m) { return absl::StrCat(m.chunks_checked); }},
      {"binrelay_move_chunks_repaired", "Chunks a move's checksum found different and repaired.",
       [](const MoveProgress& m) { return absl::StrCat(m.chunks_repaired); }},
      {"binrelay_move_done", "1 once a move has cut over.",
       [](const MoveProgress& m) { return std::string(m.phase == "done" ? "1" : "0"); }},
  };
  for (const MoveGauge& g : move_gauges) {
    absl::StrAppend(&out, "# HELP ", g.name, " ", g.help, "\n# TYPE ", g.name, " gauge\n");
    for (const MoveProgress& m : s.moves) {
      absl::StrAppend(&out, g.name, "{move=\"", Label(m.name), "\"} ", g.value(m), "\n");
    }
  }
  absl::StrAppend(&out,
                  "# HELP binrelay_apply_retries_total Statements retried, by server error code "
                  "(2013: connection lost).\n# TYPE binrelay_apply_retries_total counter\n");
  for (const ApplyStatus& p : s.pipelines) {
    for (const auto& [code, n] : p.retries) {
      absl::StrAppend(&out, "binrelay_apply_retries_total{pipeline=\"", Label(p.name),
                      "\",code=\"", code, "\"} ", n, "\n");
    }
  }
  return out;
}

}  // namespace binrelay::proxy
