// MoveTestPoints: named points between a move's steps where a test stops
// it, to make a race or a crash point deterministic: "dispatch 1" and
// "dispatch 2" (before a copy chunk is handed to a copier), "checksum",
// "indexes" (after the checksum, before its index builds are joined),
// "catch up", "cutover locked". A move without one (production) passes
// every point at once; nothing here reads the environment.
//
// Two ways to stop: Hold waits until the test releases the point, Stall
// stands there until the move is stopped (the test kills it there).
// FileMoveTestPoints drives both from files, for tests that run binrelay
// as a process ([move] test_hold_dir and test_stall_at).
//
// Thread safety: called from the move's threads; implementations are
// safe to call concurrently.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/time/time.h"

namespace binrelay::apply {

class MoveTestPoints {
 public:
  virtual ~MoveTestPoints() = default;
  // `wait` sleeps for its argument and returns false once the move is
  // stopping. Each returns false if the move must stop instead of going on.
  using Wait = std::function<bool(absl::Duration)>;
  // At `point`: waits while the test holds it. `always`: hold whenever
  // holds are on; else only where the test named the point.
  virtual bool Hold(std::string_view move, std::string_view point, bool always,
                    const Wait& wait) = 0;
  // At `point`: if the test stalls the move there, stands until stopped.
  virtual bool Stall(std::string_view move, std::string_view point, const Wait& wait) = 0;
};

// Holds in `hold_dir` (empty: none): a point is held until a file named as
// the point appears there; a point that is not `always` only if the file
// "hold <point>" exists. Stalls at `stall_at` (empty: never). Each logs
// "held at <point>", "released at <point>", "stalled at <point>", which
// tests wait for.
std::shared_ptr<MoveTestPoints> FileMoveTestPoints(std::string hold_dir, std::string stall_at);

}  // namespace binrelay::apply
