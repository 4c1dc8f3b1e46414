// A consistent snapshot of one table with the binlog position it stands
// at, so that a move can read the source's rows and the target's (with the
// pipeline advanced exactly there) as of one point of the binlog.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "protocol/client_connection.h"
#include "replication/binlog_position.h"
#include "replication/connection_sql_source.h"

namespace binrelay::apply {

// A connection inside a transaction that sees one consistent snapshot,
// and the source's binlog position for that snapshot: every change to the
// snapshot's tables before it is in the snapshot, none after it.
struct Snapshot {
  std::unique_ptr<protocol::ClientConnection> conn;
  std::unique_ptr<replication::ConnectionSqlSource> sql;
  replication::BinlogPosition position;
};

// Opens a consistent snapshot on `server` (any flavour); no position.
absl::StatusOr<Snapshot> OpenSnapshot(const protocol::ConnectOptions& server);

// A consistent snapshot of `table` (quoted db.table) on the source, with its
// position. MariaDB reports the position of a consistent snapshot itself;
// on MySQL the table is locked for a moment while the snapshot opens
// (logged with the lock's length). `sleep` returns false once stopping; `move`
// names the move in the log.
absl::StatusOr<Snapshot> SourceSnapshot(const protocol::ConnectOptions& server,
                                        bool is_mariadb, const std::string& table,
                                        std::string_view move,
                                        const std::function<bool(absl::Duration)>& sleep);

// A source snapshot that `advance` (a paused pipeline's AdvanceTo) could
// reach: one before what the pipeline has applied (OutOfRange from
// `advance`) is replaced by a later one, for up to 30 s. Returns the
// snapshot, open, with the pipeline at its position.
absl::StatusOr<Snapshot> SourceSnapshotAtPipeline(
    const protocol::ConnectOptions& source, bool is_mariadb, const std::string& table,
    std::string_view move, const std::function<bool(absl::Duration)>& sleep,
    absl::FunctionRef<absl::Status(const replication::BinlogPosition&)> advance);

}  // namespace binrelay::apply
