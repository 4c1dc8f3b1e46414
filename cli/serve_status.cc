#include "cli/serve_status.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace binrelay::cli {

absl::Status AskToCutOver(apply::TableMove& move) {
  const std::string& shown = move.name();
  const apply::MoveStatus st = move.Status();
  if (st.cutover != "manual") {
    return absl::FailedPreconditionError(absl::StrCat(
        "move '", shown, "' has cutover = ", st.cutover,
        st.cutover == "auto" ? ": it cuts over by itself once its copy is verified"
                             : ": it never locks or renames the source tables",
        "; CUTOVER MOVE is for cutover = manual"));
  }
  // Only when ready: a request remembered from the copy would cut
  // over unattended hours later.
  if (st.phase != apply::MovePhase::kReadyForCutover) {
    return absl::FailedPreconditionError(absl::StrCat(
        "move '", shown, "' is in phase ", apply::MovePhaseName(st.phase),
        st.error.empty() ? "" : absl::StrCat(" (", st.error, ")"),
        "; CUTOVER MOVE applies in phase 'ready for cutover'"));
  }
  move.RequestCutover();
  spdlog::info("move {}: cutover requested", shown);
  return absl::OkStatus();
}

absl::Status ServeStatus::RequestCutover(std::string_view name) {
  const std::string shown(name.substr(0, 64));
  const auto* moves = moves_.load();
  if (moves != nullptr) {
    for (const auto& m : *moves) {
      if (m->name() != name) continue;
      return AskToCutOver(*m);
    }
  }
  return absl::NotFoundError(absl::StrCat("no move named '", shown,
                                          "' runs in this binrelay (see /status \"moves\")"));
}

std::optional<std::string> ServeStatus::MoveCuttingOver() const {
  if (const auto* moves = moves_.load()) {
    for (const auto& m : *moves) {
      if (m->Status().phase == apply::MovePhase::kCutover) return m->name();
    }
  }
  return std::nullopt;
}

proxy::RelayStatus ServeStatus::Snapshot() const {
  proxy::RelayStatus s;
  // As CHANGE MASTER TO may have set it since start.
  const protocol::ConnectOptions connect = session_->connect_options();
  s.source = absl::StrCat(connect.host, ":", connect.port);
  s.source_host = connect.host;
  s.source_port = connect.port;
  s.source_user = connect.user;
  const replication::SourceInfo info = session_->source_info_snapshot();
  s.source_server_id = info.server_id;
  s.source_is_mariadb = info.version.empty() || info.is_mariadb;
  if (auto vars = session_->source_variables()) {
    for (const auto& [name, value] : *vars) {
      if (name == "server_uuid") s.source_uuid = value;
    }
  }
  s.source_tls = connect.tls != protocol::ConnectOptions::Tls::kDisabled;
  s.connect_retry_seconds =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                config_.upstream.max_backoff)
                                .count());
  s.started = started_;
  if (const proxy::Listener* l = listener_.load()) s.connections = l->open_connections();
  s.upstream_state = session_->state();
  const auto& st = session_->stats();
  s.events_received = st.events.load();
  s.bytes_received = st.bytes.load();
  s.reconnects = st.reconnects.load();
  s.source_switches = st.source_switches.load();
  s.last_source_switch = session_->last_switch_time();
  replication::BinlogPosition received = session_->received();
  s.received_file = received.file;
  s.received_offset = received.offset;
  replication::CommittedEnd end = store_->committed();
  s.stored_file = end.position.file;
  s.stored_offset = end.position.offset;
  s.stored_gtids = end.gtid_state();
  std::vector<replication::StoreFileEntry> files = store_->Files();
  for (const auto& f : files) {
    s.stored_bytes += f.size;
    ++s.stored_files;
  }
  s.last_error = session_->last_error();
  s.purges = store_->purged_files();
  const absl::Time now = absl::Now();
  for (const proxy::DumpInfo& d : dumps_->Snapshot()) {
    proxy::ConsumerStatus c;
    c.name = absl::StrCat("replica ", d.peer, " server_id ", d.server_id, " (", d.mode, ")");
    c.file = d.position.file;
    c.offset = d.position.offset;
    c.lag_bytes = BytesBetween(files, d.position, end.position);
    // How long it has not had everything: 0 while caught up.
    absl::Time since = d.caught_up == absl::Time() ? d.connected : d.caught_up;
    c.lag_seconds = c.lag_bytes == 0 ? 0 : absl::ToDoubleSeconds(now - since);
    s.consumers.push_back(std::move(c));
  }
  if (const auto* pipelines = pipelines_.load()) {
    for (const auto& p : *pipelines) AddPipeline(p->Status(), &s);
  }
  if (const auto* moves = moves_.load()) {
    for (const auto& m : *moves) {
      apply::MoveStatus ms = m->Status();
      s.moves.push_back(ToProgress(ms));
      if (ms.has_apply) AddPipeline(ms.apply, &s);
    }
  }
  return s;
}

proxy::MoveProgress ServeStatus::ToProgress(const apply::MoveStatus& ms) {
  proxy::MoveProgress m;
  m.name = ms.name;
  m.phase = std::string(apply::MovePhaseName(ms.phase));
  m.done = ms.phase == apply::MovePhase::kDone;
  m.error = ms.error;
  m.tables = ms.tables;
  m.cutover = ms.cutover;
  m.rows_estimate = ms.rows_estimate;
  m.rows_copied = ms.rows_copied;
  m.chunks_copied = ms.chunks_copied;
  m.rows_left_to_checksum = ms.rows_left_to_checksum;
  m.copy_rows_per_second = ms.copy_rows_per_second;
  if (ms.phase == apply::MovePhase::kCopy && ms.copy_rows_per_second > 0 && ms.rows_estimate > ms.rows_copied) {
    m.eta_seconds = static_cast<double>(ms.rows_estimate - ms.rows_copied) / ms.copy_rows_per_second;
  }
  m.changes_dropped = ms.changes_dropped;
  m.chunks_checked = ms.chunks_checked;
  m.chunks_total = ms.chunks_total;
  m.chunks_differing = ms.chunks_differing;
  m.chunks_repaired = ms.chunks_repaired;
  m.cutover_attempts = ms.cutover_attempts;
  m.apply_lag_seconds = ms.apply.lag_seconds;
  return m;
}

void ServeStatus::AddPipeline(const apply::PipelineStatus& ps, proxy::RelayStatus* out) {
  proxy::RelayStatus& s = *out;
  proxy::ApplyStatus a;
  a.name = ps.name;
  a.state = ps.StateText();
  a.failed = ps.state == apply::PipelineState::kError;
  a.last_error = ps.last_error;
  a.target = ps.target;
  a.tables = ps.tables;
  a.flushed_file = ps.flushed.file;
  a.flushed_offset = ps.flushed.offset;
  a.read_file = ps.read.file;
  a.read_offset = ps.read.offset;
  a.lag_seconds = ps.lag_seconds;
  a.lag_bytes = ps.lag_bytes;
  a.buffered_keys = ps.buffered_keys;
  a.buffered_bytes = ps.buffered_bytes;
  a.parked = ps.parked;
  a.target_warnings = ps.target_warnings;
  a.xa_held = ps.xa_held;
  a.deferred = ps.deferred;
  a.upsert_protocol = ps.upsert_protocol;
  a.changes_read = ps.changes_read;
  a.rows_written = ps.rows_written;
  a.drains = ps.drains;
  a.last_flush_seconds = ps.last_flush_seconds;
  a.concurrency = ps.concurrency;
  a.batch_rows = ps.batch_rows;
  a.retries.assign(ps.retries.begin(), ps.retries.end());
  // A pipeline is a consumer of the store like a replica: it holds a
  // pin at its flushed position, listed beside the dumps.
  proxy::ConsumerStatus c;
  c.name = absl::StrCat("apply pipeline ", ps.name);
  c.file = ps.flushed.file;
  c.offset = ps.flushed.offset;
  c.lag_bytes = ps.lag_bytes;
  c.lag_seconds = ps.lag_seconds;
  s.consumers.push_back(std::move(c));
  s.pipelines.push_back(std::move(a));
}

uint64_t ServeStatus::BytesBetween(const std::vector<replication::StoreFileEntry>& files,
                                   const replication::BinlogPosition& from,
                                   const replication::BinlogPosition& to) {
  if (from.file == to.file) return to.offset > from.offset ? to.offset - from.offset : 0;
  uint64_t total = 0;
  bool counting = false;
  for (const auto& f : files) {
    if (f.name == from.file) {
      counting = true;
      total += f.size > from.offset ? f.size - from.offset : 0;
    } else if (f.name == to.file) {
      return counting ? total + to.offset : 0;
    } else if (counting) {
      total += f.size;
    }
  }
  return 0;
}

}  // namespace binrelay::cli
