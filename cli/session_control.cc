#include "cli/session_control.h"

#include <tuple>

#include "replication/candidate_probe.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "protocol/status_macros.h"

namespace binrelay::cli {

absl::Status SessionControl::Stop() {
  if (cutting_over_) {
    if (std::optional<std::string> move = cutting_over_()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "move ", *move, " is cutting over: its source tables stay locked until binrelay's "
          "store reaches the lock's position, so the upstream may not stop now; wait for the "
          "cutover to end (SHOW RELAY MOVES)"));
    }
  }
  session_->Pause();
  // As the server's STOP SLAVE, return once the IO thread is gone.
  const absl::Time give_up = absl::Now() + stop_wait_;
  while (true) {
    const replication::UpstreamState s = session_->state();
    if (s == replication::UpstreamState::kPaused || s == replication::UpstreamState::kStopped) {
      return absl::OkStatus();
    }
    if (absl::Now() >= give_up) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "the upstream session has not left the source after ", absl::FormatDuration(stop_wait_),
      " (state ", AV(replication::UpstreamStateName(session_->state())),
      "); it stops when its connection attempt ends: check SHOW SLAVE STATUS"));
}

proxy::FollowedSources SessionControl::Followed() const {
  proxy::FollowedSources f;
  f.current = replication::CandidateAddress(session_->followed_options());
  std::tie(f.left, f.left_server_ids) = session_->left_sources();
  return f;
}

absl::Status SessionControl::Change(const proxy::SourceChange& change) {
  return session_->Repoint([&](protocol::ConnectOptions* o) {
    if (change.host) o->host = *change.host;
    if (change.port) o->port = *change.port;
    if (change.user) o->user = *change.user;
    if (change.password) o->password = *change.password;
    if (change.tls) {
      o->tls = *change.tls ? protocol::ConnectOptions::Tls::kRequired
                           : protocol::ConnectOptions::Tls::kDisabled;
    }
    if (change.user || change.password) o->credentials_from = "CHANGE MASTER TO";
  }, change.by_gtid);
}

absl::Status SessionControl::Start() {
  session_->Resume();
  return absl::OkStatus();
}

}  // namespace binrelay::cli
