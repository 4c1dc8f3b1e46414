// TableBuffer: one subscribed table's changes since the last drain.
//
// Keyed (the primary key is memory-comparable, table_shape.h): an index from
// the encoded key (row_key.h) to the row's last state, an upsert with its
// full after image or a delete with its full before image. Many changes to
// a row collapse to the last one; draining yields every key once, so a
// drain's statements may run in any order and concurrently. Keys drain in
// the order of their first change: rows inserted in key order (an
// AUTO_INCREMENT key, a bulk load) reach the target in key order, where
// hash order would scatter every REPLACE over the whole B-tree (measured
// about 1.3x slower on the target for an insert-heavy load).
//
// Ordered (character keys under a collation, where different bytes may be
// the same row on the target): a FIFO of the same entries in binlog order,
// applied in that order, never collapsed.
//
// Bytes are counted per entry (image, key and a fixed overhead) so the
// pipeline can hold its soft memory limit. Images live in an ImageArena: a
// key's new image overwrites its old one in place when it fits, otherwise
// it is copied anew and the old copy stays counted until the drain, so
// rewrites that grow cannot exceed the limit unseen.
//
// Thread safety: none; the pipeline's reader thread owns a buffer until it
// hands a drained batch to the flushers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "apply/image_arena.h"

namespace binrelay::apply {

struct BufferedRow {
  bool is_delete = false;
  // Full after image (upsert) or full before image (delete), in the
  // buffer's (then the drained table's) arena.
  std::string_view image;
  size_t capacity = 0;  // bytes allocated for it (an overwrite may reuse them)
};

struct DrainedTable {
  bool keyed = true;
  // keyed: one entry per key; ordered: every change in binlog order.
  std::vector<BufferedRow> rows;
  ImageArena arena;  // holds the rows' images
  size_t bytes = 0;
  uint64_t changes = 0;  // changes buffered (before collapsing)
};

class TableBuffer {
 public:
  // Bytes counted per entry besides its image and key: the map slot and
  // string headers, roughly.
  static constexpr size_t kEntryOverhead = 64;

  // `pool` (may be null) recycles arena chunks between drains.
  explicit TableBuffer(bool keyed, ImageArena::Pool* pool = nullptr)
      : keyed_(keyed), pool_(pool), arena_(pool) {}

  void Upsert(std::string_view key, std::string_view after_image) {
    Put(key, false, after_image);
  }
  void Delete(std::string_view key, std::string_view before_image) {
    Put(key, true, before_image);
  }

  bool keyed() const { return keyed_; }
  size_t bytes() const { return bytes_; }
  size_t entries() const { return rows_.size(); }
  uint64_t changes() const { return changes_; }
  bool empty() const { return entries() == 0; }

  // Everything buffered, leaving the buffer empty.
  DrainedTable Take();

 private:
  void Put(std::string_view key, bool is_delete, std::string_view image);
  BufferedRow Copy(bool is_delete, std::string_view image);

  // Keyed: the index in rows_ of `key`'s entry, or -1.
  int64_t Find(std::string_view key) const;

  bool keyed_;
  ImageArena::Pool* pool_;
  ImageArena arena_;
  // Keyed: keys_[i] is rows_[i]'s key (bytes in arena_). The first
  // ascending_ keys are strictly increasing and found by binary search; the
  // rest are in map_. Rows inserted in key order (an AUTO_INCREMENT key, a
  // bulk load) so never touch the hash map: hashing a million keys into a
  // table that doubled as it grew was half of binrelay's CPU time on
  // bench/apply_bench.sh insert-heavy (perf: Put, rehashing, page faults).
  // Ordered: rows_ is the FIFO; keys_ and map_ stay empty.
  std::vector<std::string_view> keys_;
  size_t ascending_ = 0;
  absl::flat_hash_map<std::string_view, uint32_t> map_;
  std::vector<BufferedRow> rows_;
  size_t last_drain_rows_ = 0;  // to size the next drain's vectors
  size_t bytes_ = 0;
  uint64_t changes_ = 0;
};

}  // namespace binrelay::apply
