// StoreReader: reads the local store's events in order from a position, for a
// dump. It never reads past the store's committed end, so a reader only ever
// sees whole, durable transactions (a crash can never take back an event a
// replica already received). At the end of a closed file it moves to the next
// one and says so (the sender then emits a fake ROTATE).
//
// The current file is memory-mapped up to its readable end, so events are
// viewed in the page cache without a copy (several dumps of one file share
// those pages). Committed bytes never change or shrink, so the mapping
// stays valid; it grows with mremap as the committed end moves. An event
// view stays valid until the next call (a growing mapping may move).
//
// A store era's files (store_era.h) may repeat transactions stored before
// the era: the reader skips each one whose GTID the era's entry state holds,
// so every reader (dumps by file or GTID, tail, apply pipelines) sees each
// transaction once; positions then jump over the skipped bytes, as a
// MariaDB GTID dump's do.
//
// Thread safety: a reader belongs to one dump; the store may be written
// concurrently (only committed bytes are read, and they never change).
// Lifetime: the store must outlive the reader.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "protocol/event_header.h"
#include "protocol/format_description.h"
#include "replication/binlog_position.h"
#include "replication/source_gtids.h"
#include "replication/store_read_side.h"
#include "replication/transaction_boundary.h"

namespace binrelay::replication {

class StoreReader {
 public:
  enum class Step { kEvent, kNextFile, kCaughtUp };

  // Opens `start.file` at `start.offset`. Errors (NotFound/OutOfRange) name
  // the file, the offset and what the store holds: a file that is not (or no
  // longer) stored, an offset below 4 or beyond the stored end.
  static absl::StatusOr<std::unique_ptr<StoreReader>> Open(const StoreReadSide* store,
                                                           const BinlogPosition& start);
  ~StoreReader();
  StoreReader(const StoreReader&) = delete;
  StoreReader& operator=(const StoreReader&) = delete;

  // kEvent: *event is the next event (a view into the reader's buffer; its
  // offset is where it starts). kNextFile: the current file ended and the
  // reader moved to offset 4 of the next one, where its FDE is the next
  // event. kCaughtUp: nothing committed beyond position(). DataLoss if
  // stored bytes do not frame as events (or the start was not at an event).
  absl::StatusOr<Step> Next(protocol::EventView* event);

  // Reads the event at `offset` of the current file (the FDE at 4), without
  // moving. The view is valid until the next call.
  absl::StatusOr<protocol::EventView> PeekAt(uint64_t offset);

  // Where the next event starts.
  const BinlogPosition& position() const { return position_; }
  // Where the file finished by the last kNextFile ended (empty before one).
  const BinlogPosition& finished_file_end() const { return finished_; }
  // The format of the current file (from its FDE, once read or peeked).
  const protocol::FormatDescription& format() const { return format_; }
  // The committed end observed by the last Next() that returned kCaughtUp.
  uint64_t seen_sequence() const { return seen_sequence_; }
  // Transactions skipped as repeats of stored ones (see above).
  uint64_t repeats_skipped() const { return repeats_skipped_; }

 private:
  explicit StoreReader(const StoreReadSide* store) : store_(store) {}
  absl::Status OpenFile(const std::string& name);
  // Refreshes limit_ (how far the current file may be read) from the store;
  // sets *has_next if the current file is closed and a newer one exists.
  void RefreshLimit(std::string* next_file);
  absl::StatusOr<protocol::EventView> ReadAt(uint64_t offset);
  // Next without skipping repeats.
  absl::StatusOr<Step> NextStored(protocol::EventView* event);
  // True if `event` belongs to a repeated transaction (and is skipped).
  absl::StatusOr<bool> SkipRepeat(const protocol::EventView& event);
  // Makes the mapping cover the file's bytes [offset, offset + n).
  absl::Status Load(uint64_t offset, size_t n);
  const char* Data(uint64_t offset) const { return map_ + offset; }
  void Unmap();

  const StoreReadSide* store_;
  int fd_ = -1;
  BinlogPosition position_;
  BinlogPosition finished_;
  uint64_t limit_ = 0;        // readable end of the current file
  uint64_t seen_sequence_ = 0;
  char* map_ = nullptr;       // the file's bytes [0, map_len_)
  size_t map_len_ = 0;
  protocol::FormatDescription format_;
  // Set while the current file is an era's first: its entry state.
  SourceGtids floor_;
  bool skipping_ = false;          // inside a repeated transaction
  TransactionBoundary skip_boundary_;
  uint64_t repeats_skipped_ = 0;
};

}  // namespace binrelay::replication
