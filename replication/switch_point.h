// SwitchPoint: where binrelay's store continues on a new source after a
// failover. A GTID dump cannot be stored as it arrives (the server skips,
// inside its first file, the transactions the replica has, and a stored
// file must be the source's bytes from offset 4), so the store continues
// with a whole file of the new source, dumped by position from its start:
// the newest file whose opening GTID state (its GTID_LIST or
// PREVIOUS_GTIDS) the store has already passed. Every transaction the store
// lacks lies at or after that file's start; the ones before `first_gtids`
// in it are not in it, and those after it that the store holds already are
// what a reader skips.
//
// Thread safety: stateless functions.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "replication/source_gtids.h"
#include "replication/sql_source.h"

namespace binrelay::replication {

struct SwitchPoint {
  std::string file;         // the new source's binlog file, read from offset 4
  SourceGtids first_gtids;  // the GTID state the file opens with
};

// The opening GTID state of `file` on `source` (SHOW BINLOG EVENTS IN
// 'file' LIMIT 4: the Gtid_list or Previous_gtids row), in `flavour`.
// kNone when the file has no such event.
absl::StatusOr<SourceGtids> OpeningGtidsOnServer(SqlSource& source, std::string_view file,
                                                 GtidFlavour flavour);

// The file of `source` a store holding `stored` continues from: its binlogs
// (SHOW BINARY LOGS) newest first, the first whose opening state `stored`
// has passed (FileForGtidPosition's rule), so one query per file looked at
// and usually one or two. NotFound when every file opens after `stored`
// (the new source purged transactions the store lacks: following it would
// leave a gap); InvalidArgument when `stored` knows no GTIDs.
absl::StatusOr<SwitchPoint> FindSwitchPoint(SqlSource& source, const SourceGtids& stored);

}  // namespace binrelay::replication
