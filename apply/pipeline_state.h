// PipelineState: where an apply pipeline stands, as the move and the status
// renderers see it. Its text (PipelineStateName) is what /status, /metrics
// and SHOW RELAY STATUS print.
#pragma once

#include <string_view>

namespace binrelay::apply {

enum class PipelineState {
  kPreparing,  // checking its tables, connecting, reading its checkpoint
  kRunning,    // applying, behind the store's end
  kCaughtUp,   // applied everything stored
  kRetrying,   // the target failed (connection, contention): retried
  kError,      // stopped on a hard error (PipelineStatus::last_error)
};

const char* PipelineStateName(PipelineState s);

}  // namespace binrelay::apply
