// DumpStream: what the listener needs from an accepted binlog dump. The
// listener owns the socket and the waiting; the stream (binlog_sender.h)
// owns what is sent: it fills the write buffer with framed packets, says
// when it has caught up, and arms a one-shot wake-up for new data.
//
// Thread safety: one stream belongs to one connection; only the wake-up
// callback passed to ArmWake is invoked from another thread, and
// RequestEnd may be called from any thread.
// Lifetime: the stream must be destroyed before the store it reads.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace binrelay::proxy {

class DumpStream {
 public:
  enum class Progress {
    kMore,      // budget reached; call Fill again after writing
    kCaughtUp,  // nothing more committed now: wait (ArmWake / heartbeat)
    kFinished,  // non-blocking dump ended with EOF: back to the command phase
  };
  virtual ~DumpStream() = default;

  // Appends framed packets (events, fake events, a final EOF) to *out until
  // it holds about `budget` bytes. An error ends the dump: send
  // AppendError's packet, then close.
  virtual absl::StatusOr<Progress> Fill(std::string* out, size_t budget) = 0;
  virtual void AppendHeartbeat(std::string* out) = 0;
  // The ERR packet for `error`: the client error it carries (client_error.h),
  // else 1236 with its message; the stream adds where reading stopped.
  virtual void AppendError(std::string* out, const absl::Status& error) = 0;
  // Makes the next Fill fail with `why` and wakes a waiting dump.
  virtual void RequestEnd(absl::Status why) = 0;
  // 0: the replica asked for no heartbeats.
  virtual std::chrono::nanoseconds heartbeat_period() const = 0;
  // Registers `wake`, called once from any thread when more may have been
  // committed, and returns true; returns false (registering nothing) if
  // more is readable already. DisarmWake drops a registration.
  virtual bool ArmWake(std::function<void()> wake) = 0;
  virtual void DisarmWake() = 0;
};

}  // namespace binrelay::proxy
