// ChangeReader: an apply pipeline's reader. Walks binrelay's store from a
// position, feeds each event to the decoder (whose sink,
// change_reader_sink.h, puts the rows of the subscribed tables into one
// TableBuffer per table), hands the buffers to the pipeline's drain as a
// Drain, stops at a DDL on a subscribed table once everything before it is
// applied, holds where the hold gate asks, and reads back the rows of XA
// transactions prepared before the read began (change_reader_xa.cc).
//
// It owns everything the reader thread touches: the tables being applied
// (table setup fills them before each read), their buffers, the position
// bookkeeping and the XA holds. What it needs of the pipeline around it,
// the single drain slot and the pipeline's status, it asks through
// ChangeReader::Host, an interface it declares for itself.
//
// Thread safety: Read, the table set-up and the sink run on the reader
// thread; changes_read(), xa_held() and buffered_bytes() from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "apply/apply_table.h"
#include "apply/drain.h"
#include "apply/hold_gate.h"
#include "apply/image_arena.h"
#include "apply/pipeline_options.h"
#include "apply/pipeline_state.h"
#include "apply/subscription.h"
#include "apply/table_buffer.h"
#include "apply/xa_holds.h"
#include "replication/binlog_position.h"
#include "replication/store_read_side.h"

namespace binrelay::apply {

// How the source names and changes tables, as table setup found it: which
// DDL names a subscribed table, and whether foreign key actions change rows
// without logging them.
struct SourceTableRules {
  Subscription pattern;  // the configured tables
  // ON DELETE/UPDATE CASCADE and SET NULL are carried out below the binlog.
  bool cascades_unlogged = true;
  // Nonzero: a statement may name a table in another letter case.
  int lower_case_table_names = 0;

  // Whether a table a DDL names is a subscribed one.
  bool NamesOurs(std::string_view db, std::string_view table) const;
  // The table's key among DDL findings ("db\0table"), folded as the source
  // folds names.
  std::string DdlKey(std::string_view db, std::string_view table) const;
};

class ChangeReader {
 public:
  // What the reader needs of the pipeline that runs it. The drain slot
  // holds at most one Drain: a hand-off waits while one is in flight, so
  // drains apply in order.
  class Host {
   public:
    virtual bool stopping() const = 0;
    // Waits `d` unless stopping; false if stopping.
    virtual bool Sleep(absl::Duration d) = 0;
    virtual void SetState(PipelineState state) = 0;
    virtual void SetActivity(PipelineState state, std::string activity) = 0;
    // Waits until the slot is free and claims it (counting the wait as a
    // park when it had to wait): Cancelled when stopping, or the error of
    // a failed drain.
    virtual absl::Status ClaimDrainSlot() = 0;
    // Fills the claimed slot; `keys` and `drain->bytes` feed the status.
    virtual void SubmitDrain(std::unique_ptr<Drain> drain, size_t keys) = 0;
    // Waits until no drain is in flight; its error, if it failed.
    virtual absl::Status WaitForDrain() = 0;
    // Waits up to `up_to` for the drain in flight to end; whether one still
    // is.
    virtual bool WaitWhileDraining(absl::Duration up_to) = 0;
    // The error of a failed drain (OK otherwise).
    virtual absl::Status DrainError() = 0;
    // A transaction ending at `end` was read; whether a drain is in flight.
    virtual bool OnTransactionRead(const replication::BinlogPosition& end) = 0;
    // Bytes of the drain in flight (the soft limit counts them too).
    virtual size_t InflightBytes() const = 0;
    // Changes the flusher holds back for a move's copier (not on the
    // target yet).
    virtual uint64_t DeferredRows() = 0;

   protected:
    ~Host() = default;
  };

  // `hold`, `pin` and `host` belong to the pipeline and outlive the reader;
  // `checkpoint_path` names the local checkpoint in messages.
  ChangeReader(const PipelineOptions& options, replication::StoreReadSide* store, HoldGate* hold,
               const replication::StorePin* pin, std::string checkpoint_path, Host* host);
  ~ChangeReader();
  ChangeReader(const ChangeReader&) = delete;
  ChangeReader& operator=(const ChangeReader&) = delete;

  // Table setup, before each read (reader thread).
  void ClearTables();
  // A checked table, with its buffer.
  void AddTable(std::unique_ptr<ApplyTable> table);
  const absl::flat_hash_map<std::string, std::unique_ptr<ApplyTable>>& tables() const {
    return tables_;
  }
  // The tables as checked (what the decoder passes on).
  void SetExact(Subscription exact) { exact_ = std::move(exact); }
  void SetRules(const SourceTableRules* rules) { rules_ = rules; }

  // Reads from `from` until stopping (OK) or an error: a DDL on a
  // subscribed table (after everything before it is applied), a lost pin, a
  // failed drain, a change that cannot be applied.
  absl::Status Read(const replication::BinlogPosition& from);

  // For status, from any thread.
  uint64_t changes_read() const { return changes_read_.load(std::memory_order_relaxed); }
  uint64_t xa_held() const { return xa_held_.load(std::memory_order_relaxed); }
  size_t buffered_bytes() const { return buffered_bytes_.load(std::memory_order_relaxed); }

 private:
  class Sink;
  // XA transactions prepared before read_start_ and undecided there, read
  // back from the store by the first XA COMMIT that needed one.
  struct ReadBack {
    XaHolds holds;
    std::map<std::string, std::string> unusable;  // xid -> why it cannot be applied
    std::map<const ApplyTable*, ApplyTable> shapes;  // for tables not yet seen live
    std::string missing;  // why the store could not tell (empty: it could)
  };

  // Hands the buffers to the drain (waits if one is in flight).
  absl::Status HandOff();
  // Whether an idle drain should take the buffer before flush_interval.
  bool WorthDrainingEarly() const;
  // Holds here if the hold gate asks to (at a transaction boundary, `at`
  // being the end of the last event read), with everything before it on
  // the target.
  absl::Status MaybeHold(const replication::BinlogPosition& at);
  // change_reader_xa.cc: the rows of XA transaction `xid`, committed now
  // but prepared before read_start_ (ScanForXa reads them back once per
  // read). None, with a warning, when the store no longer holds its XA
  // PREPARE; FailedPrecondition when they cannot be applied to the table
  // as it is.
  absl::StatusOr<std::vector<HeldRow>> ReadBackXa(const std::string& xid);
  absl::Status ScanForXa();

  const PipelineOptions& options_;
  replication::StoreReadSide* const store_;
  HoldGate* const hold_;
  const replication::StorePin* const pin_;
  const std::string checkpoint_path_;
  Host* const host_;
  const SourceTableRules* rules_ = nullptr;

  // Arena chunks recycled from flushed drains to the buffers (declared
  // before everything holding an arena, so it outlives them).
  std::unique_ptr<ImageArena::Pool> image_pool_;
  absl::flat_hash_map<std::string, std::unique_ptr<ApplyTable>> tables_;  // "db\0t"
  absl::flat_hash_map<const ApplyTable*, std::unique_ptr<TableBuffer>> buffers_;
  std::optional<Subscription> exact_;

  replication::BinlogPosition read_start_;  // where the current read began
  std::optional<ReadBack> read_back_;
  replication::BinlogPosition last_commit_;
  replication::BinlogPosition handed_checkpoint_;  // of the last hand-off
  // The checkpoint the last drain carried (before which no change of the
  // next drain lies): the next drain's `since`.
  replication::BinlogPosition last_drain_checkpoint_;
  uint32_t last_commit_ts_ = 0;
  std::atomic<size_t> buffered_bytes_{0};  // written by the reader, read by status
  absl::Time last_handoff_ = absl::InfinitePast();
  uint64_t changes_since_handoff_ = 0;  // row changes buffered since the last hand-off
  absl::Status ddl_stop_;  // set by a DDL on a subscribed table
  XaHolds xa_;             // prepared XA transactions' rows, until decided
  std::atomic<uint64_t> xa_held_{0};  // xa_.held(), for status
  std::atomic<uint64_t> changes_read_{0};
};

}  // namespace binrelay::apply
