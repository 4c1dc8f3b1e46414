// SessionControl: STOP SLAVE / START SLAVE / CHANGE MASTER TO as serve
// carries them out on its upstream session (here one that never runs).
#include "cli/session_control.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::cli {
namespace {

replication::UpstreamOptions Options() {
  replication::UpstreamOptions o;
  o.connect.host = "db1";
  o.connect.port = 3306;
  o.connect.user = "relay";
  o.connect.password = "pw";
  return o;
}

// Guards: STOP SLAVE while a move cuts over (its source tables would stay
// locked until cutover_timeout, the store unable to reach the lock's
// position).
TEST(SessionControlTest, StopIsRefusedWhileAMoveCutsOver) {
  replication::UpstreamSession session(Options(), nullptr);
  std::optional<std::string> cutting = "archive";
  SessionControl control(&session, [&] { return cutting; }, absl::Milliseconds(50));
  absl::Status refused = control.Stop();
  EXPECT_TRUE(absl::IsFailedPrecondition(refused)) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "move archive is cutting over")) << refused;
  EXPECT_FALSE(session.paused());
  // No cutover: the session is asked to stop (it never ran, so it never
  // reaches kPaused and Stop says so after its wait).
  cutting.reset();
  absl::Status waited = control.Stop();
  EXPECT_TRUE(session.paused());
  EXPECT_TRUE(absl::IsDeadlineExceeded(waited)) << waited;
  BR_EXPECT_OK(control.Start());
  EXPECT_FALSE(session.paused());
}

// Guards: CHANGE MASTER TO taking effect on a session that has not parked
// (it would be applied late, or never, while status shows the new host).
TEST(SessionControlTest, ChangeIsRefusedUntilTheSessionHasParked) {
  replication::UpstreamSession session(Options(), nullptr);
  SessionControl control(&session, {}, absl::Milliseconds(50));
  proxy::SourceChange change;
  change.host = "db2";
  EXPECT_TRUE(absl::IsFailedPrecondition(control.Change(change)));  // running
  (void)control.Stop();  // paused, but never parked: no Run thread
  absl::Status early = control.Change(change);
  EXPECT_TRUE(absl::IsFailedPrecondition(early)) << early;
  EXPECT_TRUE(absl::StrContains(early.message(), "has not left the source yet")) << early;
  EXPECT_EQ(session.connect_options().host, "db1");
}

}  // namespace
}  // namespace binrelay::cli
