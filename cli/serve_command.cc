#include "cli/serve_command.h"

#include <atomic>
#include <csignal>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "cli/ini_file.h"
#include "cli/serve_config.h"
#include "protocol/status_macros.h"
#include "proxy/http_server.h"
#include "proxy/relay_status.h"
#include "replication/binlog_store.h"
#include "replication/upstream_session.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace binrelay::cli {
namespace {

constexpr const char* kServeUsage =
    "usage: binrelay serve --config FILE [--section.key=value ...]\n"
    "\n"
    "Follows the [source] primary as a replica and keeps a durable copy of its binlog in\n"
    "[store] dir (same file names and offsets as the source). conf/binrelay.cnf documents\n"
    "every key; any key can be overridden, e.g. --store.dir=/srv/binrelay.\n";

std::atomic<replication::UpstreamSession*> g_serve_session{nullptr};

void OnServeSignal(int) {
  if (auto* s = g_serve_session.load()) s->RequestStop();
}

replication::BinlogStoreOptions StoreOptions(const ServeConfig& c) {
  replication::BinlogStoreOptions o;
  switch (c.store.sync) {
    case ServeConfig::Store::Sync::kTransaction:
      o.sync = replication::SyncPolicy::kEveryTransaction;
      break;
    case ServeConfig::Store::Sync::kInterval:
      o.sync = replication::SyncPolicy::kInterval;
      o.sync_interval = c.store.sync_interval;
      break;
    case ServeConfig::Store::Sync::kOff:
      o.sync = replication::SyncPolicy::kOff;
      break;
  }
  return o;
}

// Facts for /status and /metrics, read from the session and the store.
class ServeStatus : public proxy::StatusProvider {
 public:
  ServeStatus(const ServeConfig& config, const replication::UpstreamSession* session,
              const replication::BinlogStore* store)
      : config_(config), session_(session), store_(store) {}
  proxy::RelayStatus Snapshot() const override {
    proxy::RelayStatus s;
    s.source = absl::StrCat(config_.upstream.connect.host, ":", config_.upstream.connect.port);
    s.upstream_state = session_->state_name();
    const auto& st = session_->stats();
    s.events_received = st.events.load();
    s.bytes_received = st.bytes.load();
    s.reconnects = st.reconnects.load();
    replication::BinlogPosition received = session_->received();
    s.received_file = received.file;
    s.received_offset = received.offset;
    replication::CommittedEnd end = store_->committed();
    s.stored_file = end.position.file;
    s.stored_offset = end.position.offset;
    for (const auto& f : store_->Files()) {
      s.stored_bytes += f.size;
      ++s.stored_files;
    }
    s.last_error = session_->last_error();
    return s;
  }

 private:
  const ServeConfig& config_;
  const replication::UpstreamSession* session_;
  const replication::BinlogStore* store_;
};

absl::Status Serve(const ServeConfig& config) {
  BR_ASSIGN_OR_RETURN(std::unique_ptr<replication::BinlogStore> store,
                      replication::BinlogStore::Open(config.store.dir, StoreOptions(config)));
  replication::UpstreamOptions u = config.upstream;
  u.whole_files = true;  // an empty store starts at a file's first byte
  BR_ASSIGN_OR_RETURN(u.start, store->StartFor(config.upstream.start));
  // A relay keeps trying for as long as it runs; operators watch /status.
  u.reconnect_timeout = std::chrono::hours(24 * 365);
  replication::UpstreamSession session(u, store.get());
  ServeStatus status(config, &session, store.get());
  proxy::HttpServer http(&status);
  if (config.http.enabled) {
    BR_RETURN_IF_ERROR(http.Start(config.http.address, config.http.port));
    spdlog::info("status on http://{}:{}/status", config.http.address, http.port());
  }
  g_serve_session.store(&session);
  std::signal(SIGINT, OnServeSignal);
  std::signal(SIGTERM, OnServeSignal);
  absl::Status run = session.Run();
  g_serve_session.store(nullptr);
  http.Stop();
  // Whatever was received is made durable before exiting, even after an error.
  absl::Status closed = store->Close();
  BR_RETURN_IF_ERROR(run);
  return closed;
}

}  // namespace

int RunServe(const std::vector<std::string>& args) {
  auto logger = spdlog::stderr_color_mt("binrelay");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  std::string config_path;
  std::vector<std::string> overrides;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      std::fputs(kServeUsage, stdout);
      return 0;
    }
    if (args[i] == "--config" && i + 1 < args.size()) {
      config_path = args[++i];
    } else if (args[i].rfind("--config=", 0) == 0) {
      config_path = args[i].substr(9);
    } else {
      overrides.push_back(args[i]);
    }
  }
  if (config_path.empty()) {
    std::fprintf(stderr, "binrelay serve: --config FILE is required\n\n%s", kServeUsage);
    return 2;
  }
  auto ini = IniFile::Load(config_path);
  absl::Status s = ini.status();
  for (const std::string& o : overrides) {
    if (s.ok()) s = ini->Override(o);
  }
  absl::StatusOr<ServeConfig> config = s.ok() ? ParseServeConfig(*ini) : absl::StatusOr<ServeConfig>(s);
  if (!config.ok()) {
    std::fprintf(stderr, "binrelay serve: %s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  s = Serve(*config);
  if (!s.ok()) {
    spdlog::error("{}", std::string(s.message()));
    return 1;
  }
  return 0;
}

}  // namespace binrelay::cli
