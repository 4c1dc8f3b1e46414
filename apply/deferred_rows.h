// DeferredRows: changes a drain may not write yet because a move's copier
// is copying their chunk (copy_watermarks.h MustDefer: the copy could write
// an older image over them, or bring back a row they delete), held by the
// pipeline's drain thread until the chunk is on the target.
//
// Keyed tables hold one change per ordered key: a later drain's change to
// the same key supersedes it (it is a full image or a delete, so the last
// change alone decides the row). Tables whose key order is inexact hold
// every change in binlog order, and release them all at once, in order,
// when no chunk of the table is in flight.
//
// A held change is not on the target, so the checkpoint must not pass it:
// floor() is the earliest checkpoint before a held change (the checkpoint
// before the drain it came in), and the pipeline writes the earlier of that
// and its drain's own.
//
// Thread safety: none; the drain thread owns it.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "apply/apply_table.h"
#include "apply/copy_gate.h"
#include "apply/table_buffer.h"
#include "replication/binlog_position.h"

namespace binrelay::apply {

class DeferredRows {
 public:
  // A new drain: rows released to the last one may be freed.
  void BeginDrain() { released_.clear(); }

  // Sorts `rows` (one gated table's drained rows, in drain order, null for
  // a table with none in this drain) whose changes all came after
  // checkpoint `since`: rows whose chunk is in flight are held, the rest
  // are appended to `out` together with held rows now free. The pointers
  // stay valid until the next BeginDrain (and `rows` must too).
  absl::Status Sift(const ApplyTable& t, TableCopyGate& gate, const std::vector<BufferedRow>* rows,
                    const replication::BinlogPosition& since, std::vector<const BufferedRow*>* out);

  // Tables with rows held (for a drain that has none of theirs).
  std::vector<std::pair<const ApplyTable*, TableCopyGate*>> tables() const;
  // The earliest checkpoint before a held change; nullopt if none is held.
  std::optional<replication::BinlogPosition> floor() const;
  size_t rows() const;
  size_t rows(const ApplyTable* t) const;
  size_t bytes() const { return bytes_; }
  bool empty() const { return rows() == 0; }

 private:
  struct Held {
    bool is_delete = false;
    std::string image;
    replication::BinlogPosition since;
  };
  struct TableHeld {
    TableCopyGate* gate = nullptr;
    absl::flat_hash_map<std::string, Held> keyed;  // by ordered key
    std::deque<Held> fifo;                          // inexact key order
  };
  void Release(Held held, std::vector<const BufferedRow*>* out);

  absl::flat_hash_map<const ApplyTable*, TableHeld> tables_;
  // Released to the current drain: images and rows stay put (a deque does
  // not move its elements as it grows).
  std::deque<std::pair<std::string, BufferedRow>> released_;
  std::string key_, scratch_;
  size_t bytes_ = 0;
};

}  // namespace binrelay::apply
