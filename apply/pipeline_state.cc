#include "apply/pipeline_state.h"

namespace binrelay::apply {

const char* PipelineStateName(PipelineState s) {
  switch (s) {
    case PipelineState::kPreparing: return "preparing";
    case PipelineState::kRunning: return "running";
    case PipelineState::kCaughtUp: return "caught up";
    case PipelineState::kRetrying: return "retrying";
    case PipelineState::kError: return "error";
  }
  return "?";
}

}  // namespace binrelay::apply
