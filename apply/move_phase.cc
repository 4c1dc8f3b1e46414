#include "apply/move_phase.h"

namespace binrelay::apply {

const char* MovePhaseName(MovePhase p) {
  switch (p) {
    case MovePhase::kStarting: return "starting";
    case MovePhase::kPreflight: return "preflight";
    case MovePhase::kCreate: return "create";
    case MovePhase::kCopy: return "copy";
    case MovePhase::kCatchUp: return "catch up";
    case MovePhase::kChecksum: return "checksum";
    case MovePhase::kIndexes: return "indexes";
    case MovePhase::kApplying: return "applying (cutover = none)";
    case MovePhase::kReadyForCutover: return "ready for cutover";
    case MovePhase::kCutover: return "cutover";
    case MovePhase::kDone: return "done";
    case MovePhase::kError: return "error";
  }
  return "?";
}

std::optional<MovePhase> ParseMovePhase(std::string_view text) {
  for (int i = 0; i <= static_cast<int>(MovePhase::kError); ++i) {
    const auto p = static_cast<MovePhase>(i);
    if (text == MovePhaseName(p)) return p;
  }
  return std::nullopt;
}

}  // namespace binrelay::apply
