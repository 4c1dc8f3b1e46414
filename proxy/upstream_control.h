// UpstreamControl: what the admin statements may ask of binrelay's upstream
// session (STOP SLAVE / START SLAVE and their REPLICA spellings). Declared
// here, where the statements are answered; `binrelay serve` implements it
// over its replication::UpstreamSession.
//
// Thread safety: implementations are called from session threads.
#pragma once

#include "absl/status/status.h"

namespace binrelay::proxy {

class UpstreamControl {
 public:
  virtual ~UpstreamControl() = default;
  // Leaves the source's stream and stays away until Start; returns once the
  // upstream has stopped (a transaction cut there is dropped from the
  // store and read again on Start). OK when already stopped.
  virtual absl::Status Stop() = 0;
  // Connects again and resumes after the last stored transaction. OK when
  // already running.
  virtual absl::Status Start() = 0;
};

}  // namespace binrelay::proxy
