// The local store's directory layout: which files are binlogs, in what order,
// and the index file (`binrelay-store.index`) that lists them with each
// file's first GTID state (the GTID_LIST / PREVIOUS_GTIDS the file opens
// with), so a GTID position maps to a file without scanning files.
//
// Index format: one line per file, oldest first:
// `<name>\t<flavour>\t<gtid state>\n`, flavour "mariadb" (the state as
// @@gtid_binlog_state prints it), "mysql" (as @@gtid_executed) or "none"
// (the file carries no state yet). An index in any other form (binrelay
// before 2026-12 wrote `<name>\t<state>`) is rebuilt from the files.
// It is rewritten whole and atomically (temp file, fsync, rename, fsync of
// the directory); the binlog files themselves stay the source of truth, and
// a missing or stale index is rebuilt from them on open.
//
// Thread safety: stateless functions.
// Lifetime: results own their data.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "replication/binlog_position.h"
#include "replication/source_gtids.h"

namespace binrelay::replication {

inline constexpr std::string_view kStoreIndexName = "binrelay-store.index";

struct StoreFileEntry {
  std::string name;
  SourceGtids first_gtids;  // kNone if the file carries none (yet)
  uint64_t size = 0;             // not persisted in the index
};

// Binlog names share a base and differ in a zero-padded counter whose width
// can grow: compare by length first, then bytes. Stored names compare by
// era first (store_era.h): every file of a later source comes after every
// file of an earlier one.
int CompareBinlogNames(std::string_view a, std::string_view b);
// a comes before b in the stream: an older file, or the same file earlier.
inline bool PositionBefore(const BinlogPosition& a, const BinlogPosition& b) {
  const int c = CompareBinlogNames(a.file, b.file);
  return c < 0 || (c == 0 && a.offset < b.offset);
}

// A name from the wire becomes a path: refuse anything that is not a plain
// file name (empty, "/", "." / "..", control bytes, the index's own name).
absl::Status ValidateBinlogName(std::string_view name);
// A stored name (an index line): a valid binlog name, with or without its
// era's directory in front.
absl::Status ValidateStoredName(std::string_view name);

// Binlog files in `dir` and its era subdirectories (stored names, oldest
// first), skipping the index, its temp file and hidden files. A file that does not start with the binlog magic
// (or a prefix of it) is FailedPrecondition: the directory is not a store.
absl::StatusOr<std::vector<StoreFileEntry>> ListStoreFiles(const std::string& dir);

// NotFound if there is no index; DataLoss naming the line if it is garbled.
absl::StatusOr<std::vector<StoreFileEntry>> ReadStoreIndex(const std::string& dir);
absl::Status WriteStoreIndex(const std::string& dir, const std::vector<StoreFileEntry>& files,
                             bool durable);

// The GTID state a binlog file opens with (its GTID_LIST or PREVIOUS_GTIDS,
// read from the head of the file); kNone if it has none.
absl::StatusOr<SourceGtids> ReadFirstGtids(const std::string& path);

// The file a dump from GTID position `position` must start from: the newest
// file whose first GTID state the position has already passed (MariaDB: in
// each domain, at or past the file's last GTID; MySQL: the file's set is a
// subset). A file whose state is empty counts as passed, one whose state
// is not known yet (kNone) does not. NotFound if
// every such file is gone (purged); InvalidArgument if the position's
// flavour is not the files'.
absl::StatusOr<std::string> FileForGtidPosition(const std::vector<StoreFileEntry>& files,
                                                const SourceGtids& position);

// fsync of a directory, so a created/renamed/removed entry survives a crash.
absl::Status SyncDirectory(const std::string& dir);

}  // namespace binrelay::replication
