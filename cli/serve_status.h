// ServeStatus: what `binrelay serve` (and `binrelay move`) shows of itself,
// gathered from the upstream session, the store, the dumps, the apply
// pipelines and the moves into proxy::RelayStatus for /status, /metrics and
// the admin SQL (proxy/status_fields.h describes what each shows of a
// pipeline and a move); also the listener's CUTOVER MOVE.
//
// Thread safety: Snapshot and RequestCutover from any thread; the setters
// before the HTTP server and the listener start.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "apply/pipeline.h"
#include "apply/table_move.h"
#include "cli/serve_config.h"
#include "proxy/dump_registry.h"
#include "proxy/listener.h"
#include "proxy/move_control.h"
#include "proxy/relay_status.h"
#include "replication/binlog_store.h"
#include "replication/upstream_session.h"

namespace binrelay::cli {

// A manual move in phase "ready for cutover" is asked to cut over (CUTOVER
// MOVE, SIGUSR1); any other move gets FailedPrecondition saying why not.
absl::Status AskToCutOver(apply::TableMove& move);

class ServeStatus : public proxy::StatusProvider, public proxy::MoveControl {
 public:
  ServeStatus(const ServeConfig& config, const replication::UpstreamSession* session,
              const replication::BinlogStore* store, const proxy::DumpRegistry* dumps)
      : config_(config), session_(session), store_(store), dumps_(dumps) {}
  // Set once the listener exists (for the connection count).
  void set_listener(const proxy::Listener* listener) { listener_.store(listener); }
  // Set before the HTTP server starts; the vector outlives it.
  void set_pipelines(const std::vector<std::unique_ptr<apply::ApplyPipeline>>* p) {
    pipelines_.store(p);
  }
  void set_moves(const std::vector<std::unique_ptr<apply::TableMove>>* m) { moves_.store(m); }
  // CUTOVER MOVE name on the listener.
  absl::Status RequestCutover(std::string_view name) override;
  // The name of a move in phase cutover, if one is (STOP SLAVE waits for it).
  std::optional<std::string> MoveCuttingOver() const;
  proxy::RelayStatus Snapshot() const override;

  // A move's status as /status shows it (also `binrelay move`'s progress).
  static proxy::MoveProgress ToProgress(const apply::MoveStatus& ms);

 private:
  // A pipeline's status, and the pipeline as one of the store's consumers.
  static void AddPipeline(const apply::PipelineStatus& ps, proxy::RelayStatus* out);
  // Stored bytes from `from` to `to` (0 if `from` is at or past it).
  static uint64_t BytesBetween(const std::vector<replication::StoreFileEntry>& files,
                               const replication::BinlogPosition& from,
                               const replication::BinlogPosition& to);

  const ServeConfig& config_;
  const replication::UpstreamSession* session_;
  const replication::BinlogStore* store_;
  const proxy::DumpRegistry* dumps_;
  std::atomic<const proxy::Listener*> listener_{nullptr};
  std::atomic<const std::vector<std::unique_ptr<apply::ApplyPipeline>>*> pipelines_{nullptr};
  std::atomic<const std::vector<std::unique_ptr<apply::TableMove>>*> moves_{nullptr};
  const absl::Time started_ = absl::Now();
};

}  // namespace binrelay::cli
