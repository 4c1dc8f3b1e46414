#include "cli/serve_command.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <unistd.h>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/ini_file.h"
#include "apply/pipeline.h"
#include "apply/source_login.h"
#include "apply/table_move.h"
#include "cli/serve_config.h"
#include "cli/session_control.h"
#include "cli/serve_status.h"
#include "protocol/status_macros.h"
#include "proxy/asio.h"
#include "proxy/commit_signal.h"
#include "proxy/dump_registry.h"
#include "proxy/dump_service.h"
#include "proxy/http_server.h"
#include "proxy/listener.h"
#include "proxy/listener_keys.h"
#include "proxy/rsa_key_pair.h"
#include "proxy/sha2_auth_cache.h"
#include "proxy/relay_admin.h"
#include "proxy/relay_status.h"
#include "proxy/source_forwarder.h"
#include "proxy/source_view.h"
#include "protocol/worker_pool.h"
#include "replication/binlog_rotation.h"
#include "replication/binlog_store.h"
#include "replication/followed_source.h"
#include "replication/store_era.h"
#include "replication/connection_sql_source.h"
#include "replication/store_retention_job.h"
#include "replication/store_scan.h"
#include "replication/upstream_session.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace binrelay::cli {
namespace {

constexpr const char* kServeUsage =
    "usage: binrelay serve --config FILE [--section.key=value ...]\n"
    "\n"
    "Follows the [source] primary as a replica, keeps a durable copy of its binlog in\n"
    "[store] dir (same file names and offsets as the source, closed files byte-identical)\n"
    "and serves it on [listen] as the source would: to MariaDB and MySQL replicas, to\n"
    "mysqlbinlog / mariadb-binlog, to binlog client libraries (any MariaDB capability level),\n"
    "and to another binrelay. Status and metadata statements are answered there too\n"
    "(SHOW SLAVE STATUS, SHOW VARIABLES, KILL, ...; read-only metadata queries are\n"
    "forwarded to the source); GET /status, /metrics and /healthz on [http].\n"
    "\n"
    "conf/binrelay.cnf documents every key; any key can be overridden, e.g.\n"
    "--store.dir=/srv/binrelay. SIGTERM/SIGINT stop it cleanly.\n";

constexpr const char* kMoveUsage =
    "usage: binrelay move --config FILE [--json-status] [--section.key=value ...]\n"
    "\n"
    "Moves the [move] tables from the [source] server to the [move] target while the\n"
    "source keeps taking writes: creates the target tables, copies them in primary-key\n"
    "chunks while applying every change from binrelay's own copy of the source's binlog\n"
    "([store] dir: the source may purge its binlog meanwhile), compares every chunk on both\n"
    "servers at one binlog position (repairing what differs), then cuts over: the source's\n"
    "tables are locked for the last changes and renamed to <table>_old (cutover = auto),\n"
    "or on CUTOVER MOVE name to the [listen] port or SIGUSR1 (cutover = manual). Phases and progress are logged; a line a second on\n"
    "a terminal, or JSON lines on stdout with --json-status. Exits 0 once cut over, 1 if\n"
    "the move failed. conf/binrelay.cnf documents every key.\n";

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

// What dumps and admin statements know of binrelay's source: whether the
// store may lag it, and its variables as of the last connect.
class ServeSourceView : public proxy::SourceView {
 public:
  ServeSourceView(const replication::UpstreamSession* session,
                  const replication::BinlogStore* store)
      : session_(session), store_(store) {}
  bool MayBeBehind() const override {
    // Caught up only when streaming, everything received is stored, and the
    // source has been quiet for a moment (under load an event may be on its
    // way; a replica switched over from the source may already know it).
    if (session_->state() != replication::UpstreamSession::State::kStreaming) return true;
    // The store may hold more than the last received transaction end (a
    // BINLOG_CHECKPOINT after it), never less when caught up.
    const replication::BinlogPosition received = session_->received();
    const replication::BinlogPosition stored = store_->committed().position;
    // The session names the source's file; the store its era too.
    const int c = replication::CompareBinlogNames(replication::SourceNameOf(stored.file),
                                                  received.file);
    if (c < 0 || (c == 0 && stored.offset < received.offset)) return true;
    return absl::Now() - session_->last_event_time() < absl::Seconds(1);
  }
  std::shared_ptr<const VariableList> Variables() const override {
    return session_->source_variables();
  }

 private:
  const replication::UpstreamSession* session_;
  const replication::BinlogStore* store_;
};

// The version binrelay greets replicas with: the source's, as stored (the
// newest file's FDE), so a MySQL 8 replica sees a MySQL server and a MariaDB
// replica a MariaDB one ("5.5.5-" prefix, as MariaDB servers send). Cached
// per file: a connection costs no file read.
class GreetingVersion {
 public:
  GreetingVersion(const replication::BinlogStore* store,
                  const replication::UpstreamSession* session)
      : store_(store), session_(session) {}
  std::string operator()() {
    // Committed files only: the newest file on disk may be one the writer
    // has just started, whose FDE is not readable yet (a guess then would
    // turn a MariaDB relay into a MySQL-looking one for that connection).
    std::vector<replication::StoreFileEntry> files = store_->CommittedFiles();
    if (!files.empty()) {
      absl::MutexLock l(&mu_);
      if (files.back().name == file_) return version_;
      auto format = replication::ReadStoredFormat(store_->dir() + "/" + files.back().name);
      if (format.ok()) {
        std::string base = format->server_version.substr(0, format->server_version.find('-'));
        version_ = format->is_mariadb ? absl::StrCat("5.5.5-", base, "-MariaDB-binrelay")
                                      : absl::StrCat(base, "-binrelay");
        file_ = files.back().name;
        return version_;
      }
      spdlog::warn("cannot read the format of stored {} for the greeting: {}", files.back().name,
                   SV(format.status().message()));
      if (!version_.empty()) return version_;
    }
    // Nothing readable stored yet: the source's version as its preflight
    // read it (the listener's ready gate admits no client before one of the
    // two is known).
    replication::SourceInfo info = session_->source_info_snapshot();
    if (info.version.empty()) return kDefault;
    std::string base = info.version.substr(0, info.version.find('-'));
    return info.is_mariadb ? absl::StrCat("5.5.5-", base, "-MariaDB-binrelay")
                           : absl::StrCat(base, "-binrelay");
  }

 private:
  static constexpr const char* kDefault = "5.5.5-10.11.0-binrelay";
  const replication::BinlogStore* store_;
  const replication::UpstreamSession* session_;
  absl::Mutex mu_;
  std::string file_ ABSL_GUARDED_BY(mu_);
  std::string version_ ABSL_GUARDED_BY(mu_);
};

// The io threads of the listener; stopped and joined on destruction.
class IoThreads {
 public:
  IoThreads(proxy::asio::io_context& ioc, int n) : ioc_(ioc), guard_(ioc.get_executor()) {
    for (int i = 0; i < n; ++i) threads_.emplace_back([this] { ioc_.run(); });
  }
  ~IoThreads() {
    guard_.reset();
    ioc_.stop();
    for (auto& t : threads_) t.join();
  }

 private:
  proxy::asio::io_context& ioc_;
  proxy::asio::executor_work_guard<proxy::asio::io_context::executor_type> guard_;
  std::vector<std::thread> threads_;
};

// `binrelay move`: the run ends when its move does, and prints progress.
struct MoveMode {
  bool json_status = false;  // JSON lines on stdout, once a second
  bool progress = false;     // a line on stderr once a second (a terminal)
};

std::atomic<bool> g_cutover_requested{false};
void OnCutoverSignal(int) { g_cutover_requested = true; }

// Watches the moves: SIGUSR1 asks the manual ones to cut over; under
// `binrelay move` it prints progress and ends the run once the move ends.
class MoveSupervisor {
 public:
  MoveSupervisor(const std::vector<std::unique_ptr<apply::TableMove>>* moves,
                 replication::UpstreamSession* session, const MoveMode* mode)
      : moves_(moves), session_(session), mode_(mode) {
    std::signal(SIGUSR1, OnCutoverSignal);
    thread_ = std::thread([this] { Loop(); });
  }
  ~MoveSupervisor() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  void Loop() {
    auto next_print = std::chrono::steady_clock::now();
    while (true) {
      {
        std::unique_lock<std::mutex> l(mu_);
        if (cv_.wait_for(l, std::chrono::milliseconds(200), [&] { return stop_; })) return;
      }
      if (g_cutover_requested.exchange(false)) {
        for (const auto& m : *moves_) {
          if (absl::Status s = AskToCutOver(*m); !s.ok()) {
            spdlog::info("SIGUSR1: {}", SV(s.message()));
          }
        }
      }
      if (mode_ == nullptr) continue;
      const auto now = std::chrono::steady_clock::now();
      bool all_finished = true;
      for (const auto& m : *moves_) all_finished = all_finished && m->Finished();
      if (now >= next_print || all_finished) {
        next_print = now + std::chrono::seconds(1);
        for (const auto& m : *moves_) Print(m->Status());
      }
      if (all_finished) {
        session_->RequestStop();
        return;
      }
    }
  }

  void Print(const apply::MoveStatus& st) const {
    const proxy::MoveProgress m = ServeStatus::ToProgress(st);
    if (mode_->json_status) {
      std::string line = proxy::RenderMoveJson(m);
      line.push_back('\n');
      std::fwrite(line.data(), 1, line.size(), stdout);
      std::fflush(stdout);
    }
    if (mode_->progress) {
      std::string line = absl::StrCat("move ", m.name, ": ", m.phase);
      if (st.phase == apply::MovePhase::kCopy) {
        absl::StrAppend(&line, absl::StrFormat(
            ", %d / ~%d rows, %.0f rows/s, ETA %.0f s", m.rows_copied, m.rows_estimate,
            m.copy_rows_per_second, m.eta_seconds));
      }
      if (st.phase == apply::MovePhase::kChecksum) {
        absl::StrAppend(&line, ", ", m.chunks_checked, " / ", m.chunks_total, " chunks, ",
                        m.chunks_repaired, " repaired");
      }
      absl::StrAppend(&line, absl::StrFormat(", apply lag %.1f s", m.apply_lag_seconds));
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }

  const std::vector<std::unique_ptr<apply::TableMove>>* moves_;
  replication::UpstreamSession* session_;
  const MoveMode* mode_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// start = next, for an empty store: the source's binlog rotated, and the
// new file's first byte. When the rotation cannot be done (most often an
// account without RELOAD) the store starts at the first byte of the file
// current before it, still no later than any position a move reads next;
// when not even that can be read, at start = current.
replication::StartSpec StartInNextBinlogFile(const protocol::ConnectOptions& source) {
  replication::BinlogRotation r;
  if (auto conn = protocol::ClientConnection::Connect(source); conn.ok()) {
    replication::ConnectionSqlSource sql(conn->get());
    r = replication::RotateBinlog(sql);
  } else {
    r.error = conn.status();
  }
  if (!r.first) {
    spdlog::warn("[source] start = next: {}; the store starts at the beginning of the "
                 "source's current binlog file instead (as start = current)",
                 SV(r.error.message()));
    return replication::StartSpec();
  }
  if (!r.error.ok()) {
    spdlog::warn("[source] start = next: {}; the store starts at {}, fetching the {} MiB that "
                 "file held first", SV(r.error.message()), r.first->ToString(),
                 r.before->offset >> 20);
  } else {
    spdlog::info("[source] start = next: rotated the binlog of {}:{} at {} (FLUSH BINARY "
                 "LOGS); the store starts at {}",
                 source.host, source.port, r.before->ToString(), r.first->ToString());
  }
  replication::StartSpec spec;
  spec.kind = replication::StartSpec::Kind::kPosition;
  spec.position = *r.first;
  return spec;
}

absl::Status Serve(const ServeConfig& config, const MoveMode* move_mode = nullptr) {
  BR_ASSIGN_OR_RETURN(std::unique_ptr<replication::BinlogStore> store,
                      replication::BinlogStore::Open(config.store.dir, StoreOptions(config)));
  replication::UpstreamOptions u = config.upstream;
  u.whole_files = true;  // an empty store starts at a file's first byte
  u.read_source_variables = true;  // SHOW VARIABLES on binrelay's port answers them
  u.retry_first_connect = true;    // a relay waits for its source (or its source's first file)
  BR_ASSIGN_OR_RETURN(u.start, store->StartFor(config.upstream.start));
  u.switch_target = store.get();  // CHANGE MASTER TO ... MASTER_USE_GTID, failover_after
  u.candidates = config.source_candidates;
  u.follow_read_only = config.follow_read_only;
  // After a switch: the server the store follows now, not [source] host.
  BR_RETURN_IF_ERROR(replication::FollowStoredSource(*store, &u));
  // Before any move reads the source's position, so that every move starts
  // in a file the store will hold. (A move resumed from its checkpoint with
  // an emptied store needs an earlier file than this one: its pipeline then
  // fails as for a purged file.)
  if (config.start_next && u.start.kind == replication::StartSpec::Kind::kCurrent) {
    u.start = StartInNextBinlogFile(config.upstream.connect);
  }
  // A relay keeps trying for as long as it runs; operators watch /status.
  u.reconnect_timeout = std::chrono::hours(24 * 365);
  replication::UpstreamSession session(u, store.get());

  // Serving: dumps wake on every commit of the store.
  proxy::CommitSignal commits;
  proxy::DumpRegistry dumps;
  store->SetCommitListener([&commits] { commits.Notify(); });
  ServeStatus status(config, &session, store.get(), &dumps);
  ServeSourceView source_view(&session, store.get());
  proxy::RelayAdminOptions admin_options;
  admin_options.server_id = config.listen.server_id;
  admin_options.port = config.listen.port;
  admin_options.source = &source_view;
  admin_options.moves = &status;
  SessionControl session_control(&session, [&status] { return status.MoveCuttingOver(); });
  admin_options.upstream = &session_control;
  admin_options.source_candidates = config.source_candidates;
  admin_options.follow_read_only = config.follow_read_only;
  BR_ASSIGN_OR_RETURN(std::unique_ptr<proxy::RelayAdmin> admin,
                      proxy::RelayAdmin::Create(store.get(), &status, admin_options));
  proxy::DumpService dump_service(
      {store.get(), &commits, &dumps, config.listen.server_id, &source_view});
  // Forwarded metadata reads go to the source as the forwarding user.
  std::unique_ptr<proxy::SourceForwarder> forwarder;
  if (config.listen.forward_queries) {
    proxy::SourceForwarderOptions f;
    f.connect = config.upstream.connect;
    f.source_address = [&session] {
      const protocol::ConnectOptions now = session.followed_options();
      return std::make_pair(now.host, now.port);
    };
    if (!config.listen.forward_user.empty()) {
      f.connect.user = config.listen.forward_user;
      f.connect.password = config.listen.forward_password;
      f.connect.credentials_from = "[listen] forward_user and forward_password";
    }
    f.connections = static_cast<int>(config.listen.forward_connections);
    f.statement_timeout = config.listen.forward_timeout;
    forwarder = std::make_unique<proxy::SourceForwarder>(f);
  }
  // The io_context outlives the pool: a job finishing at shutdown posts to it.
  proxy::asio::io_context ioc;
  WorkerPool pool(4, 1024);
  proxy::ListenerOptions listen;
  listen.address = config.listen.address;
  listen.port = config.listen.port;
  listen.max_connections = config.listen.max_connections;
  listen.auth_timeout = config.listen.auth_timeout;
  listen.read_timeout = config.listen.read_timeout;
  listen.idle_timeout = config.listen.idle_timeout;
  listen.pool = &pool;
  listen.forwarder = forwarder.get();
  listen.session.auth.user = config.listen.user;
  listen.session.auth.password = config.listen.password;
  listen.session.auth.tls_required = config.listen.ssl_required;
  listen.session.auth.admin_user = config.listen.admin_user;
  listen.session.auth.admin_password = config.listen.admin_password;
  auto greeting = std::make_shared<GreetingVersion>(store.get(), &session);
  listen.server_version = [greeting] { return (*greeting)(); };
  // Until binrelay has either a stored file or has reached its source once,
  // it knows nothing to answer with (not even the source's flavour): clients
  // are told to come back, as a starting server tells them.
  listen.ready = [&session, s = store.get()]() -> absl::Status {
    if (!s->CommittedFiles().empty() || !session.source_info_snapshot().version.empty()) {
      return absl::OkStatus();
    }
    return absl::UnavailableError(
        "binrelay is starting: it has not reached its source yet and has nothing stored; "
        "retry shortly");
  };
  proxy::Sha2AuthCache sha2_cache;
  std::unique_ptr<proxy::Listener> listener;
  std::unique_ptr<IoThreads> io;
  if (config.listen.enabled) {
    // What [listen] does not name is generated once in the store, as mysqld
    // generates its certificates and RSA keys in its datadir.
    BR_ASSIGN_OR_RETURN(
        proxy::ListenerKeyFiles keys,
        proxy::EnsureListenerKeys(absl::StrCat(config.store.dir, "/.tls"),
                                  {config.listen.ssl_cert, config.listen.ssl_key,
                                   config.listen.rsa_private_key},
                                  config.listen.ssl_enabled));
    if (!keys.ssl_cert.empty()) {
      BR_ASSIGN_OR_RETURN(listen.tls_context,
                          proxy::MakeServerTlsContext(keys.ssl_cert, keys.ssl_key));
      BR_ASSIGN_OR_RETURN(listen.session.auth.tls_cert_sha256,
                          proxy::CertificateSha256(keys.ssl_cert));
    }
    BR_ASSIGN_OR_RETURN(listen.session.auth.rsa_key,
                        proxy::RsaKeyPair::FromPrivateKeyFile(keys.rsa_private_key));
    listen.session.auth.sha2_cache = &sha2_cache;
    BR_ASSIGN_OR_RETURN(listener, proxy::Listener::Create(ioc, listen, admin.get(), &dump_service));
    status.set_listener(listener.get());
    listener->Start();
    io = std::make_unique<IoThreads>(ioc, 2);
    spdlog::info("serving replicas on {}:{}", config.listen.address, listener->port());
  }

  // Where the tables live now: the server the upstream follows (after a
  // switch, not [source] host), with its credentials.
  const apply::SourceLogin current_source = [&session] { return session.followed_options(); };
  // Apply pipelines pin what they still need before retention first runs.
  std::vector<std::unique_ptr<apply::ApplyPipeline>> pipelines;
  for (const apply::PipelineOptions& p : config.apply) {
    auto pipeline = std::make_unique<apply::ApplyPipeline>(p, store.get(), current_source);
    BR_RETURN_IF_ERROR(pipeline->Restore());
    pipelines.push_back(std::move(pipeline));
  }
  status.set_pipelines(&pipelines);
  for (auto& p : pipelines) p->Start();
  std::vector<std::unique_ptr<apply::TableMove>> moves;
  for (const apply::MoveOptions& m : config.moves) {
    moves.push_back(std::make_unique<apply::TableMove>(m, store.get(), current_source));
  }
  status.set_moves(&moves);
  // However Serve returns (an HTTP port taken, ...), nothing reached
  // through the status (sessions' SHOW/CUTOVER MOVE, HTTP) sees the moves
  // and pipelines after they are destroyed.
  absl::Cleanup forget = [&status] {
    status.set_moves(nullptr);
    status.set_pipelines(nullptr);
  };
  for (auto& m : moves) m->Start();
  std::optional<MoveSupervisor> supervisor;
  if (!moves.empty()) supervisor.emplace(&moves, &session, move_mode);

  replication::RetentionJob retention(
      store.get(), replication::MakeRetentionPolicy(config.store.retention_hours,
                                                    config.store.retention_bytes,
                                                    config.store.retention_hard_cap_bytes));
  retention.Start();

  proxy::HttpServer http(&status);
  if (config.http.enabled) {
    BR_RETURN_IF_ERROR(http.Start(config.http.address, config.http.port));
    spdlog::info("status on http://{}:{}/status", config.http.address, http.port());
  }
  store->SetFileClosedListener([&retention] { retention.RunSoon(); });
  g_serve_session.store(&session);
  std::signal(SIGINT, OnServeSignal);
  std::signal(SIGTERM, OnServeSignal);
  absl::Status run = session.Run();
  g_serve_session.store(nullptr);
  if (listener) {
    // Replicas get ER_SERVER_SHUTDOWN and are closed; a stalled one is cut
    // after a short grace period.
    listener->Stop();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (listener->open_connections() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  io.reset();
  listener.reset();
  supervisor.reset();
  for (auto& m : moves) m->Stop();
  absl::Status moved = absl::OkStatus();
  if (move_mode != nullptr) {
    for (auto& m : moves) {
      if (m->Finished()) moved.Update(m->Wait());
    }
  }
  for (auto& p : pipelines) p->Stop();
  store->SetCommitListener(nullptr);
  store->SetFileClosedListener(nullptr);
  retention.Stop();
  http.Stop();
  // Whatever was received is made durable before exiting, even after an error.
  absl::Status closed = store->Close();
  BR_RETURN_IF_ERROR(run);
  BR_RETURN_IF_ERROR(moved);
  return closed;
}

}  // namespace

namespace {

// Shared by serve and move: --config FILE and --section.key=value overrides
// (and, for move, --json-status). Returns the exit code to end with, or -1
// to go on.
int ParseCommandLine(const std::vector<std::string>& args, const char* command, const char* usage,
                     bool allow_json_status, std::string* config_path,
                     std::vector<std::string>* overrides, bool* json_status) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      std::fputs(usage, stdout);
      return 0;
    }
    if (args[i] == "--config" && i + 1 < args.size()) {
      *config_path = args[++i];
    } else if (args[i].rfind("--config=", 0) == 0) {
      *config_path = args[i].substr(9);
    } else if (allow_json_status && args[i] == "--json-status") {
      *json_status = true;
    } else {
      overrides->push_back(args[i]);
    }
  }
  if (config_path->empty()) {
    std::fprintf(stderr, "binrelay %s: --config FILE is required\n\n%s", command, usage);
    return 2;
  }
  return -1;
}

void SetUpLogging() {
  auto logger = spdlog::stderr_color_mt("binrelay");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
}

absl::StatusOr<ServeConfig> LoadConfig(
    const std::string& path, const std::vector<std::string>& overrides,
    absl::StatusOr<ServeConfig> (*parse)(const IniFile&)) {
  BR_ASSIGN_OR_RETURN(IniFile ini, IniFile::Load(path));
  for (const std::string& o : overrides) BR_RETURN_IF_ERROR(ini.Override(o));
  return parse(ini);
}

}  // namespace

int RunServe(const std::vector<std::string>& args) {
  SetUpLogging();
  std::string config_path;
  std::vector<std::string> overrides;
  bool unused = false;
  if (int rc = ParseCommandLine(args, "serve", kServeUsage, false, &config_path, &overrides, &unused);
      rc >= 0) {
    return rc;
  }
  absl::StatusOr<ServeConfig> config = LoadConfig(config_path, overrides, &ParseServeConfig);
  if (!config.ok()) {
    std::fprintf(stderr, "binrelay serve: %s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  for (const std::string& w : config->warnings) spdlog::warn("{}", w);
  absl::Status s = Serve(*config);
  if (!s.ok()) {
    spdlog::error("{}", std::string(s.message()));
    return 1;
  }
  return 0;
}

int RunMove(const std::vector<std::string>& args) {
  SetUpLogging();
  std::string config_path;
  std::vector<std::string> overrides;
  MoveMode mode;
  if (int rc = ParseCommandLine(args, "move", kMoveUsage, true, &config_path, &overrides,
                                &mode.json_status);
      rc >= 0) {
    return rc;
  }
  mode.progress = ::isatty(STDERR_FILENO) == 1;
  absl::StatusOr<ServeConfig> config = LoadConfig(config_path, overrides, &ParseMoveConfig);
  if (!config.ok()) {
    std::fprintf(stderr, "binrelay move: %s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  for (const std::string& w : config->warnings) spdlog::warn("{}", w);
  absl::Status s = Serve(*config, &mode);
  if (!s.ok()) {
    spdlog::error("{}", std::string(s.message()));
    return 1;
  }
  return 0;
}

}  // namespace binrelay::cli
