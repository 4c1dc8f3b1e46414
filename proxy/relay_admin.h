// RelayAdmin: the AdminHandler of `binrelay serve`. It answers what replicas,
// mysqlbinlog and operators ask a primary (sql/rpl_replica.cc, MariaDB
// sql/slave.cc, client/mysqlbinlog.cc) from the durable
// store: system variables, SHOW MASTER STATUS / BINARY LOGS / SLAVE HOSTS /
// RELAY STATUS, PURGE BINARY LOGS TO and MariaDB's binlog_gtid_pos().
//
// Variables: binrelay answers its identity, GTID and binlog variables itself
// (below); every other name is the source's as last read (SourceView), so
// SHOW VARIABLES lists what a client would see on the source, with
// binrelay's own values where they differ.
//
// Flavour: variables follow the SOURCE as stored, not the greeting: the FDE of
// the newest stored file says MariaDB or MySQL and CRC32 or NONE (cached per
// file); the committed end gives the GTID state. While the store holds no
// file, `options.version` decides the flavour ("5.5.5-" prefix or "MariaDB"
// in it: MariaDB) and binlog_checksum is CRC32 (both servers' default).
//
// Costs on the calling io thread: most answers are in-memory; an uncached FDE
// is one small read; binlog_gtid_pos at an offset other than 4 reads the file
// up to it (as MariaDB does); PURGE BINARY LOGS TO unlinks files and rewrites
// the store index with fsync (a rare operator statement).
//
// Thread safety: every method may be called from any thread.
// Lifetime: the store and the status provider must outlive the handler.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "protocol/format_description.h"
#include "protocol/client_connection.h"
#include "proxy/admin_handler.h"
#include "proxy/move_control.h"
#include "proxy/relay_status.h"
#include "proxy/source_view.h"
#include "proxy/upstream_control.h"
#include "replication/binlog_store.h"

namespace binrelay::proxy {

struct RelayAdminOptions {
  uint32_t server_id = 0;   // [listen] server_id, answered as @@server_id
  std::string server_uuid;  // "" : LoadOrCreateServerUuid(store dir) (Create only)
  // The greeting's server version (ServerSessionOptions::server_version);
  // decides the flavour while the store is empty.
  std::string version = "5.5.5-10.11.0-binrelay";
  std::string version_comment = "binrelay";
  uint64_t max_allowed_packet = 64ull << 20;
  // Answers that take precedence over computed ones (lower-case names), e.g.
  // binlog_row_image as the source reported it. See also SetVariable.
  std::map<std::string, std::string> variables;
  uint16_t port = 0;  // [listen] port, answered as @@port
  // The source's variables, answered for every name binrelay does not
  // answer itself (null: only binrelay's own).
  const SourceView* source = nullptr;
  // The moves CUTOVER MOVE reaches (null: none run here).
  MoveControl* moves = nullptr;
  // The upstream STOP SLAVE / START SLAVE reach (null: none here).
  UpstreamControl* upstream = nullptr;
  // SHOW RELAY SOURCES: the servers a failover may follow, the current
  // source first ([source] host and candidates).
  std::vector<protocol::ConnectOptions> source_candidates;
  bool follow_read_only = false;
};

class RelayAdmin : public AdminHandler {
 public:
  // Fills options.server_uuid from the store directory when empty.
  static absl::StatusOr<std::unique_ptr<RelayAdmin>> Create(replication::BinlogStore* store,
                                                            const StatusProvider* status,
                                                            RelayAdminOptions options);
  // `status` may be null: SHOW RELAY STATUS then shows the store's facts only.
  // options.server_uuid must be set (Create does it).
  RelayAdmin(replication::BinlogStore* store, const StatusProvider* status,
             RelayAdminOptions options);

  std::optional<std::string> SystemVariable(std::string_view name) override;
  absl::StatusOr<ResultSet> MasterStatus() override;
  absl::StatusOr<ResultSet> BinaryLogs() override;
  absl::StatusOr<ResultSet> Replicas() override;
  absl::StatusOr<ResultSet> RelayStatus() override;
  absl::StatusOr<ResultSet> RelayPipelines() override;
  // Probes every candidate now (a connection and a SELECT each) and shows
  // the failover's verdict on each (replication/source_choice.h).
  absl::StatusOr<ResultSet> RelaySources() override;
  absl::StatusOr<ResultSet> RelayMoves() override;
  std::vector<std::pair<std::string, std::string>> AllSystemVariables() override;
  std::vector<std::pair<std::string, std::string>> StatusVariables() override;
  absl::StatusOr<ResultSet> SlaveStatus(bool replica_keyword, bool all) override;
  absl::StatusOr<ResultSet> Grants(std::string_view user, std::string_view host) override;
  // NotFound for a file the store does not hold (ER_UNKNOWN_TARGET_BINLOG);
  // FailedPrecondition naming the consumer and position when a pin kept
  // files (the older ones are purged, as MySQL does).
  absl::Status PurgeBinaryLogsTo(std::string_view file) override;
  absl::Status CutoverMove(std::string_view name) override;
  absl::Status StopUpstream() override;
  absl::Status StartUpstream() override;
  absl::Status ChangeSource(const SourceChange& change) override;
  absl::StatusOr<std::optional<std::string>> BinlogGtidPos(std::string_view file,
                                                           uint64_t position) override;
  void ReplicaRegistered(const ReplicaRegistration& replica) override;
  void ReplicaDisconnected(uint32_t server_id) override;

  // Sets (or, with nullopt, clears) an answer that takes precedence, e.g.
  // gtid_mode once the upstream preflight has read the source's.
  void SetVariable(std::string name, std::optional<std::string> value);
  const std::string& server_uuid() const { return options_.server_uuid; }

 private:
  struct Flavour {
    bool mariadb = true;
    protocol::ChecksumAlg checksum = protocol::ChecksumAlg::kCrc32;
  };
  Flavour SourceFlavour();
  std::optional<std::string> Computed(std::string_view name);

  replication::BinlogStore* const store_;
  const StatusProvider* const status_;
  const RelayAdminOptions options_;

  struct Registered {
    ReplicaRegistration replica;
    int connections = 0;  // a replica that reconnects registers before the old one ends
  };
  absl::Mutex mu_;
  std::map<uint32_t, Registered> replicas_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> overrides_ ABSL_GUARDED_BY(mu_);
  std::string format_file_ ABSL_GUARDED_BY(mu_);  // whose FDE format_ is
  protocol::FormatDescription format_ ABSL_GUARDED_BY(mu_);
};

// The relay's own server_uuid, kept in `dir`/.binrelay-server-uuid (a hidden
// file: the store ignores it) so it survives restarts; a random version-4
// UUID on first use. DataLoss if the file holds something else.
absl::StatusOr<std::string> LoadOrCreateServerUuid(const std::string& dir);

// SHOW RELAY STATUS's one row: the RenderStatusJson keys except consumers.
ResultSet RelayStatusResultSet(const RelayStatus& s);

}  // namespace binrelay::proxy
