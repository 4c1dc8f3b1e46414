// MoveControl: what the admin statements may ask of the moves a binrelay
// runs (CUTOVER MOVE). Declared here, where the statements are answered;
// `binrelay serve` implements it over its apply::TableMove list, so proxy/
// does not depend on apply/.
//
// Thread safety: implementations are called from session threads.
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace binrelay::proxy {

class MoveControl {
 public:
  virtual ~MoveControl() = default;
  // Asks the move named `name` to cut over once its copy is verified (a
  // cutover = manual move waits for this). NotFound: no such move;
  // FailedPrecondition: it will not cut over (cutover = none, done,
  // failed), with the reason.
  virtual absl::Status RequestCutover(std::string_view name) = 0;
};

}  // namespace binrelay::proxy
