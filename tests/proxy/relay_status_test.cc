// RelayStatus rendering (proxy/relay_status.h): what /status and /metrics
// show of an apply pipeline.
#include "proxy/relay_status.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "proxy/status_fields.h"

namespace binrelay::proxy {
namespace {

// Guards against a pipeline counter that the pipeline keeps but that never
// reaches /status or /metrics (the changes a move holds back were kept in
// the pipeline's status and dropped on the way to both).
TEST(RelayStatusTest, PipelineCountersReachStatusJsonAndMetrics) {
  RelayStatus s;
  ApplyStatus a;
  a.name = "p1";
  a.state = "running";
  a.deferred = 17;
  a.xa_held = 3;
  a.target_warnings = 5;
  s.pipelines.push_back(a);
  const std::string json = RenderStatusJson(s);
  EXPECT_NE(json.find("\"deferred\":17"), std::string::npos) << json;
  EXPECT_NE(json.find("\"xa_held\":3"), std::string::npos) << json;
  EXPECT_NE(json.find("\"target_warnings\":5"), std::string::npos) << json;
  const std::string metrics = RenderPrometheus(s);
  EXPECT_NE(metrics.find("binrelay_apply_deferred{pipeline=\"p1\"} 17"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("binrelay_apply_xa_held{pipeline=\"p1\"} 3"), std::string::npos)
      << metrics;
}

// Guards against a field described once but rendered in only one place:
// every field of the description is a JSON member of /status, and every one
// with a metric name a sample in /metrics labelled with its item.
TEST(RelayStatusTest, EveryDescribedFieldIsInTheJsonAndEveryMetricInTheMetrics) {
  RelayStatus s;
  ApplyStatus a;
  a.name = "p";
  s.pipelines.push_back(a);
  MoveProgress m;
  m.name = "m";
  s.moves.push_back(m);
  const std::string json = RenderStatusJson(s);
  const std::string metrics = RenderPrometheus(s);
  for (const auto& f : ApplyStatusFields()) {
    EXPECT_NE(json.find(absl::StrCat("\"", f.name, "\":")), std::string::npos) << f.name;
    if (f.metric != nullptr) {
      EXPECT_NE(metrics.find(absl::StrCat(f.metric, "{pipeline=\"p\"} ")), std::string::npos)
          << f.metric;
    }
  }
  for (const auto& f : MoveProgressFields()) {
    EXPECT_NE(json.find(absl::StrCat("\"", f.name, "\":")), std::string::npos) << f.name;
    if (f.metric != nullptr) {
      EXPECT_NE(metrics.find(absl::StrCat(f.metric, "{move=\"m\"} ")), std::string::npos)
          << f.metric;
    }
  }
}

// Guards against health read from display text: binrelay_apply_up and
// binrelay_move_done follow the typed facts the apply side reports, not
// the state's or phase's name (a pipeline paused "at f:4 after an error"
// is up; a failed one is down whatever its text says).
TEST(RelayStatusTest, UpAndDoneFollowTheTypedFactsNotTheNames) {
  RelayStatus s;
  ApplyStatus failed;
  failed.name = "bad";
  failed.state = "waiting for the target";
  failed.failed = true;
  s.pipelines.push_back(failed);
  ApplyStatus fine;
  fine.name = "good";
  fine.state = "error";  // a name only; the pipeline did not fail
  s.pipelines.push_back(fine);
  MoveProgress m;
  m.name = "m";
  m.phase = "cutover";
  m.done = true;
  s.moves.push_back(m);
  const std::string metrics = RenderPrometheus(s);
  EXPECT_NE(metrics.find("binrelay_apply_up{pipeline=\"bad\"} 0"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("binrelay_apply_up{pipeline=\"good\"} 1"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("binrelay_move_done{move=\"m\"} 1"), std::string::npos) << metrics;
}

}  // namespace
}  // namespace binrelay::proxy
