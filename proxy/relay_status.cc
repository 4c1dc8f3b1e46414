#include "proxy/relay_status.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "protocol/json_writer.h"
#include "proxy/status_fields.h"

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

// Every field of `item` as JSON members, by its description.
template <class T>
void Fields(std::string* out, const std::vector<StatusField<T>>& fields, const T& item) {
  for (const StatusField<T>& f : fields) {
    const StatusValue v = f.value(item);
    if (const auto* text = std::get_if<std::string>(&v)) {
      Str(out, f.name, *text);
    } else if (const auto* n = std::get_if<uint64_t>(&v)) {
      Num(out, f.name, *n);
    } else {
      Dbl(out, f.name, std::get<double>(v));
    }
  }
}

// Each numeric field with a metric name, one sample per item labelled
// `label`="its name".
template <class T>
void Metrics(std::string* out, const std::vector<StatusField<T>>& fields,
             const std::vector<T>& items, const char* label) {
  for (const StatusField<T>& f : fields) {
    if (f.metric == nullptr) continue;
    absl::StrAppend(out, "# HELP ", f.metric, " ", f.help, "\n# TYPE ", f.metric, " ",
                    f.counter ? "counter" : "gauge", "\n");
    for (const T& item : items) {
      absl::StrAppend(out, f.metric, "{", label, "=\"", Label(item.name), "\"} ",
                      StatusValueText(f.value(item)), "\n");
    }
  }
}

}  // namespace

std::string SwitchTime(const RelayStatus& s) {
  if (s.last_source_switch == absl::InfinitePast()) return "";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S", s.last_source_switch, absl::UTCTimeZone());
}

std::string RenderStatusJson(const RelayStatus& s) {
  std::string out = "{";
  Str(&out, "upstream_state", std::string(replication::UpstreamStateName(s.upstream_state)));
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
  Num(&out, "source_switches", s.source_switches);
  Str(&out, "last_source_switch", SwitchTime(s));
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
    Fields(&out, ApplyStatusFields(), p);
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
  Fields(&out, MoveProgressFields(), m);
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
  Metric(&out, "binrelay_source_switches_total", "counter",
         "Servers binrelay followed by GTID after its first source (a failover).",
         absl::StrCat(s.source_switches));
  Metric(&out, "binrelay_last_source_switch_timestamp_seconds", "gauge",
         "Unix time of the last switch to another source (0: none).",
         absl::StrCat(s.last_source_switch == absl::InfinitePast()
                          ? 0
                          : absl::ToUnixSeconds(s.last_source_switch)));
  Metric(&out, "binrelay_purges_total", "counter", "Binlog files purged by retention.",
         absl::StrCat(s.purges));
  Metric(&out, "binrelay_upstream_up", "gauge", "1 while streaming from the source.",
         s.upstream_state == replication::UpstreamState::kStreaming ? "1" : "0");
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
  Metrics(&out, ApplyStatusFields(), s.pipelines, "pipeline");
  Metrics(&out, MoveProgressFields(), s.moves, "move");
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
