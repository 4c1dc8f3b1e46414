// Preflight: checks, before registering as a replica, that the source can
// feed binrelay, and says precisely what to change when it cannot.
//
// Checked: binary logging on; binlog_format=ROW; binlog_row_image (FULL is
// required by the apply pipelines, a warning for tail); binlog_checksum;
// replication privileges; that our server_id differs from the source's and
// from every replica registered on it; MySQL's binlog_row_value_options and
// binlog_transaction_compression (reported; both are decoded).
//
// Thread safety: stateless function over a SqlSource.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "replication/sql_source.h"

namespace binrelay::replication {

struct PreflightOptions {
  uint32_t replica_server_id = 0;
  // Apply pipelines need full row images; tail accepts partial ones.
  bool require_full_row_image = false;
};

struct SourceInfo {
  std::string version;
  bool is_mariadb = false;
  uint32_t server_id = 0;
  bool checksum_crc32 = false;
  std::string binlog_row_image;
  std::string gtid_mode;  // MySQL only; empty on MariaDB
  std::vector<std::string> warnings;
};

absl::StatusOr<SourceInfo> RunPreflight(SqlSource& source, const PreflightOptions& options);

}  // namespace binrelay::replication
