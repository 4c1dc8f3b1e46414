// ServeConfig: the settings of `binrelay serve`, read from a my.cnf-style file
// (conf/binrelay.cnf documents every key) with --section.key=value overrides.
// Every missing or invalid key is an error naming the key and where it was set.
//
// Thread safety: plain values.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "apply/move_options.h"
#include "apply/pipeline_options.h"
#include "cli/ini_file.h"
#include "replication/upstream_session.h"

namespace binrelay::cli {

struct ServeConfig {
  // [source]: connection, replica server_id, start (empty store only).
  replication::UpstreamOptions upstream;
  // [source] start = next: rotate the source's binlog before an empty
  // store's first fetch (upstream.start is then kCurrent, the fallback).
  bool start_next = false;
  std::string source_ssl_mode;  // as written, for status output
  // [source] candidates: the servers a failover may follow, [source] host
  // first, each with [source]'s credentials and TLS settings; and
  // follow_read_only. SHOW RELAY SOURCES checks them (replication/
  // source_choice.h).
  std::vector<protocol::ConnectOptions> source_candidates;
  bool follow_read_only = false;

  struct Store {
    std::string dir;
    enum class Sync { kTransaction, kInterval, kOff } sync = Sync::kTransaction;
    std::chrono::milliseconds sync_interval{0};  // for kInterval
    uint64_t retention_hours = 168;
    uint64_t retention_bytes = 0;  // 0: no size limit
    // Past this, files a consumer still needs are purged too (that consumer
    // must reconnect). Unset: 2 x retention_bytes (none if that is 0); 0: never.
    std::optional<uint64_t> retention_hard_cap_bytes;
  } store;

  struct Listen {
    bool enabled = false;  // serve always; `binrelay move` when [listen] is given
    std::string address = "127.0.0.1";
    uint16_t port = 0;
    uint32_t server_id = 0;  // the server_id binrelay reports to its replicas
    std::string user;
    std::string password;
    // PURGE BINARY LOGS, KILL of other connections, CUTOVER MOVE: only as
    // this user ("" = nobody).
    std::string admin_user;
    std::string admin_password;
    // Empty with ssl_key: a self-signed pair generated in the store's .tls/.
    std::string ssl_cert;
    std::string ssl_key;
    bool ssl_enabled = true;    // ssl_mode != disabled: TLS is offered
    bool ssl_required = false;  // ssl_mode = required: plain logins are refused
    // caching_sha2_password's RSA key; empty: generated in the store's .tls/.
    std::string rsa_private_key;
    // Read-only metadata statements go to the source (proxy/forward_policy.h),
    // as forward_user (default: [source] user).
    bool forward_queries = true;
    std::string forward_user;
    std::string forward_password;
    uint32_t forward_connections = 4;
    std::chrono::milliseconds forward_timeout{10000};
    size_t max_connections = 512;
    std::chrono::milliseconds auth_timeout{10000};
    std::chrono::milliseconds read_timeout{60000};
    std::chrono::milliseconds idle_timeout{8 * 3600 * 1000};
  } listen;

  struct Http {
    bool enabled = false;
    std::string address;
    uint16_t port = 0;
  } http;

  // [apply.NAME]: pipelines keeping tables in sync on a target server.
  std::vector<apply::PipelineOptions> apply;
  // [move.NAME]: moves of tables to another server (apply/table_move.h).
  std::vector<apply::MoveOptions> moves;

  // Keys set that no setting reads; non-empty only inside ParseServeConfig,
  // which then fails naming the first (typos must not fall back to defaults).
  std::vector<std::string> unknown_keys;
  // Said at start (not fatal): files holding a password that group or
  // others can read.
  std::vector<std::string> warnings;
};

absl::StatusOr<ServeConfig> ParseServeConfig(const IniFile& ini);

// `binrelay move`: [source], [store], [move] (one move; `name` names it,
// default "move"), optional [listen] and [http].
absl::StatusOr<ServeConfig> ParseMoveConfig(const IniFile& ini);

// One move section ([move.NAME] of serve, [move] of `binrelay move`).
absl::StatusOr<apply::MoveOptions> ParseMoveSection(const IniFile& ini, const std::string& section,
                                                    std::string name);

// "64M", "10G", "1024" (bytes) -> bytes. Exposed for tests.
absl::StatusOr<uint64_t> ParseByteSize(std::string_view text);
// "250ms", "2s", "1.5" (seconds) -> milliseconds. Exposed for tests.
absl::StatusOr<std::chrono::milliseconds> ParseDuration(std::string_view text);

}  // namespace binrelay::cli
