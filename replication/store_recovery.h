// Crash recovery of the local store's newest binlog file: after a kill -9 (or
// a failed write) it may end with a torn event or a half-stored transaction.
// RecoverBinlogFile walks the file (BinlogFileReader: framing and CRC32) with a
// TransactionBoundary, cuts everything after the last complete transaction,
// and reports where the stream must resume and the GTID state there.
//
// Thread safety: stateless; the caller must own the file (no writer open).
// Lifetime: results own their data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "replication/gtid_state.h"

namespace binrelay::replication {

struct RecoveredFile {
  // Size after recovery; 0 means nothing usable (not even a complete FDE):
  // the file was removed.
  uint64_t size = 0;
  uint64_t truncated_bytes = 0;  // cut from the tail
  // The file's last event is a ROTATE or STOP: the source closed it.
  bool closed = false;
  std::optional<std::string> rotate_to;  // the next file a closing ROTATE names
  SourceGtids first_gtids;               // its GTID_LIST / PREVIOUS_GTIDS
  GtidState gtids;                       // at `size`
};

// Recovers `path` in place (ftruncate + fdatasync; clears BINLOG_IN_USE in
// a closed file's FDE). `durable` false skips the fdatasync. `floor`: the
// file belongs to a store era, and its GTID state (and first_gtids) start
// from the era's entry (GtidState::SetFloor, FloorMerged); kNone otherwise.
absl::StatusOr<RecoveredFile> RecoverBinlogFile(const std::string& path, bool durable,
                                                const SourceGtids& floor = {});

}  // namespace binrelay::replication
