// ReadBinlogStatus: a server's current binlog file and position, from SHOW
// MASTER STATUS (SHOW BINARY LOG STATUS on MySQL 8.4 and later), for the
// upstream session's start and for a pipeline that must know how far the
// store has to reach.
//
// Thread safety: as the SqlSource's.
#pragma once

#include "absl/status/statusor.h"
#include "replication/binlog_position.h"
#include "replication/sql_source.h"

namespace binrelay::replication {

// FailedPrecondition when the server has binary logging off or the user
// may not see it; DataLoss for a position that is not a number.
absl::StatusOr<BinlogPosition> ReadBinlogStatus(SqlSource& sql);

}  // namespace binrelay::replication
