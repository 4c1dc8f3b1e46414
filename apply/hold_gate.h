// HoldGate: how a move stops a pipeline's reader at a transaction boundary
// with everything read before it on the target (Pause, AdvanceTo), to read
// source and target at one binlog position, and lets it go (Resume).
//
// A request comes from any thread and waits; the reader asks Wanted() at
// each boundary (an atomic load), and when it is, ShouldHold() decides;
// the pipeline then drains everything read and calls Hold(), which parks
// the reader there until the next request or Resume.
//
//   kNone --Pause--> kPause --reader at a boundary, drained--> held
//   kNone --AdvanceTo(at)--> kAdvance --reader at `at`, drained--> held
//   held --Resume--> kNone;   held --AdvanceTo(later)--> kAdvance
//
// Thread safety: all methods from any thread; Wanted/ShouldHold/Hold from
// the reader only.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "replication/binlog_position.h"

namespace binrelay::apply {

class HoldGate {
 public:
  explicit HoldGate(std::string pipeline_name) : name_(std::move(pipeline_name)) {}

  // The position where the reader now holds (DeadlineExceeded after
  // `timeout`; FailedPrecondition once the reader stopped).
  absl::StatusOr<replication::BinlogPosition> Pause(absl::Duration timeout);
  // The reader reads on to transaction boundary `at` and holds there;
  // `or_after`: any boundary at or after it will do (ApplyPipeline).
  absl::Status AdvanceTo(const replication::BinlogPosition& at, absl::Duration timeout,
                         bool or_after);
  void Resume();
  // The reader will not come back (`why`: its error, or "" when stopping):
  // waiting requests return, and a held reader is let go.
  void ReaderStopped(std::string why);
  std::optional<replication::BinlogPosition> paused_at() const;

  // Reader thread.
  bool Wanted() const { return wanted_.load(std::memory_order_relaxed); }
  // At boundary `at`, `last_commit` being the end of the last transaction
  // read: a ticket when the reader should hold here (after draining), none
  // otherwise. A transaction that ended past an AdvanceTo target fails the
  // request.
  std::optional<uint64_t> ShouldHold(const replication::BinlogPosition& at,
                                     const replication::BinlogPosition& last_commit);
  // Holds at `at` (everything before it applied) until the request of
  // `ticket` is replaced, resumed or the reader stops; returns at once for
  // a stale ticket.
  void Hold(uint64_t ticket, const replication::BinlogPosition& at,
            const replication::BinlogPosition& last_commit);

 private:
  enum class Mode { kNone, kPause, kAdvance };

  absl::Status WaitHeld(absl::Duration timeout) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A new request replaces any other: a held reader moves on.
  void Request(Mode mode) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string name_;
  std::atomic<bool> wanted_{false};  // mode_ != kNone, for the reader's fast test
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  Mode mode_ ABSL_GUARDED_BY(mu_) = Mode::kNone;
  replication::BinlogPosition target_ ABSL_GUARDED_BY(mu_);  // of kAdvance
  bool or_after_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<replication::BinlogPosition> held_at_ ABSL_GUARDED_BY(mu_);
  replication::BinlogPosition held_commit_ ABSL_GUARDED_BY(mu_);  // last_commit when held
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;  // each request and Resume
  absl::Status error_ ABSL_GUARDED_BY(mu_);       // of the current request
  std::optional<std::string> stopped_ ABSL_GUARDED_BY(mu_);  // ReaderStopped
};

}  // namespace binrelay::apply
