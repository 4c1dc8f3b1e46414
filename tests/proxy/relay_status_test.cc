// RelayStatus rendering (proxy/relay_status.h): what /status and /metrics
// show of an apply pipeline.
#include "proxy/relay_status.h"

#include <string>

#include "gtest/gtest.h"

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

}  // namespace
}  // namespace binrelay::proxy
