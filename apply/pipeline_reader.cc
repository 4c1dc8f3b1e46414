// ApplyPipeline's reader: walks the store from the checkpoint, feeds each
// event to the decoder (whose sink, pipeline_sink.h, buffers the rows),
// hands the buffers to the drain thread, stops at a DDL on a subscribed
// table once everything before it is applied, holds where the hold gate
// asks, and reads back the rows of XA transactions prepared before the
// read began.
#include <memory>

#include "absl/strings/str_cat.h"
#include "apply/change_decoder.h"
#include "apply/pipeline.h"
#include "apply/pipeline_sink.h"
#include "protocol/status_macros.h"
#include "replication/store_reader.h"
#include "replication/transaction_boundary.h"
#include "spdlog/spdlog.h"

namespace binrelay::apply {

absl::Status ApplyPipeline::ScanForXa() {
  read_back_.emplace();
  ReadBack& rb = *read_back_;
  std::vector<replication::StoreFileEntry> files = store_->CommittedFiles();
  if (files.empty() || !replication::PositionBefore({files.front().name, 4}, read_start_)) {
    rb.missing = "binrelay's store holds nothing before it";
    return absl::OkStatus();
  }
  const replication::BinlogPosition from{files.front().name, 4};
  // Retention must not purge what is being read.
  replication::StorePin pin =
      store_->Pin(from, absl::StrCat("apply pipeline ", options_.name, " (reading back XA)"));
  SetActivity(PipelineState::kPreparing,
              absl::StrCat("reading the store from ", from.ToString(), " to ",
                           read_start_.ToString(), " for XA transactions prepared before it"));
  spdlog::info("apply pipeline {}: reading the store from {} to {} for the rows of XA "
               "transactions prepared before this pipeline started reading",
               options_.name, from.ToString(), read_start_.ToString());
  Sink sink(this, &rb.holds, &rb);
  absl::Status s = [&]() -> absl::Status {
    BR_ASSIGN_OR_RETURN(std::unique_ptr<replication::StoreReader> reader,
                        replication::StoreReader::Open(store_, from));
    BR_RETURN_IF_ERROR(reader->PeekAt(4).status());
    ChangeDecoder decoder(&*exact_, nullptr, &sink);
    replication::TransactionBoundary boundary;
    boundary.Reset(from);
    // Up to where the reading began: everything after it is being read now.
    while (!stopping_ && replication::PositionBefore(reader->position(), read_start_)) {
      if (pin.lost()) return absl::DataLossError(pin.lost_reason());
      protocol::EventView event;
      BR_ASSIGN_OR_RETURN(replication::StoreReader::Step step, reader->Next(&event));
      if (step == replication::StoreReader::Step::kNextFile) continue;
      if (step == replication::StoreReader::Step::kCaughtUp) break;
      const replication::BinlogPosition& end = reader->position();
      BR_ASSIGN_OR_RETURN(bool ends, boundary.OnEvent(event, reader->format(), end));
      BR_RETURN_IF_ERROR(
          decoder.OnEvent(replication::StreamEvent{event, reader->format(), end, ends}));
    }
    return absl::OkStatus();
  }();
  SetState(PipelineState::kRunning);
  if (stopping_) return absl::CancelledError("stopping");
  if (absl::IsResourceExhausted(s)) return s;
  if (!s.ok()) {
    // Unreadable (purged meanwhile, damaged): as if not stored.
    rb.holds = XaHolds();
    rb.unusable.clear();
    rb.missing = absl::StrCat("reading the store for it failed: ", s.message());
    return absl::OkStatus();
  }
  spdlog::info("apply pipeline {}: {} XA transaction(s) with rows of subscribed tables were "
               "undecided at {}",
               options_.name, rb.holds.held(), read_start_.ToString());
  return absl::OkStatus();
}

absl::StatusOr<std::vector<HeldRow>> ApplyPipeline::ReadBackXa(const std::string& xid) {
  // One scan per read, on the first commit that needs one: it keeps every
  // XA transaction still undecided where the read began.
  if (!read_back_) BR_RETURN_IF_ERROR(ScanForXa());
  ReadBack& rb = *read_back_;
  if (auto it = rb.unusable.find(xid); it != rb.unusable.end()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "apply pipeline ", options_.name, ": XA COMMIT ", xid, " after ", last_commit_.ToString(),
        " commits an XA transaction prepared before ", read_start_.ToString(),
        " (where this pipeline started reading) that cannot be applied: ", it->second,
        "; apply its changes to the target by hand, then move the checkpoint past this XA "
        "COMMIT (UPDATE ", options_.checkpoint_schema, ".apply_checkpoint and remove ",
        local_checkpoint_.path(), "), or copy the tables again"));
  }
  bool seen = false;
  std::vector<HeldRow> rows = rb.holds.Commit(xid, &seen);
  rb.holds.EndTransaction();
  if (!seen) {
    std::string why = rb.missing.empty() ? "the store does not hold its XA PREPARE" : rb.missing;
    spdlog::warn("apply pipeline {}: XA COMMIT {} after {}: its XA PREPARE came before {}, "
                 "where this pipeline started reading, and {}; if it changed subscribed "
                 "tables, those rows are not on the target (compare the tables, or copy them "
                 "again)",
                 options_.name, xid, last_commit_.ToString(), read_start_.ToString(), why);
    return rows;
  }
  // Tables not yet seen live take the shape their rows were read with, as
  // the live reader would have from their first TABLE_MAP.
  for (const HeldRow& r : rows) {
    if (r.table->def_ready) continue;
    auto it = rb.shapes.find(r.table);
    if (it != rb.shapes.end() && it->second.def_ready) {
      r.table->def = it->second.def;
      r.table->def_ready = true;
    }
  }
  spdlog::info("apply pipeline {}: XA {}: {} row change(s) of subscribed tables read back",
               options_.name, xid, rows.size());
  return rows;
}

absl::Status ApplyPipeline::ReadLoop() {
  std::unique_ptr<replication::StoreReader> reader;
  while (true) {
    auto opened = replication::StoreReader::Open(store_, position_);
    if (opened.ok()) {
      reader = std::move(*opened);
      break;
    }
    // A start the store has not reached yet (binrelay just started, or the
    // checkpoint is ahead of what was stored before a crash of the store's
    // host) is waited for; a file older than the store's is gone for good.
    auto files = store_->CommittedFiles();
    const bool ahead =
        files.empty() || replication::CompareBinlogNames(position_.file, files.back().name) > 0 ||
        (position_.file == files.back().name && position_.offset > files.back().size);
    if (!ahead) {
      // The store may have received the file between Open's look at it and
      // this one (the first dump at binrelay's start): ask once more.
      auto again = replication::StoreReader::Open(store_, position_);
      if (!again.ok()) return again.status();
      reader = std::move(*again);
      break;
    }
    SetActivity(PipelineState::kPreparing,
                absl::StrCat("waiting for the store to reach ", position_.ToString()));
    if (!Sleep(absl::Milliseconds(200))) return absl::OkStatus();
  }
  BR_RETURN_IF_ERROR(reader->PeekAt(4).status());  // the file's format
  Sink sink(this);
  xa_ = XaHolds();  // what a previous read held is read again from position_
  read_start_ = position_;
  read_back_.reset();
  ChangeDecoder decoder(&*exact_, nullptr, &sink);
  replication::TransactionBoundary boundary;
  boundary.Reset(position_);
  last_commit_ = position_;
  handed_checkpoint_ = position_;
  last_drain_checkpoint_ = position_;
  SetState(PipelineState::kRunning);
  ddl_stop_ = absl::OkStatus();
  bool caught_up_state = false;
  // A lost pin or a failed drain is noticed within this many events (both
  // checks take a lock: not once per event), and at every file change and
  // every wait at the end of the store.
  constexpr uint32_t kCheckEvery = 256;
  uint32_t until_check = 0;
  while (!stopping_) {
    if (until_check-- == 0) {
      until_check = kCheckEvery;
      if (pin_.lost()) return absl::DataLossError(pin_.lost_reason());
      absl::MutexLock l(&mu_);
      if (!drain_error_.ok()) return drain_error_;
    }
    protocol::EventView event;
    BR_ASSIGN_OR_RETURN(replication::StoreReader::Step step, reader->Next(&event));
    if (step == replication::StoreReader::Step::kNextFile) {
      until_check = 0;
      continue;
    }
    if (step == replication::StoreReader::Step::kCaughtUp) {
      until_check = 0;
      if (hold_.Wanted() && !boundary.in_transaction()) {
        BR_RETURN_IF_ERROR(MaybeHold(boundary.last_boundary()));
        if (stopping_) break;
      }
      const bool have_rows = buffered_bytes_ > 0;
      const bool moved = !(last_commit_ == handed_checkpoint_);
      if (have_rows || (moved && absl::Now() - last_handoff_ >= absl::FromChrono(options_.flush_interval))) {
        bool busy;
        {
          absl::MutexLock l(&mu_);
          // Rows are buffered and nothing more is stored yet: the drain
          // thread's end is the next thing worth waking for (not the
          // store's next 100 ms tick, which left the target idle for up
          // to that long after every drain of a catch-up).
          if (have_rows) {
            const absl::Time deadline = absl::Now() + absl::Milliseconds(100);
            while (draining_ && !stopping_) {
              if (cv_.WaitWithDeadline(&mu_, deadline)) break;
            }
          }
          busy = draining_;
        }
        if (!busy && !stopping_) BR_RETURN_IF_ERROR(HandOff());
      }
      if (!caught_up_state && buffered_bytes_ == 0) {
        SetState(PipelineState::kCaughtUp);
        caught_up_state = true;
      }
      store_->WaitForCommitted(reader->seen_sequence(), absl::Milliseconds(100), nullptr);
      continue;
    }
    if (caught_up_state) {
      SetState(PipelineState::kRunning);
      caught_up_state = false;
    }
    const replication::BinlogPosition& end = reader->position();
    BR_ASSIGN_OR_RETURN(bool ends, boundary.OnEvent(event, reader->format(), end));
    replication::StreamEvent e{event, reader->format(), end, ends};
    BR_RETURN_IF_ERROR(decoder.OnEvent(e));  // the sink's OnEvent and OnCommit
    if (!ends) {
      // Events outside transactions (a rotation, a checkpoint) move the
      // boundary too: a snapshot's position may be just after one.
      if (hold_.Wanted() && !boundary.in_transaction()) {
        BR_RETURN_IF_ERROR(MaybeHold(boundary.last_boundary()));
      }
      continue;
    }
    last_commit_ = end;
    last_commit_ts_ = event.header.timestamp;
    if (!ddl_stop_.ok() && xa_.held() > 0) {
      // The checkpoint cannot pass the DDL without dropping the held rows,
      // and a restart from before them would meet the DDL again.
      ddl_stop_ = absl::FailedPreconditionError(absl::StrCat(
          ddl_stop_.message(), "; but ", xa_.held(), " prepared XA transaction(s) on subscribed "
          "tables, logged before it, are still undecided there, and the pipeline keeps its "
          "checkpoint before them: it cannot resume past this DDL by itself. Once they are "
          "decided, apply their outcome and the DDL to the target, then set the checkpoint "
          "past the DDL and their XA COMMIT or XA ROLLBACK (a commit read from a checkpoint "
          "before it is read back in the old shape and refused) (UPDATE ",
          options_.checkpoint_schema, ".apply_checkpoint and remove ",
          local_checkpoint_.path(), "), or copy the tables again"));
    }
    if (!ddl_stop_.ok()) {
      // Everything before the DDL goes to the target, then the checkpoint
      // moves past it; only then does the pipeline stop.
      BR_RETURN_IF_ERROR(HandOff());
      BR_RETURN_IF_ERROR(WaitForDrain());
      return ddl_stop_;
    }
    xa_held_.store(xa_.held(), std::memory_order_relaxed);
    bool busy;
    {
      absl::MutexLock l(&mu_);
      status_.read = end;
      status_.buffered_bytes = buffered_bytes_;
      busy = draining_;
    }
    // WorthDrainingEarly walks the buffers: only when the drain is idle.
    if (!busy && buffered_bytes_ > 0 &&
        (absl::Now() - last_handoff_ >= absl::FromChrono(options_.flush_interval) ||
         WorthDrainingEarly())) {
      BR_RETURN_IF_ERROR(HandOff());
    }
    if (hold_.Wanted()) BR_RETURN_IF_ERROR(MaybeHold(end));
  }
  return absl::OkStatus();
}

// A drain thread left idle while the reader is still catching up is target
// time lost for good. Waiting out flush_interval pays only when changes
// collapse (a hot row rewritten many times is written once): so the buffer
// goes early once it holds a batch (rows or bytes) for every connection and
// its changes
// collapse less than 2 to 1 (bulk inserts, a pipeline far behind on mostly
// distinct rows). The drain thread's idle time before each drain of
// bench/apply_bench.sh insert-heavy (1M rows, about 2.5 s of drains) fell
// from 165 ms to 53 ms, most of it now binrelay's own start.
bool ApplyPipeline::WorthDrainingEarly() const {
  size_t keys = 0;
  for (const auto& [table, buffer] : buffers_) keys += buffer->entries();
  const bool enough = keys >= options_.batch_rows * options_.concurrency ||
                      buffered_bytes_ >= options_.batch_bytes * options_.concurrency;
  return enough && changes_since_handoff_ < 2 * keys;
}

absl::Status ApplyPipeline::WaitForDrain() {
  absl::MutexLock l(&mu_);
  while (draining_ && !stopping_) cv_.Wait(&mu_);
  return drain_error_;
}

absl::Status ApplyPipeline::HandOff() {
  {
    absl::MutexLock l(&mu_);
    if (draining_) ++status_.parked;
    while (draining_ && !stopping_) cv_.Wait(&mu_);
    if (stopping_) return absl::CancelledError("stopping");
    if (!drain_error_.ok()) return drain_error_;
    // Claimed now, in the same critical section as the wait: the drain
    // thread's own flush of held-back rows must not start meanwhile.
    draining_ = true;
  }
  auto drain = std::make_unique<Drain>();
  size_t keys = 0;
  for (auto& [table, buffer] : buffers_) {
    if (buffer->empty()) continue;
    keys += buffer->entries();
    drain->bytes += buffer->bytes();
    drain->tables.emplace_back(table, buffer->Take());
  }
  drain->checkpoint = last_commit_;
  // Not past a prepared XA transaction the source has not decided yet: a
  // restart must read its rows again.
  if (auto held = xa_.earliest(); held && replication::PositionBefore(*held, last_commit_)) {
    drain->checkpoint = *held;
  }
  drain->checkpoint_ts = last_commit_ts_;
  drain->since = last_drain_checkpoint_;
  last_drain_checkpoint_ = drain->checkpoint;
  handed_checkpoint_ = last_commit_;
  last_handoff_ = absl::Now();
  changes_since_handoff_ = 0;
  absl::MutexLock l(&mu_);
  inflight_bytes_ = drain->bytes;
  buffered_bytes_ = 0;
  status_.buffered_bytes = drain->bytes;
  status_.buffered_keys = keys;
  pending_ = std::move(drain);
  cv_.SignalAll();
  return absl::OkStatus();
}

absl::Status ApplyPipeline::MaybeHold(const replication::BinlogPosition& at) {
  const std::optional<uint64_t> ticket = hold_.ShouldHold(at, last_commit_);
  if (!ticket) return absl::OkStatus();
  // Everything read goes to the target, checkpoint and all.
  BR_RETURN_IF_ERROR(HandOff());
  BR_RETURN_IF_ERROR(WaitForDrain());
  {
    absl::MutexLock l(&mu_);
    // Changes still held for a copier are not on the target: no position
    // here means "everything before it is applied". Try again later. (Only
    // a drain of the reader's adds held changes: none runs until it
    // resumes.)
    if (status_.deferred != 0) return absl::OkStatus();
  }
  hold_.Hold(*ticket, at, last_commit_);
  return absl::OkStatus();
}

}  // namespace binrelay::apply
