// MovePhase: where a move stands. Its text (MovePhaseName) is what /status,
// the logs and the move's checkpoint row (move_checkpoint.h) hold; a
// checkpoint's text is read back with ParseMovePhase.
#pragma once

#include <optional>
#include <string_view>

namespace binrelay::apply {

enum class MovePhase {
  kStarting,
  kPreflight,
  kCreate,
  kCopy,
  kCatchUp,
  kChecksum,
  kIndexes,
  kApplying,          // cutover = none: applying changes, never cutting over
  kReadyForCutover,   // cutover = manual: waiting for the operator
  kCutover,
  kDone,
  kError,
};

const char* MovePhaseName(MovePhase p);
// nullopt for a text no phase has (a damaged checkpoint).
std::optional<MovePhase> ParseMovePhase(std::string_view text);

}  // namespace binrelay::apply
