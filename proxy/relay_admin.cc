#include "proxy/relay_admin.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "protocol/status_macros.h"
#include "replication/atomic_file.h"
#include "replication/store_era.h"
#include "replication/store_index.h"
#include "proxy/status_fields.h"
#include "proxy/relay_sources.h"
#include "proxy/slave_status.h"
#include "replication/store_scan.h"
#include "spdlog/spdlog.h"

namespace binrelay::proxy {
namespace {

using replication::CompareBinlogNames;

constexpr char kUuidFile[] = ".binrelay-server-uuid";

bool IsUuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !absl::ascii_isxdigit(static_cast<unsigned char>(s[i]))) {
      return false;
    }
  }
  return true;
}

std::string RandomUuid() {
  std::random_device rd;  // /dev/urandom on Linux
  std::array<uint8_t, 16> b;
  for (size_t i = 0; i < b.size(); i += 4) {
    uint32_t v = rd();
    for (size_t j = 0; j < 4; ++j) b[i + j] = static_cast<uint8_t>(v >> (8 * j));
  }
  b[6] = static_cast<uint8_t>((b[6] & 0x0F) | 0x40);  // version 4
  b[8] = static_cast<uint8_t>((b[8] & 0x3F) | 0x80);  // RFC 4122 variant
  std::string out;
  for (size_t i = 0; i < b.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    absl::StrAppendFormat(&out, "%02x", b[i]);
  }
  return out;
}

// "5.5.5-10.11.0-binrelay" (MariaDB's greeting prefix) or "...MariaDB...".
bool VersionIsMariaDb(const std::string& version) {
  return absl::StartsWith(version, "5.5.5-") ||
         absl::StrContains(absl::AsciiStrToLower(version), "mariadb");
}

}  // namespace

absl::StatusOr<std::string> LoadOrCreateServerUuid(const std::string& dir) {
  const std::string path = absl::StrCat(dir, "/", kUuidFile);
  std::ifstream in(path);
  if (in) {
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string uuid(absl::StripAsciiWhitespace(text));
    if (!IsUuid(uuid)) {
      return absl::DataLossError(absl::StrCat(
          path, " does not hold a UUID; delete it to let binrelay pick a new server_uuid "
          "(replicas will then see a different server_uuid)"));
    }
    return absl::AsciiStrToLower(uuid);
  }
  std::string uuid = RandomUuid();
  BR_RETURN_IF_ERROR(replication::WriteFileAtomically(path, uuid + "\n", 0644));
  spdlog::info("binrelay server_uuid {} (kept in {})", uuid, path);
  return uuid;
}

ResultSet RelayStatusResultSet(const RelayStatus& s) {
  ResultSet rs;
  rs.columns = {"upstream_state", "source",         "received_file",  "received_offset",
                "stored_file",    "stored_offset",  "seconds_behind_source",
                "events_received", "bytes_received", "stored_bytes",   "stored_files",
                "reconnects",     "purges",         "last_error",     "pipelines"};
  protocol::TextRow row = {std::string(replication::UpstreamStateName(s.upstream_state)),
                           s.source,
                           s.received_file,
                           absl::StrCat(s.received_offset),
                           s.stored_file,
                           absl::StrCat(s.stored_offset),
                           absl::StrFormat("%.3f", s.seconds_behind_source),
                           absl::StrCat(s.events_received),
                           absl::StrCat(s.bytes_received),
                           absl::StrCat(s.stored_bytes),
                           absl::StrCat(s.stored_files),
                           absl::StrCat(s.reconnects),
                           absl::StrCat(s.purges),
                           s.last_error.empty() ? std::nullopt
                                                : std::optional<std::string>(s.last_error),
                           s.pipelines.empty()
                               ? std::nullopt
                               : std::optional<std::string>(SummarizePipelines(s))};
  rs.rows.push_back(std::move(row));
  return rs;
}

absl::StatusOr<std::unique_ptr<RelayAdmin>> RelayAdmin::Create(replication::BinlogStore* store,
                                                               const StatusProvider* status,
                                                               RelayAdminOptions options) {
  if (options.server_uuid.empty()) {
    BR_ASSIGN_OR_RETURN(options.server_uuid, LoadOrCreateServerUuid(store->dir()));
  }
  return std::make_unique<RelayAdmin>(store, status, std::move(options));
}

RelayAdmin::RelayAdmin(replication::BinlogStore* store, const StatusProvider* status,
                       RelayAdminOptions options)
    : store_(store), status_(status), options_(std::move(options)) {}

RelayAdmin::Flavour RelayAdmin::SourceFlavour() {
  std::vector<replication::StoreFileEntry> files = store_->Files();
  absl::MutexLock l(&mu_);
  // Newest first: a file just started may not hold its FDE on disk yet.
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    if (it->name != format_file_) {
      auto fd = replication::ReadStoredFormat(absl::StrCat(store_->dir(), "/", it->name));
      if (!fd.ok()) {
        if (!absl::IsOutOfRange(fd.status()) && !absl::IsNotFound(fd.status())) {
          spdlog::warn("admin: {}", fd.status().ToString());
        }
        continue;
      }
      format_ = *std::move(fd);
      format_file_ = it->name;
    }
    return Flavour{format_.is_mariadb, format_.checksum_alg};
  }
  return Flavour{VersionIsMariaDb(options_.version), protocol::ChecksumAlg::kCrc32};
}

std::optional<std::string> RelayAdmin::SystemVariable(std::string_view name) {
  {
    absl::MutexLock l(&mu_);
    auto it = overrides_.find(std::string(name));
    if (it != overrides_.end()) return it->second;
  }
  auto it = options_.variables.find(std::string(name));
  if (it != options_.variables.end()) return it->second;
  if (auto v = Computed(name)) return v;
  // The greeting's version is binrelay's to answer (the session knows it).
  if (name == "version" || options_.source == nullptr) return std::nullopt;
  return options_.source->Variable(name);
}

std::vector<std::pair<std::string, std::string>> RelayAdmin::AllSystemVariables() {
  // binrelay's own names, per flavour (SHOW VARIABLES lists what exists on
  // the source's kind of server).
  static constexpr const char* kCommon[] = {
      "server_id", "version_comment", "max_allowed_packet", "log_bin", "binlog_format",
      "rpl_semi_sync_master_enabled", "hostname", "port", "binlog_checksum"};
  static constexpr const char* kMariaDb[] = {"gtid_domain_id", "gtid_slave_pos", "gtid_binlog_pos",
                                             "gtid_current_pos", "gtid_binlog_state"};
  static constexpr const char* kMysql[] = {"server_uuid", "rpl_semi_sync_source_enabled",
                                           "gtid_mode", "gtid_executed", "gtid_purged"};
  std::map<std::string, std::string> vars;
  if (options_.source != nullptr) {
    if (auto list = options_.source->Variables()) {
      for (const auto& [name, value] : *list) {
        if (name != "version") vars[name] = value;
      }
    }
  }
  const bool mariadb = SourceFlavour().mariadb;
  auto own = [&](const char* name) {
    if (auto v = SystemVariable(name)) vars[name] = *v;
  };
  for (const char* n : kCommon) own(n);
  if (mariadb) {
    for (const char* n : kMariaDb) own(n);
  } else {
    for (const char* n : kMysql) own(n);
  }
  // SHOW VARIABLES shows booleans as ON/OFF where SELECT gives 1/0.
  if (vars["log_bin"] == "1") vars["log_bin"] = "ON";
  {
    absl::MutexLock l(&mu_);
    for (const auto& [name, value] : overrides_) vars[name] = value;
  }
  for (const auto& [name, value] : options_.variables) vars[name] = value;
  return {vars.begin(), vars.end()};
}

std::vector<std::pair<std::string, std::string>> RelayAdmin::StatusVariables() {
  proxy::RelayStatus s;
  if (status_ != nullptr) s = status_->Snapshot();
  const int64_t uptime =
      s.started == absl::Time() ? 0 : absl::ToInt64Seconds(absl::Now() - s.started);
  std::vector<std::pair<std::string, std::string>> vars = {
      {"Slave_running", s.upstream_state == replication::UpstreamState::kStreaming ? "ON" : "OFF"},
      {"Threads_connected", absl::StrCat(s.connections)},
      {"Threads_running", "1"},
      {"Uptime", absl::StrCat(uptime)},
  };
  return vars;
}

absl::StatusOr<ResultSet> RelayAdmin::SlaveStatus(bool replica_keyword, bool all) {
  proxy::RelayStatus s;
  if (status_ != nullptr) s = status_->Snapshot();
  s.source_is_mariadb = SourceFlavour().mariadb;
  if (!s.stored_gtids.known()) s.stored_gtids = store_->committed().gtid_state();
  return SlaveStatusResultSet(s, replica_keyword, all);
}

absl::StatusOr<ResultSet> RelayAdmin::Grants(std::string_view user, std::string_view host) {
  (void)host;
  // What binrelay lets its listener user do, in the source's words: dump
  // and read replication status (MariaDB 10.5+: BINLOG MONITOR), and, with
  // forwarding, read metadata as binrelay's source user may.
  const bool mariadb = SourceFlavour().mariadb;
  ResultSet rs;
  rs.columns = {absl::StrCat("Grants for ", AV(user), "@%")};
  rs.rows.push_back({absl::StrCat("GRANT ",
                                  mariadb ? "REPLICATION SLAVE, BINLOG MONITOR"
                                          : "REPLICATION SLAVE, REPLICATION CLIENT",
                                  " ON *.* TO `", AV(user), "`@`%`")});
  return rs;
}

std::optional<std::string> RelayAdmin::Computed(std::string_view name) {
  if (name == "server_id") return absl::StrCat(options_.server_id);
  if (name == "server_uuid") return options_.server_uuid;
  if (name == "version_comment") return options_.version_comment;
  if (name == "max_allowed_packet") return absl::StrCat(options_.max_allowed_packet);
  if (name == "log_bin") return std::string("1");
  if (name == "binlog_format") return std::string("ROW");  // binrelay only follows ROW sources
  if (name == "gtid_domain_id") return std::string("0");
  if (name == "gtid_slave_pos") return std::string();  // binrelay applies nothing
  // SELECT returns booleans as 0/1 (MySQL 8.0.26+ asks the source_ name that
  // way); SHOW VARIABLES as ON/OFF (MariaDB and older MySQL ask the master_
  // name that way).
  if (name == "rpl_semi_sync_master_enabled") return std::string("OFF");
  if (name == "rpl_semi_sync_source_enabled") return std::string("0");
  if (name == "port" && options_.port != 0) return absl::StrCat(options_.port);
  if (name == "gtid_binlog_state") return store_->committed().gtid_state().maria().ToString();
  if (name == "hostname") {
    char host[256] = {};
    if (::gethostname(host, sizeof(host) - 1) == 0) return std::string(host);
    return std::nullopt;
  }
  const bool gtid_variable = name == "binlog_checksum" || name == "gtid_mode" ||
                             name == "gtid_binlog_pos" || name == "gtid_current_pos" ||
                             name == "gtid_executed" || name == "gtid_purged";
  if (!gtid_variable) return std::nullopt;
  Flavour flavour = SourceFlavour();
  if (name == "binlog_checksum") {
    return std::string(flavour.checksum == protocol::ChecksumAlg::kCrc32 ? "CRC32" : "NONE");
  }
  const replication::CommittedEnd end = store_->committed();
  const replication::SourceGtids& state = end.gtid_state();
  if (name == "gtid_binlog_pos" || name == "gtid_current_pos") {
    return flavour.mariadb && state.is_mariadb() ? state.PositionText() : std::string();
  }
  if (name == "gtid_executed") {
    return !flavour.mariadb && state.is_mysql() ? state.PositionText() : std::string();
  }
  std::vector<replication::StoreFileEntry> files = store_->Files();
  if (name == "gtid_purged") {
    // Everything before the oldest stored file: what its PREVIOUS_GTIDS says.
    if (flavour.mariadb || files.empty() || !files.front().first_gtids.is_mysql()) {
      return std::string();
    }
    return files.front().first_gtids.PositionText();
  }
  // gtid_mode (MySQL's): ON when the stored stream carries MySQL GTIDs.
  if (flavour.mariadb) return std::string("OFF");
  bool gtids = state.is_mysql() && !state.empty();
  for (const auto& f : files) gtids = gtids || (f.first_gtids.is_mysql() && !f.first_gtids.empty());
  return std::string(gtids ? "ON" : "OFF");
}

absl::StatusOr<ResultSet> RelayAdmin::MasterStatus() {
  const Flavour flavour = SourceFlavour();
  ResultSet rs;
  rs.columns = {"File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB"};
  if (!flavour.mariadb) rs.columns.push_back("Executed_Gtid_Set");
  replication::CommittedEnd end = store_->committed();
  if (end.position.file.empty()) return rs;  // nothing stored yet: no row, as with no binlog
  protocol::TextRow row = {end.position.file, absl::StrCat(end.position.offset), std::string(),
                           std::string()};
  if (!flavour.mariadb) {
    row.push_back(end.gtid_state().is_mysql() ? end.gtid_state().PositionText() : std::string());
  }
  rs.rows.push_back(std::move(row));
  return rs;
}

absl::StatusOr<ResultSet> RelayAdmin::BinaryLogs() {
  const Flavour flavour = SourceFlavour();
  ResultSet rs;
  rs.columns = {"Log_name", "File_size"};
  if (!flavour.mariadb) rs.columns.push_back("Encrypted");  // MySQL 8.0.14+
  // Only durable bytes: a replica may ask for any position listed here.
  for (const replication::StoreFileEntry& f : store_->CommittedFiles()) {
    protocol::TextRow row = {f.name, absl::StrCat(f.size)};
    if (!flavour.mariadb) row.push_back(std::string("No"));
    rs.rows.push_back(std::move(row));
  }
  return rs;
}

absl::StatusOr<ResultSet> RelayAdmin::Replicas() {
  ResultSet rs;
  rs.columns = {"Server_id", "Host", "Port", "Master_id"};
  absl::MutexLock l(&mu_);
  for (const auto& [id, r] : replicas_) {
    // A replica sends master_id 0; servers show their own id then.
    uint32_t master = r.replica.master_id != 0 ? r.replica.master_id : options_.server_id;
    rs.rows.push_back({absl::StrCat(id), r.replica.report_host,
                       absl::StrCat(r.replica.report_port), absl::StrCat(master)});
  }
  return rs;
}

absl::StatusOr<ResultSet> RelayAdmin::RelayStatus() {
  proxy::RelayStatus s;
  if (status_ != nullptr) {
    s = status_->Snapshot();
  } else {
    s.upstream_state = replication::UpstreamState::kUnknown;
    replication::CommittedEnd end = store_->committed();
    s.stored_file = end.position.file;
    s.stored_offset = end.position.offset;
    for (const auto& f : store_->Files()) {
      s.stored_bytes += f.size;
      ++s.stored_files;
    }
    s.purges = store_->purged_files();
  }
  return RelayStatusResultSet(s);
}

namespace {

template <class T>
ResultSet FieldsResultSet(const std::vector<StatusField<T>>& fields, const std::vector<T>& items) {
  ResultSet rs;
  for (const StatusField<T>& f : fields) rs.columns.push_back(f.name);
  for (const T& item : items) {
    protocol::TextRow row;
    for (const StatusField<T>& f : fields) row.push_back(StatusValueText(f.value(item)));
    rs.rows.push_back(std::move(row));
  }
  return rs;
}

}  // namespace

absl::StatusOr<ResultSet> RelayAdmin::RelayPipelines() {
  const std::vector<ApplyStatus> none;
  return FieldsResultSet(ApplyStatusFields(),
                         status_ != nullptr ? status_->Snapshot().pipelines : none);
}

absl::StatusOr<ResultSet> RelayAdmin::RelaySources() {
  if (options_.source_candidates.empty()) return AdminHandler::RelaySources();
  const replication::CommittedEnd end = store_->committed();
  std::optional<FollowedSources> followed;
  if (options_.upstream != nullptr) followed = options_.upstream->Followed();
  return RelaySourcesResultSet(end.gtid_state(), !end.position.file.empty(),
                               options_.source_candidates, options_.follow_read_only,
                               followed ? &*followed : nullptr);
}

absl::StatusOr<ResultSet> RelayAdmin::RelayMoves() {
  const std::vector<MoveProgress> none;
  return FieldsResultSet(MoveProgressFields(), status_ != nullptr ? status_->Snapshot().moves : none);
}

absl::Status RelayAdmin::CutoverMove(std::string_view name) {
  if (options_.moves == nullptr) return AdminHandler::CutoverMove(name);
  return options_.moves->RequestCutover(name);
}

absl::Status RelayAdmin::StopUpstream() {
  if (options_.upstream == nullptr) return AdminHandler::StopUpstream();
  spdlog::info("admin: STOP SLAVE");
  return options_.upstream->Stop();
}

absl::Status RelayAdmin::StartUpstream() {
  if (options_.upstream == nullptr) return AdminHandler::StartUpstream();
  spdlog::info("admin: START SLAVE");
  return options_.upstream->Start();
}

absl::Status RelayAdmin::ChangeSource(const SourceChange& change) {
  if (options_.upstream == nullptr) return AdminHandler::ChangeSource(change);
  // Logged without the password.
  spdlog::info("admin: CHANGE MASTER TO{}{}{}{}{}{}", change.host ? " host " + *change.host : "",
               change.port ? absl::StrCat(" port ", *change.port) : "",
               change.user ? " user " + *change.user : "", change.password ? " password ***" : "",
               change.tls ? absl::StrCat(" ssl ", *change.tls ? 1 : 0) : "",
               change.by_gtid ? (*change.by_gtid ? " by GTID (another server)" : " by position")
                              : "");
  return options_.upstream->Change(change);
}

absl::Status RelayAdmin::PurgeBinaryLogsTo(std::string_view file) {
  replication::PurgeOptions options;
  options.before_file = std::string(file);
  BR_ASSIGN_OR_RETURN(replication::PurgeResult r, store_->Purge(options));
  spdlog::info("admin: PURGE BINARY LOGS TO '{}' removed {} file(s)", file, r.removed.size());
  if (!r.kept_for_pin.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "purged ", r.removed.size(), " file(s) before '", AV(file), "' but kept ",
        r.kept_for_pin, " and later: ", r.kept_for_consumer, " still needs them"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::string>> RelayAdmin::BinlogGtidPos(std::string_view file,
                                                                     uint64_t position) {
  using Result = std::optional<std::string>;
  // Only durable bytes: the last file's size is its committed end.
  std::vector<replication::StoreFileEntry> files = store_->CommittedFiles();
  if (files.empty()) return Result();
  // MariaDB: an empty name means the first binlog of the index.
  const replication::StoreFileEntry* entry = file.empty() ? &files.front() : nullptr;
  if (!file.empty()) {
    const auto named = replication::FilesNamed(files, file);
    if (named.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "binlog '", AV(file), "' names ", named.size(), " stored files, one per source binrelay "
          "followed across a failover; name it with its era (SHOW BINARY LOGS lists them)"));
    }
    if (!named.empty()) entry = named.front();
  }
  // Unknown (or purged) files and bytes not yet durable are NULL, as MariaDB
  // answers for positions it cannot find.
  if (entry == nullptr) return Result();
  const uint64_t readable_end = entry->size;
  if (position <= 4) {
    // A file's first state is in the index: no file read.
    return Result(entry->first_gtids.is_mariadb() ? entry->first_gtids.maria().PositionString()
                                                  : std::string());
  }
  return replication::MariaGtidPosAt(absl::StrCat(store_->dir(), "/", entry->name), position,
                                     readable_end);
}

void RelayAdmin::ReplicaRegistered(const ReplicaRegistration& replica) {
  absl::MutexLock l(&mu_);
  Registered& r = replicas_[replica.server_id];
  r.replica = replica;  // a re-registration replaces the facts, as on MariaDB
  ++r.connections;
}

void RelayAdmin::ReplicaDisconnected(uint32_t server_id) {
  absl::MutexLock l(&mu_);
  auto it = replicas_.find(server_id);
  if (it == replicas_.end()) return;
  if (--it->second.connections <= 0) replicas_.erase(it);
}

void RelayAdmin::SetVariable(std::string name, std::optional<std::string> value) {
  absl::MutexLock l(&mu_);
  if (value) {
    overrides_[std::move(name)] = *std::move(value);
  } else {
    overrides_.erase(name);
  }
}

}  // namespace binrelay::proxy
