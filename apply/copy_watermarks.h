// Where a move's copier stands in one table's primary-key order, and what
// that means for the changes the apply pipeline reads from the binlog
// meanwhile: the watermark scheme of spirit's change source
// (github.com/block/spirit, pkg/table chunkers and the buffered map).
//
// The copier hands out chunks in key order, each the range (lower, upper]
// of the one before's upper bound to its own (the first from the start of
// the table, the last to its end), reads each from the source and writes it
// to the target with INSERT IGNORE. Meanwhile:
//  - at ingest, a change to a key above the high watermark (the upper bound
//    of the last chunk handed out) may be dropped: the copier reads that
//    key later, from a snapshot that already holds the change. Never before
//    the first chunk is handed out, never at or below the highest key
//    admitted while no chunk covered it (a change applied before its chunk
//    makes the copy's INSERT IGNORE skip the row, so every later change to
//    it must reach the target too), and never at or below the guard a
//    resumed copy's checkpoint carried;
//  - at flush, a change to a key whose chunk is being copied waits until
//    that chunk is on the target (the copy could otherwise write an older
//    image over it); keys not handed out yet and keys already copied are
//    applied.
// The drop relies on the copier's snapshot seeing every change the binlog
// delivered before it: binlog order and engine commit order can differ for
// a moment, so a move runs its repairing checksum before cutover (spirit
// documents the same window). Disable() turns all of this off before
// cutover: every change is then kept and applied.
//
// Keys are OrderedKey bytes (ordered_key.h): memcmp order is the primary
// key's order. A checkpoint written while changes are deferred must stay
// before the earliest of them (they are not on the target yet), and it
// records low_watermark() and checkpoint_guard() with the binlog position.
// Thread safety: none; the move serializes
// calls.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace binrelay::apply {

class CopyWatermarks {
 public:
  // `exact_order`: byte order of ordered keys is the server's order of the
  // key (every key column numeric, temporal or binary: table_shape.h
  // KeyIsMemComparable). Otherwise (a key
  // under a collation, where 'B' < 'a' in bytes but not in the chunks'
  // SQL), nothing is ever dropped, and while any chunk is in flight every
  // change waits.
  explicit CopyWatermarks(bool exact_order = true) : exact_order_(exact_order) {}
  // A resumed copy: every key at or below `copied` is on the target (the
  // copy starts after it). No change to a key at or below the higher of
  // `checkpoint_guard` (the run before's checkpoint_guard()) and
  // `target_highest` (the target table's highest key now, by ordered
  // bytes: a chunk the run before copied after its checkpoint left rows
  // the re-copy skips) is ever dropped.
  CopyWatermarks(bool exact_order, std::optional<std::string> copied,
                 std::optional<std::string> checkpoint_guard,
                 std::optional<std::string> target_highest);

  // The copier starts the chunk (high watermark, upper]; nullopt `upper`: to
  // the end of the table (the last chunk; none may follow). Returns the
  // chunk's id; Internal if `upper` does not rise (exact order) or a chunk
  // follows the last.
  absl::StatusOr<uint64_t> Dispatch(std::optional<std::string> upper);
  // Chunk `id`'s rows are on the target.
  void Complete(uint64_t id);

  // Ingest, for every change read: false when it may be dropped (its key is
  // above the high watermark and unguarded: the copier reads it later);
  // true when it is kept, and then its key is noted for the guard.
  bool Admit(std::string_view key);
  // Flush: whether a buffered change to `key` must wait (its chunk is being
  // copied).
  bool MustDefer(std::string_view key) const;

  // Every key at or below this is on the target (nullopt: none yet); a
  // resumed copy starts after it.
  const std::optional<std::string>& low_watermark() const { return low_; }
  // The highest key a change may have been applied to ahead of the copier:
  // a checkpoint stores it, and a resume passes it as `guard`.
  std::optional<std::string> checkpoint_guard() const;
  // The last chunk, to the end of the table, is on the target.
  bool copy_done() const { return done_; }

  // Before cutover: from now on no change is dropped or deferred.
  void Disable() { enabled_ = false; }
  bool enabled() const { return enabled_; }
  bool exact_order() const { return exact_order_; }

  // For status and the log.
  uint64_t keys_dropped_above_high() const { return dropped_; }
  size_t chunks_in_flight() const { return in_flight_.size(); }

 private:
  struct Chunk {
    std::optional<std::string> lower;  // exclusive; nullopt: the table's start
    std::optional<std::string> upper;  // inclusive; nullopt: the table's end
    bool complete = false;
  };
  // `key` is above every chunk handed out.
  bool NotYetDispatched(std::string_view key) const;

  bool exact_order_ = true;
  bool enabled_ = true;
  bool dispatched_any_ = false;  // a chunk went out (or a resume's copied prefix)
  bool last_dispatched_ = false;  // the chunk to the end of the table went out
  bool done_ = false;
  std::optional<std::string> high_;  // upper bound of the last chunk handed out
  std::optional<std::string> low_;
  std::optional<std::string> guard_;  // highest key admitted while no chunk covered it
  uint64_t next_id_ = 0;
  // Chunks handed out and not yet folded into low_, in key order.
  std::map<uint64_t, Chunk> in_flight_;
  uint64_t dropped_ = 0;
};

}  // namespace binrelay::apply
