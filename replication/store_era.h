// Store eras: the store's files across a change of source. A failover makes
// binrelay follow another server, whose binlog files have names of their
// own that may equal stored ones (every server starts at binlog.000001).
// The files of each source followed are kept apart: era 0 is the store's
// top level (the first source, and every store written before eras
// existed); era N >= 1 is the subdirectory `era-N/`, holding the files of
// the N-th source followed after a switch under the names that source gave
// them. A stored file's name is the source's name with its era's directory
// in front ("era-2/mysql-bin.000007"), so pins, checkpoints and positions
// keep one string per file and order across eras (CompareBinlogNames: era
// first, then the source's order). '/' never appears in a source's file
// name (ValidateBinlogName), so the split is unambiguous.
//
// An era's first file begins where the new source's binlog must be read
// from (a whole file, from offset 4), which can be before the last
// transaction stored in the era before: the GTID state the store held when
// the era began (its entry state, `era-N/.entry-gtids`) tells readers which
// of the era's transactions they have already seen (StoreReader skips
// them), and lies under each era file's opening state as readers choose a
// file to start a GTID position from (FloorMerged).
//
// Thread safety: stateless functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "replication/binlog_position.h"
#include "replication/source_gtids.h"
#include "replication/store_index.h"

namespace binrelay::replication {

inline constexpr std::string_view kEraDirPrefix = "era-";
// Hidden, so listing a directory of binlog files skips it.
inline constexpr std::string_view kEraEntryName = ".entry-gtids";

struct StoredFileName {
  uint32_t era = 0;
  std::string_view source_name;  // the name the source gave the file
};

// "era-2/b.000007" -> {2, "b.000007"}; a name without a valid era prefix
// (every era-0 name) -> {0, name}.
StoredFileName SplitStoredName(std::string_view stored);
// The source's name of a stored file (the stored name without its era).
inline std::string_view SourceNameOf(std::string_view stored) {
  return SplitStoredName(stored).source_name;
}
std::string StoredNameOf(uint32_t era, std::string_view source_name);
// True if `stored` is `source_name` in `era`, without building the name
// (the writer asks this for every event).
bool IsStoredNameOf(std::string_view stored, uint32_t era, std::string_view source_name);

// The stored files a name from a client denotes: the file of that stored
// name, or each file its source gave that name (one per era holding one).
// More than one: the name alone is ambiguous (the caller says so).
std::vector<const StoreFileEntry*> FilesNamed(const std::vector<StoreFileEntry>& files,
                                              std::string_view requested);

std::string EraDirName(uint32_t era);  // "era-3"; era >= 1

// A position the current source reported (SHOW MASTER STATUS, a snapshot's
// binlog_snapshot_file) as the store names it: its file in the store's
// current era. A name already qualified with an era is kept.
BinlogPosition StoredPositionOf(uint32_t current_era, const BinlogPosition& source_position);
// "era-3" -> 3; nullopt for anything else ("era-0", "era-03", "era-x").
std::optional<uint32_t> ParseEraDirName(std::string_view name);

// How an era began: the GTIDs stored before it, and the source's name of
// its first file (the file the new source was read from, at offset 4).
struct EraEntry {
  SourceGtids stored;
  std::string first_file;
  // The server followed (its server_id, as its preflight read it): the
  // era's first file must come from it, not from a server reached by the
  // same address later (a restart with the old [source] host).
  uint32_t server_id = 0;
  // The source's name of the last file stored before the era: a plain
  // name at or before it may also have named a file of the earlier source
  // (purged since), so it cannot be taken for the era's file.
  std::string previous_last_file;
  // The server followed, as binrelay was told to reach it ("host:port"),
  // and when the switch began (Unix seconds): a restart follows it, not
  // the [source] host it left. "" and 0 in an entry written without them.
  std::string source_address;
  int64_t switched_at = 0;
  // The server the switch left: its address as binrelay reached it, and
  // the server_id its stored files carry. A failover never goes back to
  // it (by either). "" and 0 when unknown.
  std::string left_address;
  uint32_t left_server_id = 0;
  bool operator==(const EraEntry&) const = default;
};

// The entry of era `era` >= 1 in store `dir`, written whole and durably
// (WriteFileAtomically) before the era's first file is created; the era's
// directory must exist. Format: "<mariadb|mysql|none>\t<gtid state>\n
// <first file>\t<server_id>\t<previous last file>\n<source address>\t
// <switched at>\t<left address>\t<left server_id>\n" (the third line may
// be absent, or hold only its first two fields).
absl::Status WriteEraEntry(const std::string& dir, uint32_t era, const EraEntry& entry,
                           bool durable);
// NotFound when the era has no entry (never begun); DataLoss when the file
// is garbled.
absl::StatusOr<EraEntry> ReadEraEntry(const std::string& dir, uint32_t era);

}  // namespace binrelay::replication
