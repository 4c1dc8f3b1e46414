// RotateBinlog: closes a source's current binlog file and opens the next
// (FLUSH BINARY LOGS), for `[source] start = next`: an empty store then
// begins at the new file's first byte instead of fetching the whole current
// file (up to max_binlog_size, 1 GiB by default) that holds nothing the
// store's consumers need.
//
// Thread safety: as the SqlSource's.
#pragma once

#include "absl/status/statusor.h"
#include "replication/binlog_position.h"
#include "replication/sql_source.h"

namespace binrelay::replication {

struct BinlogRotation {
  BinlogPosition before;  // the source's position just before the rotation
  BinlogPosition first;   // the new file, offset 4
};

// NO_WRITE_TO_BINLOG: the statement is not replicated, so the source's own
// replicas do not rotate with it. Needs RELOAD on the source (the error
// says so); FailedPrecondition if the file did not change.
absl::StatusOr<BinlogRotation> RotateBinlog(SqlSource& sql);

}  // namespace binrelay::replication
