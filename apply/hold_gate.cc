#include "apply/hold_gate.h"

#include "absl/strings/str_cat.h"
#include "replication/store_index.h"

namespace binrelay::apply {

void HoldGate::Request(Mode mode) {
  mode_ = mode;
  ++generation_;
  held_at_.reset();
  error_ = absl::OkStatus();
  wanted_ = mode != Mode::kNone;
  cv_.SignalAll();
}

absl::Status HoldGate::WaitHeld(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!held_at_ && error_.ok() && !stopped_) {
    if (cv_.WaitWithDeadline(&mu_, deadline)) break;  // timed out
  }
  if (!error_.ok()) return error_;
  if (held_at_) return absl::OkStatus();
  if (stopped_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "apply pipeline ", name_, " stopped: ", stopped_->empty() ? "stopping" : *stopped_));
  }
  return absl::DeadlineExceededError(absl::StrCat("apply pipeline ", name_,
                                                  " did not reach a pause in ",
                                                  absl::FormatDuration(timeout)));
}

absl::StatusOr<replication::BinlogPosition> HoldGate::Pause(absl::Duration timeout) {
  absl::MutexLock l(&mu_);
  if (held_at_ && mode_ != Mode::kNone) return *held_at_;
  Request(Mode::kPause);
  absl::Status s = WaitHeld(timeout);
  if (!s.ok()) return s;
  return *held_at_;
}

absl::Status HoldGate::AdvanceTo(const replication::BinlogPosition& at, absl::Duration timeout,
                                 bool or_after) {
  absl::MutexLock l(&mu_);
  const bool held = held_at_.has_value() && mode_ != Mode::kNone;
  if (held && or_after && !replication::PositionBefore(*held_at_, at)) return absl::OkStatus();
  // Held at or past `at` with no transaction ending after it (only a
  // rotation or a checkpoint event): the same state as `at` itself.
  if (held && !replication::PositionBefore(*held_at_, at) &&
      !replication::PositionBefore(at, held_commit_)) {
    return absl::OkStatus();
  }
  if (held_at_ && replication::PositionBefore(at, *held_at_)) {
    return absl::OutOfRangeError(absl::StrCat("apply pipeline ", name_, " is paused at ",
                                              held_at_->ToString(), ", already past ",
                                              at.ToString()));
  }
  target_ = at;
  or_after_ = or_after;
  Request(Mode::kAdvance);
  return WaitHeld(timeout);
}

void HoldGate::Resume() {
  absl::MutexLock l(&mu_);
  Request(Mode::kNone);
}

void HoldGate::ReaderStopped(std::string why) {
  absl::MutexLock l(&mu_);
  if (!stopped_) stopped_ = std::move(why);
  cv_.SignalAll();
}

std::optional<replication::BinlogPosition> HoldGate::paused_at() const {
  absl::MutexLock l(&mu_);
  return held_at_;
}

std::optional<uint64_t> HoldGate::ShouldHold(const replication::BinlogPosition& at,
                                             const replication::BinlogPosition& last_commit) {
  absl::MutexLock l(&mu_);
  if (mode_ == Mode::kNone || held_at_) return std::nullopt;
  if (mode_ == Mode::kAdvance) {
    if (replication::PositionBefore(at, target_)) return std::nullopt;  // not yet
    // Past it with only events outside transactions since (a rotation, a
    // checkpoint) is the same state; a transaction ending past it means it
    // was no boundary of this stream.
    if (!or_after_ && replication::PositionBefore(target_, last_commit)) {
      error_ = absl::FailedPreconditionError(absl::StrCat(
          "apply pipeline ", name_, " read past ", target_.ToString(),
          " (a transaction ends at ", last_commit.ToString(), ")"));
      mode_ = Mode::kNone;
      wanted_ = false;
      cv_.SignalAll();
      return std::nullopt;
    }
  }
  return generation_;
}

void HoldGate::Hold(uint64_t ticket, const replication::BinlogPosition& at,
                    const replication::BinlogPosition& last_commit) {
  absl::MutexLock l(&mu_);
  // Asked for something else meanwhile (resumed, or a timed-out request
  // replaced): this hold is nobody's.
  if (generation_ != ticket || mode_ == Mode::kNone || stopped_) return;
  held_at_ = at;
  held_commit_ = last_commit;
  cv_.SignalAll();
  while (!stopped_ && generation_ == ticket) cv_.Wait(&mu_);
  held_at_.reset();
}

}  // namespace binrelay::apply
