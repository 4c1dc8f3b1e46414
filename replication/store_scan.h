// Reads facts out of stored binlog files for admin answers: the FDE a file
// opens with (the source's server version and binlog_checksum), and MariaDB's
// binlog_gtid_pos(file, pos), the GTID position at a file offset.
//
// The scan reads event headers in 1 MiB chunks and frames (CRC-checks) only
// the events it needs (FDE, GTID_LIST, GTID): a position deep in a large file
// costs one sequential read of the file up to it, as on MariaDB.
//
// Thread safety: stateless functions; the files may be appended to
// concurrently (only bytes below `readable_end` are read).
// Lifetime: results own their data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "protocol/format_description.h"

namespace binrelay::replication {

// The FORMAT_DESCRIPTION (or START_V3) event at offset 4 of `path`.
// OutOfRange if the file does not hold a whole one yet; DataLoss if the
// first event is something else.
absl::StatusOr<protocol::FormatDescription> ReadStoredFormat(const std::string& path);

// MariaDB binlog_gtid_pos() semantics (sql_repl.cc gtid_state_from_pos): the
// file's GTID_LIST state, updated by every MariaDB GTID event that starts
// before `offset` (one GTID per domain, the last one seen; a transaction
// counts as soon as its GTID event is passed). Offsets below 4 mean 4.
// nullopt (SQL NULL) when `offset` is not the start of an event or lies
// beyond `readable_end`; "" for a file without GTID_LIST (a MySQL binlog).
// Corrupt framing is DataLoss naming path:offset.
absl::StatusOr<std::optional<std::string>> MariaGtidPosAt(const std::string& path,
                                                          uint64_t offset,
                                                          uint64_t readable_end);


}  // namespace binrelay::replication
