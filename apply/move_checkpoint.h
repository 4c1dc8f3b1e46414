// MoveCheckpoint: where a move stands, per table, kept on the target in
// <checkpoint_schema>.move_checkpoint (one row per move and table) so that a
// move killed in any phase continues where it was: the copier after the
// last bound whose every chunk up to it was on the target (recopying at
// most the chunks that were in flight), with the guard its watermarks need
// (copy_watermarks.h), and the checksum after the last range it compared.
// The changes themselves resume from the move's apply pipeline's own
// checkpoint (apply_checkpoint), which never passes a change not yet on
// the target.
//
// Thread safety: functions over one SqlSource each.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "apply/key_range_chunker.h"
#include "apply/move_phase.h"
#include "replication/sql_source.h"

namespace binrelay::apply {

struct MoveTableProgress {
  std::string db, table;  // the source's names (as loaded)
  MovePhase phase = MovePhase::kStarting;  // the move's phase when written
  // FILE:POS where the move's pipeline started (before the first chunk):
  // where it resumes if it never wrote a checkpoint of its own.
  std::string start;
  std::optional<KeyBound> copied;  // every key at or below it is on the target
  std::optional<std::string> guard;  // CopyWatermarks::checkpoint_guard()
  bool copy_done = false;
  std::optional<KeyBound> checked;  // the checksum compared every key up to it
  bool checksum_done = false;
};

// Creates the table if needed.
absl::Status CreateMoveCheckpointTable(replication::SqlSource& target, const std::string& schema);

// The rows of move `name`, keyed "db.table" (the source's names).
absl::StatusOr<std::map<std::string, MoveTableProgress>> LoadMoveCheckpoint(
    replication::SqlSource& target, const std::string& schema, const std::string& name);

absl::Status SaveMoveCheckpoint(replication::SqlSource& target, const std::string& schema,
                                const std::string& name, const std::string& db,
                                const std::string& table, const MoveTableProgress& p);
// The REPLACE statement SaveMoveCheckpoint runs (several go in one
// transaction when every table's row changes at once).
std::string MoveCheckpointStatement(const std::string& schema, const std::string& name,
                                    const std::string& db, const std::string& table,
                                    const MoveTableProgress& p);

// Removes move `name`'s rows (a move starting afresh).
absl::Status ClearMoveCheckpoint(replication::SqlSource& target, const std::string& schema,
                                 const std::string& name);

}  // namespace binrelay::apply
