// RotateBinlog: closes a source's current binlog file and opens the next
// (FLUSH BINARY LOGS), for `[source] start = next`: an empty store then
// begins at the new file's first byte instead of fetching the whole current
// file (up to max_binlog_size, 1 GiB by default) that holds nothing the
// store's consumers need.
//
// Thread safety: as the SqlSource's.
#pragma once

#include <optional>

#include "absl/status/status.h"
#include "replication/binlog_position.h"
#include "replication/sql_source.h"

namespace binrelay::replication {

struct BinlogRotation {
  // The source's position just before the flush (empty when even that
  // could not be read).
  std::optional<BinlogPosition> before;
  // Where an empty store should begin: offset 4 of the file the flush
  // opened, or of `before`'s file when the flush failed (either way no
  // later than any position read from the source afterwards).
  std::optional<BinlogPosition> first;
  // Why `first` is not the new file (ok when it is).
  absl::Status error;
};

// FLUSH BINARY LOGS is never written to the binlog (MariaDB
// sql/sql_reload.cc, REFRESH_BINARY_LOG), so the source's own replicas do
// not rotate with it; NO_WRITE_TO_BINLOG only says so. Needs RELOAD.
BinlogRotation RotateBinlog(SqlSource& sql);

}  // namespace binrelay::replication
