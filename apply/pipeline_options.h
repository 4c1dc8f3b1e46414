// PipelineOptions: one [apply.NAME] section of the serve configuration
// (conf/binrelay.cnf documents each key and its default).
//
// Thread safety: plain values.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "protocol/client_connection.h"
#include "replication/binlog_position.h"

namespace binrelay::apply {

struct PipelineOptions {
  std::string name;                 // NAME of [apply.NAME]
  protocol::ConnectOptions target;  // target_host, target_port, target_user, ...
  std::string target_ssl_mode = "preferred";
  std::string tables;               // "db.t, db2.*"
  std::string target_schema;        // "": each table's own database
  // Where a pipeline without a checkpoint starts: current (the store's
  // committed end), earliest, or FILE:POS (a transaction boundary).
  replication::StartSpec start;
  std::chrono::milliseconds flush_interval{1000};
  size_t batch_rows = 1000;
  size_t batch_bytes = 1 << 20;
  size_t concurrency = 8;
  size_t soft_limit_bytes = 256u << 20;
  // Upserts as COM_STMT_BULK_EXECUTE where the target takes it (MariaDB),
  // else (and if false) as multi-row REPLACE text.
  bool bulk_replace = true;
  int lock_wait_timeout_seconds = 5;
  std::string checkpoint_schema = "binrelay";
};

}  // namespace binrelay::apply
