#include "apply/pipeline.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"
#include "replication/store_era.h"
#include "replication/store_index.h"
#include "spdlog/spdlog.h"

namespace binrelay::apply {

ApplyPipeline::ApplyPipeline(PipelineOptions options, replication::StoreReadSide* store,
                             SourceLogin source, CopyGate* gate)
    : options_(std::move(options)),
      store_(store),
      source_(std::move(source)),
      gate_(gate),
      local_checkpoint_(store->dir(), options_.name),
      hold_(options_.name),
      reader_(options_, store, &hold_, &pin_, local_checkpoint_.path(),
              static_cast<ChangeReader::Host*>(this)),
      flusher_(std::make_unique<TargetFlusher>(options_, static_cast<TargetFlusher::Host*>(this))) {
  auto pattern = Subscription::Parse(options_.tables);
  if (pattern.ok()) rules_.pattern = *pattern;
  reader_.SetRules(&rules_);
  absl::MutexLock l(&mu_);
  status_.name = options_.name;
  status_.state = PipelineState::kPreparing;
  status_.target = absl::StrCat(options_.target.host, ":", options_.target.port);
  status_.tables = options_.tables;
  status_.concurrency = flusher_->concurrency();
  status_.batch_rows = flusher_->batch_rows();
}

ApplyPipeline::~ApplyPipeline() { Stop(); }

absl::Status ApplyPipeline::Restore() {
  BR_RETURN_IF_ERROR(Subscription::Parse(options_.tables).status());
  auto local = local_checkpoint_.Read();
  if (!local.ok()) return Annotate(local.status(), absl::StrCat("apply pipeline ", options_.name));
  if (*local) {
    position_ = **local;
  } else {
    switch (options_.start.kind) {
      case replication::StartSpec::Kind::kPosition:
        position_ = options_.start.position;
        break;
      case replication::StartSpec::Kind::kEarliest: {
        auto files = store_->CommittedFiles();
        position_ = files.empty() ? replication::BinlogPosition{} :
                                    replication::BinlogPosition{files.front().name, 4};
        break;
      }
      case replication::StartSpec::Kind::kCurrent:
        position_ = store_->committed().position;
        break;
      case replication::StartSpec::Kind::kGtid: {
        // Every transaction the position holds is on the target already;
        // reading starts at the first stored one it does not hold.
        // An empty store cannot say yet, and a position the store cannot
        // place (its files purged, a domain it lacks) must not stop the
        // whole relay: Prepare resolves it again after reading the target's
        // checkpoint, retrying with a clear error. Until then the claim
        // holds everything stored.
        if (store_->CommittedFiles().empty()) break;
        if (auto at = ResolveGtidStart(); at.ok()) {
          position_ = *at;
        } else {
          spdlog::warn("{}; the pipeline will retry once running", SV(at.status().message()));
        }
        break;
      }
    }
  }
  {
    absl::MutexLock l(&mu_);
    status_.flushed = position_;  // what the claim holds, before the target answers
    status_.read = position_;
  }
  // An empty position (empty store) pins everything that will be stored.
  pin_ = store_->Pin(position_.file.empty() ? replication::BinlogPosition{"", 4} : position_,
                     absl::StrCat("apply pipeline ", options_.name));
  return absl::OkStatus();
}

void ApplyPipeline::Start() {
  drainer_ = std::thread([this] { DrainLoop(); });
  reader_thread_ = std::thread([this] { Run(); });
}

void ApplyPipeline::Stop() {
  absl::MutexLock once(&stop_mu_);  // two threads may stop it at once
  {
    // Under the lock: a waiter between testing its predicate and blocking
    // would otherwise miss this wake-up.
    absl::MutexLock l(&mu_);
    stopping_ = true;
    cv_.SignalAll();
  }
  hold_.ReaderStopped("");
  if (reader_thread_.joinable()) reader_thread_.join();
  if (drainer_.joinable()) drainer_.join();
  // A stopped pipeline (a finished move's, say, in a serve that runs on)
  // must not hold retention back; a restart pins again from its checkpoint.
  pin_.Release();
}

PipelineStatus ApplyPipeline::Status() const {
  PipelineStatus s;
  uint32_t flushed_ts;
  {
    absl::MutexLock l(&mu_);
    s = status_;
    flushed_ts = flushed_ts_;
  }
  s.paused_at = hold_.paused_at();
  s.upsert_protocol = flusher_->upsert_protocol();
  s.target_warnings = flusher_->target_warnings();
  s.changes_read = reader_.changes_read();
  s.rows_written = flusher_->rows_written();
  s.xa_held = reader_.xa_held();
  // Lag: how far the flushed position is behind what the store holds.
  replication::CommittedEnd end = store_->committed();
  if (!s.flushed.file.empty() && !end.position.file.empty()) {
    if (s.flushed.file == end.position.file) {
      s.lag_bytes = end.position.offset > s.flushed.offset ? end.position.offset - s.flushed.offset : 0;
    } else {
      uint64_t bytes = 0;
      for (const auto& f : store_->CommittedFiles()) {
        int c = replication::CompareBinlogNames(f.name, s.flushed.file);
        if (c == 0) bytes += f.size > s.flushed.offset ? f.size - s.flushed.offset : 0;
        if (c > 0) bytes += f.size;
      }
      s.lag_bytes = bytes;
    }
  }
  if (s.lag_bytes > 0 && flushed_ts != 0) {
    s.lag_seconds = std::max<double>(0, absl::ToUnixSeconds(absl::Now()) - flushed_ts);
  }
  return s;
}

std::string PipelineStatus::StateText() const {
  if (paused_at) return absl::StrCat("paused at ", paused_at->ToString());
  if (!activity.empty()) return activity;
  return std::string(PipelineStateName(state));
}

void ApplyPipeline::SetActivity(PipelineState state, std::string activity) {
  absl::MutexLock l(&mu_);
  status_.state = state;
  status_.activity = std::move(activity);
}

void ApplyPipeline::SetState(PipelineState state) {
  absl::MutexLock l(&mu_);
  status_.state = state;
  status_.activity.clear();
}

void ApplyPipeline::SetStateWithError(PipelineState state, std::string error) {
  absl::MutexLock l(&mu_);
  status_.state = state;
  status_.activity.clear();
  status_.last_error = std::move(error);
}

bool ApplyPipeline::Sleep(absl::Duration d) {
  absl::MutexLock l(&mu_);
  const absl::Time deadline = absl::Now() + d;
  while (!stopping_) {
    if (cv_.WaitWithDeadline(&mu_, deadline)) break;
  }
  return !stopping_;
}

void ApplyPipeline::Run() {
  while (!stopping_) {
    absl::Status s = Prepare();
    if (!s.ok()) {
      if (stopping_) break;
      spdlog::error("apply pipeline {}: {} (retrying in 5 s)", options_.name, SV(s.message()));
      SetStateWithError(PipelineState::kRetrying, std::string(s.message()));
      if (!Sleep(absl::Seconds(5))) break;
      continue;
    }
    spdlog::info("apply pipeline {}: {} table(s) checked; applying to {}:{} from {}",
                 options_.name, reader_.tables().size(), options_.target.host,
                 options_.target.port, position_.ToString());
    s = reader_.Read(position_);
    if (s.ok() || stopping_) {
      // Stopping: what is buffered is re-read from the checkpoint next time.
      break;
    }
    // Let a drain in flight finish (it holds whole earlier transactions).
    (void)WaitForDrain();
    spdlog::error("apply pipeline {} stopped: {}", options_.name, SV(s.message()));
    SetStateWithError(PipelineState::kError, std::string(s.message()));
    break;
  }
  std::string why;
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
    why = status_.last_error;
    cv_.SignalAll();
  }
  hold_.ReaderStopped(std::move(why));
}

void ApplyPipeline::DrainLoop() {
  while (true) {
    std::unique_ptr<Drain> drain;
    {
      absl::MutexLock l(&mu_);
      if (!flusher_->has_deferred()) {
        while (pending_ == nullptr && !stopping_) cv_.Wait(&mu_);
      } else {
        // Held-back changes go as soon as their chunk is copied, whether or
        // not the reader hands over anything new.
        const absl::Time deadline = absl::Now() + absl::Milliseconds(50);
        while (pending_ == nullptr && !stopping_) {
          if (cv_.WaitWithDeadline(&mu_, deadline)) break;
        }
      }
      if (stopping_ && pending_ == nullptr) return;
      if (pending_ != nullptr) {
        drain = std::move(pending_);
      } else {
        // The reader has claimed the slot and is building its drain, or the
        // reader stops after an error: nothing of ours now.
        if (draining_ || !drain_error_.ok()) continue;
        drain = std::make_unique<Drain>();
        drain->since = flusher_->drained_to();
        drain->checkpoint = flusher_->drained_to();
        drain->checkpoint_ts = flushed_ts_;
        draining_ = true;
      }
    }
    const absl::Time start = absl::Now();
    absl::Status s = flusher_->Flush(*drain);
    absl::MutexLock l(&mu_);
    if (s.ok()) {
      status_.flushed = drain->checkpoint;
      flushed_ts_ = drain->checkpoint_ts;
      status_.last_flush_seconds = absl::ToDoubleSeconds(absl::Now() - start);
      if (!drain->tables.empty()) ++status_.drains;
      status_.concurrency = flusher_->concurrency();
      status_.batch_rows = flusher_->batch_rows();
    } else if (!absl::IsCancelled(s)) {
      drain_error_ = s;
    }
    inflight_bytes_ = 0;
    status_.buffered_bytes = reader_.buffered_bytes();
    status_.buffered_keys = 0;
    status_.deferred = flusher_->deferred_rows();
    draining_ = false;
    cv_.SignalAll();
  }
}

absl::Status ApplyPipeline::WithState(absl::Status s) const {
  if (!absl::IsDeadlineExceeded(s)) return s;
  return absl::DeadlineExceededError(
      absl::StrCat(s.message(), " (state: ", Status().StateText(), ")"));
}

absl::StatusOr<replication::BinlogPosition> ApplyPipeline::Pause(absl::Duration timeout) {
  auto at = hold_.Pause(timeout);
  if (!at.ok()) return WithState(at.status());
  return at;
}

absl::Status ApplyPipeline::AdvanceTo(const replication::BinlogPosition& at,
                                      absl::Duration timeout, bool or_after) {
  // `at` is the source's (SHOW MASTER STATUS, a snapshot): named as the
  // store names it after a switch (store_era.h).
  return WithState(
      hold_.AdvanceTo(replication::StoredPositionOf(store_->era(), at), timeout, or_after));
}

void ApplyPipeline::Resume() { hold_.Resume(); }

absl::Status ApplyPipeline::ClaimDrainSlot() {
  absl::MutexLock l(&mu_);
  if (draining_) ++status_.parked;
  while (draining_ && !stopping_) cv_.Wait(&mu_);
  if (stopping_) return absl::CancelledError("stopping");
  if (!drain_error_.ok()) return drain_error_;
  // Claimed now, in the same critical section as the wait: the drain
  // thread's own flush of held-back rows must not start meanwhile.
  draining_ = true;
  return absl::OkStatus();
}

void ApplyPipeline::SubmitDrain(std::unique_ptr<Drain> drain, size_t keys) {
  absl::MutexLock l(&mu_);
  inflight_bytes_ = drain->bytes;
  status_.buffered_bytes = drain->bytes;
  status_.buffered_keys = keys;
  pending_ = std::move(drain);
  cv_.SignalAll();
}

absl::Status ApplyPipeline::WaitForDrain() {
  absl::MutexLock l(&mu_);
  while (draining_ && !stopping_) cv_.Wait(&mu_);
  return drain_error_;
}

bool ApplyPipeline::WaitWhileDraining(absl::Duration up_to) {
  absl::MutexLock l(&mu_);
  const absl::Time deadline = absl::Now() + up_to;
  while (draining_ && !stopping_) {
    if (cv_.WaitWithDeadline(&mu_, deadline)) break;
  }
  return draining_;
}

absl::Status ApplyPipeline::DrainError() {
  absl::MutexLock l(&mu_);
  return drain_error_;
}

bool ApplyPipeline::OnTransactionRead(const replication::BinlogPosition& end) {
  absl::MutexLock l(&mu_);
  status_.read = end;
  status_.buffered_bytes = reader_.buffered_bytes();
  return draining_;
}

uint64_t ApplyPipeline::DeferredRows() {
  absl::MutexLock l(&mu_);
  return status_.deferred;
}

void ApplyPipeline::OnRetry(int code, bool target_lost, std::string_view error) {
  absl::MutexLock l(&mu_);
  ++status_.retries[code];
  if (target_lost) {
    status_.state = PipelineState::kRetrying;
    status_.last_error = std::string(error);
  }
}

void ApplyPipeline::OnRecovered() {
  absl::MutexLock l(&mu_);
  if (status_.state == PipelineState::kRetrying) status_.state = PipelineState::kRunning;
}

absl::Status ApplyPipeline::OnCheckpointWritten(const replication::BinlogPosition& at) {
  BR_RETURN_IF_ERROR(Annotate(local_checkpoint_.Write(at),
                              absl::StrCat("apply pipeline ", options_.name)));
  pin_.Advance(at);
  return absl::OkStatus();
}

}  // namespace binrelay::apply
