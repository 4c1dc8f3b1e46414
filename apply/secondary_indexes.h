// Secondary indexes a move adds after its copy: a table's plain
// (non-unique) secondary indexes are left out of the CREATE TABLE on the
// target and built once the rows are there, in one ALTER TABLE. InnoDB
// then builds each index from sorted rows instead of inserting every key at
// random places while the copy runs (for a 1M-row table with one INT index,
// the copy plus the build takes about 20% less of the target's time than
// the copy into the indexed table; bench/move_bench.sh).
//
// Only plain KEY lines are deferred. UNIQUE keys stay: the copy's INSERT
// IGNORE and the pipeline's REPLACE must see them (a duplicate must fail
// the copy, not appear once the index is built). FULLTEXT and SPATIAL stay
// as they are, and so does a KEY led by the AUTO_INCREMENT column (InnoDB
// refuses the table without one, error 1075). A table with a FOREIGN KEY
// keeps all its indexes (InnoDB would create an index for the constraint
// by itself, and the later one would duplicate it), and a move in which
// any table has one defers nothing: a parent's referenced columns must be
// indexed when the child is created.
//
// Thread safety: pure functions, and one caller per SqlSource.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "replication/sql_source.h"

namespace binrelay::apply {

struct IndexDefinition {
  std::string name;        // unquoted
  std::string definition;  // "KEY `k_1` (`k`)" as SHOW CREATE TABLE prints it
};

// True if the table declares a FOREIGN KEY (see above).
bool ReferencesOtherTables(std::string_view create_table);

// The plain secondary indexes of a SHOW CREATE TABLE statement, in order
// (none for a table with a FOREIGN KEY, see above).
std::vector<IndexDefinition> DeferrableIndexes(std::string_view create_table);

// `create_table` without the lines of DeferrableIndexes (the commas fixed).
std::string WithoutDeferrableIndexes(std::string_view create_table);

// What an index build's session sorts its keys in on MySQL 8.0.27 and later
// (innodb_ddl_buffer_size; the server's default is 1 MiB).
inline constexpr uint64_t kIndexSortBytes = 64 << 20;

// Adds to `target_table` (quoted, qualified) each of `indexes` it does not
// have by name, in one ALTER TABLE ... ALGORITHM=INPLACE, LOCK=NONE: the
// server builds them while the move's pipeline keeps writing. If the server
// cannot build them online, it builds them with writes waiting, and
// `not_online` gets its reason; with `online_only` it fails instead (the
// server's 1845 or 1846). The session sorts in kIndexSortBytes where
// the server has the setting and takes it; otherwise (MariaDB, older MySQL,
// any refusal) the build uses the server's default, logged. Returns the
// names added (empty: none was missing).
absl::StatusOr<std::vector<std::string>> AddMissingIndexes(
    replication::SqlSource& target, const std::string& target_table,
    const std::vector<IndexDefinition>& indexes, std::string* not_online = nullptr,
    bool online_only = false);

}  // namespace binrelay::apply
