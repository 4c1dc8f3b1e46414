// MoveOptions: one move of tables to another server (a [move.NAME] section
// of the serve configuration, or [move] of `binrelay move`; conf/binrelay.cnf
// documents each key and its default).
//
// Thread safety: plain values.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "apply/move_test_points.h"
#include "apply/pipeline_options.h"
#include "protocol/client_connection.h"

namespace binrelay::apply {

struct MoveOptions {
  // The apply pipeline's options: name (NAME), target, tables,
  // target_schema and the apply tunables. Its start is the store's end
  // when the move begins.
  PipelineOptions apply;
  // What happens once the copy is verified: auto (cut over as soon as the
  // backlog is trivial), manual (wait, catching up, until the operator
  // asks), none (keep applying changes, never lock the source).
  enum class Cutover { kAuto, kManual, kNone };
  Cutover cutover = Cutover::kAuto;
  // Each chunk is sized to take about this long to copy.
  std::chrono::milliseconds chunk_time{1000};
  size_t copy_threads = 2;  // chunks in flight (1 for keys under a collation)
  size_t copy_batch_bytes = 1 << 20;  // SQL (or bulk command) per INSERT IGNORE
  // A chunk's rows are read whole before they are written: each chunk (and
  // each range the checksum repairs) holds at most about this many bytes
  // of rows, so a table of large rows gets chunks of fewer rows (down to
  // one) and a copy thread's memory stays bounded.
  size_t copy_chunk_bytes = 64 << 20;
  // The copy writes COM_STMT_BULK_EXECUTE where the target takes it, else
  // prepared multi-row statements (range_copier.h); off: multi-row INSERT
  // IGNORE text.
  bool bulk_copy = true;
  // Cutover: how long LOCK TABLES may wait for the source's metadata
  // locks, and how long the tables may stay locked while the last changes
  // are applied; past either the lock is released and retried later.
  std::chrono::milliseconds cutover_lock_wait{2000};
  std::chrono::milliseconds cutover_timeout{5000};
  // Cutover attempts, 5 s apart, before the move gives up (it keeps its
  // checkpoint; the source's tables are never left locked).
  size_t cutover_attempts = 60;
  // Plain secondary indexes of a table the move creates are built after
  // the copy (secondary_indexes.h); off: created with the table.
  bool indexes_after_copy = true;
  // Cutover renames each source table to `<t>_old` (off: leaves them).
  bool rename_source = true;
  // binrelay's store directory (set by the command, not a key): preflight
  // checks it can hold the binlog written while the move runs.
  std::string store_dir;
  // Where tests stop the move (move_test_points.h); null in production.
  std::shared_ptr<MoveTestPoints> test_points;
};

const char* CutoverName(MoveOptions::Cutover c);

}  // namespace binrelay::apply
