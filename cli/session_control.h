// SessionControl: STOP SLAVE / START SLAVE on binrelay's listener, carried
// out on the upstream session (proxy::UpstreamControl over
// replication::UpstreamSession).
//
// Thread safety: Stop and Start from any thread.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "proxy/upstream_control.h"
#include "replication/upstream_session.h"

namespace binrelay::cli {

class SessionControl : public proxy::UpstreamControl {
 public:
  // `stop_wait`: how long Stop waits for the session to leave the stream
  // (it checks every 200 ms while reading, and a connect in progress ends
  // within its timeout).
  // `cutting_over` names a move whose cutover is under way (nullopt: none):
  // its source tables are locked until the store reaches the lock's
  // position, so the upstream may not stop then.
  using CuttingOver = std::function<std::optional<std::string>()>;
  explicit SessionControl(replication::UpstreamSession* session, CuttingOver cutting_over = {},
                          absl::Duration stop_wait = absl::Seconds(10))
      : session_(session), cutting_over_(std::move(cutting_over)), stop_wait_(stop_wait) {}
  absl::Status Stop() override;
  absl::Status Start() override;
  absl::Status Change(const proxy::SourceChange& change) override;
  proxy::FollowedSources Followed() const override;

 private:
  replication::UpstreamSession* session_;
  CuttingOver cutting_over_;
  absl::Duration stop_wait_;
};

}  // namespace binrelay::cli
