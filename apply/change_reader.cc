// ChangeReader's read loop: the store from a position through the decoder
// into the buffers, the hand-offs to the drain, DDL stops and holds.
#include "apply/change_reader.h"

#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "apply/change_decoder.h"
#include "apply/change_reader_sink.h"
#include "apply/table_key.h"
#include "protocol/status_macros.h"
#include "replication/store_index.h"
#include "replication/store_reader.h"
#include "replication/transaction_boundary.h"

namespace binrelay::apply {

bool SourceTableRules::NamesOurs(std::string_view db, std::string_view table) const {
  return lower_case_table_names != 0 ? pattern.MatchesIgnoringCase(db, table)
                                     : pattern.Matches(db, table);
}

std::string SourceTableRules::DdlKey(std::string_view db, std::string_view table) const {
  std::string key = TableKey(db, table);
  if (lower_case_table_names != 0) absl::AsciiStrToLower(&key);
  return key;
}

ChangeReader::ChangeReader(const PipelineOptions& options, replication::StoreReadSide* store,
                           HoldGate* hold, const replication::StorePin* pin,
                           std::string checkpoint_path, Host* host)
    : options_(options),
      store_(store),
      hold_(hold),
      pin_(pin),
      checkpoint_path_(std::move(checkpoint_path)),
      host_(host) {}

ChangeReader::~ChangeReader() = default;

void ChangeReader::ClearTables() {
  buffers_.clear();
  tables_.clear();
  exact_.reset();
}

void ChangeReader::AddTable(std::unique_ptr<ApplyTable> table) {
  if (image_pool_ == nullptr) {
    // A quarter of the limit, at most 64 MiB, kept beyond it for reuse.
    image_pool_ = std::make_unique<ImageArena::Pool>(
        std::min<size_t>(options_.soft_limit_bytes / 4, size_t{64} << 20));
  }
  buffers_[table.get()] = std::make_unique<TableBuffer>(table->keyed, image_pool_.get());
  std::string key = TableKey(table->source.db, table->source.table);
  tables_[std::move(key)] = std::move(table);
}

absl::Status ChangeReader::Read(const replication::BinlogPosition& from) {
  std::unique_ptr<replication::StoreReader> reader;
  while (true) {
    auto opened = replication::StoreReader::Open(store_, from);
    if (opened.ok()) {
      reader = std::move(*opened);
      break;
    }
    // A start the store has not reached yet (binrelay just started, or the
    // checkpoint is ahead of what was stored before a crash of the store's
    // host) is waited for; a file older than the store's is gone for good.
    auto files = store_->CommittedFiles();
    const bool ahead =
        files.empty() || replication::CompareBinlogNames(from.file, files.back().name) > 0 ||
        (from.file == files.back().name && from.offset > files.back().size);
    if (!ahead) {
      // The store may have received the file between Open's look at it and
      // this one (the first dump at binrelay's start): ask once more.
      auto again = replication::StoreReader::Open(store_, from);
      if (!again.ok()) return again.status();
      reader = std::move(*again);
      break;
    }
    host_->SetActivity(PipelineState::kPreparing,
                       absl::StrCat("waiting for the store to reach ", from.ToString()));
    if (!host_->Sleep(absl::Milliseconds(200))) return absl::OkStatus();
  }
  BR_RETURN_IF_ERROR(reader->PeekAt(4).status());  // the file's format
  Sink sink(this);
  xa_ = XaHolds();  // what a previous read held is read again from `from`
  read_start_ = from;
  read_back_.reset();
  ChangeDecoder decoder(&*exact_, nullptr, &sink);
  replication::TransactionBoundary boundary;
  boundary.Reset(from);
  last_commit_ = from;
  handed_checkpoint_ = from;
  last_drain_checkpoint_ = from;
  host_->SetState(PipelineState::kRunning);
  ddl_stop_ = absl::OkStatus();
  bool caught_up_state = false;
  // A lost pin or a failed drain is noticed within this many events (both
  // checks take a lock: not once per event), and at every file change and
  // every wait at the end of the store.
  constexpr uint32_t kCheckEvery = 256;
  uint32_t until_check = 0;
  while (!host_->stopping()) {
    if (until_check-- == 0) {
      until_check = kCheckEvery;
      if (pin_->lost()) return absl::DataLossError(pin_->lost_reason());
      BR_RETURN_IF_ERROR(host_->DrainError());
    }
    protocol::EventView event;
    BR_ASSIGN_OR_RETURN(replication::StoreReader::Step step, reader->Next(&event));
    if (step == replication::StoreReader::Step::kNextFile) {
      until_check = 0;
      continue;
    }
    if (step == replication::StoreReader::Step::kCaughtUp) {
      until_check = 0;
      if (hold_->Wanted() && !boundary.in_transaction()) {
        BR_RETURN_IF_ERROR(MaybeHold(boundary.last_boundary()));
        if (host_->stopping()) break;
      }
      const bool have_rows = buffered_bytes_ > 0;
      const bool moved = !(last_commit_ == handed_checkpoint_);
      if (have_rows ||
          (moved && absl::Now() - last_handoff_ >= absl::FromChrono(options_.flush_interval))) {
        // Rows are buffered and nothing more is stored yet: the drain's end
        // is the next thing worth waking for (not the store's next 100 ms
        // tick, which left the target idle for up to that long after every
        // drain of a catch-up).
        const bool busy = host_->WaitWhileDraining(have_rows ? absl::Milliseconds(100)
                                                             : absl::ZeroDuration());
        if (!busy && !host_->stopping()) BR_RETURN_IF_ERROR(HandOff());
      }
      if (!caught_up_state && buffered_bytes_ == 0) {
        host_->SetState(PipelineState::kCaughtUp);
        caught_up_state = true;
      }
      store_->WaitForCommitted(reader->seen_sequence(), absl::Milliseconds(100), nullptr);
      continue;
    }
    if (caught_up_state) {
      host_->SetState(PipelineState::kRunning);
      caught_up_state = false;
    }
    const replication::BinlogPosition& end = reader->position();
    BR_ASSIGN_OR_RETURN(bool ends, boundary.OnEvent(event, reader->format(), end));
    replication::StreamEvent e{event, reader->format(), end, ends};
    BR_RETURN_IF_ERROR(decoder.OnEvent(e));  // the sink's OnEvent and OnCommit
    if (!ends) {
      // Events outside transactions (a rotation, a checkpoint) move the
      // boundary too: a snapshot's position may be just after one.
      if (hold_->Wanted() && !boundary.in_transaction()) {
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
          options_.checkpoint_schema, ".apply_checkpoint and remove ", checkpoint_path_,
          "), or copy the tables again"));
    }
    if (!ddl_stop_.ok()) {
      // Everything before the DDL goes to the target, then the checkpoint
      // moves past it; only then does the pipeline stop.
      BR_RETURN_IF_ERROR(HandOff());
      BR_RETURN_IF_ERROR(host_->WaitForDrain());
      return ddl_stop_;
    }
    xa_held_.store(xa_.held(), std::memory_order_relaxed);
    const bool busy = host_->OnTransactionRead(end);
    // WorthDrainingEarly walks the buffers: only when the drain is idle.
    if (!busy && buffered_bytes_ > 0 &&
        (absl::Now() - last_handoff_ >= absl::FromChrono(options_.flush_interval) ||
         WorthDrainingEarly())) {
      BR_RETURN_IF_ERROR(HandOff());
    }
    if (hold_->Wanted()) BR_RETURN_IF_ERROR(MaybeHold(end));
  }
  return absl::OkStatus();
}

// A drain thread left idle while the reader is still catching up is target
// time lost for good. Waiting out flush_interval pays only when changes
// collapse (a hot row rewritten many times is written once): so the buffer
// goes early once it holds a batch (rows or bytes) for every connection and
// its changes collapse less than 2 to 1 (bulk inserts, a pipeline far
// behind on mostly distinct rows). The drain thread's idle time before each
// drain of bench/apply_bench.sh insert-heavy (1M rows, about 2.5 s of
// drains) fell from 165 ms to 53 ms, most of it now binrelay's own start.
bool ChangeReader::WorthDrainingEarly() const {
  size_t keys = 0;
  for (const auto& [table, buffer] : buffers_) keys += buffer->entries();
  const bool enough = keys >= options_.batch_rows * options_.concurrency ||
                      buffered_bytes_ >= options_.batch_bytes * options_.concurrency;
  return enough && changes_since_handoff_ < 2 * keys;
}

absl::Status ChangeReader::HandOff() {
  BR_RETURN_IF_ERROR(host_->ClaimDrainSlot());
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
  buffered_bytes_ = 0;
  host_->SubmitDrain(std::move(drain), keys);
  return absl::OkStatus();
}

absl::Status ChangeReader::MaybeHold(const replication::BinlogPosition& at) {
  const std::optional<uint64_t> ticket = hold_->ShouldHold(at, last_commit_);
  if (!ticket) return absl::OkStatus();
  // Everything read goes to the target, checkpoint and all.
  BR_RETURN_IF_ERROR(HandOff());
  BR_RETURN_IF_ERROR(host_->WaitForDrain());
  // Changes still held for a copier are not on the target: no position
  // here means "everything before it is applied". Try again later. (Only a
  // drain of the reader's adds held changes: none runs until it resumes.)
  if (host_->DeferredRows() != 0) return absl::OkStatus();
  hold_->Hold(*ticket, at, last_commit_);
  return absl::OkStatus();
}

}  // namespace binrelay::apply
