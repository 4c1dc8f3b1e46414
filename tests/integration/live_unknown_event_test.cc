// A release's event binrelay does not know, live: a real server's stream
// passes through a proxy that gives one event a type code no release has yet
// (its CRC recomputed), as a newer release's stream would carry one. serve
// and tail stop with an error naming the release, file:pos and the event
// type; the store keeps everything before the event and nothing from it, and
// resumes exactly once the stream is one binrelay knows again.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/harness/binrelay_process.h"
#include "tests/harness/event_rewriter.h"
#include "tests/harness/fault_proxy.h"
#include "tests/harness/serve_fixture.h"
#include "tests/harness/server_flavour.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
namespace fs = std::filesystem;

constexpr uint8_t kUnknownType = 199;  // neither MySQL (1..42) nor MariaDB (160..172)
constexpr char kMarker[] = "from-a-newer-release";

// The one log line about the unknown event (connect lines name the server
// too: the error itself must).
std::string ErrorLine(const std::string& log) {
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (absl::StrContains(line, "event type 199")) return std::string(line);
  }
  return "<no line names event type 199 in:\n" + log + ">";
}

class LiveUnknownEventTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    BINRELAY_REQUIRE_FLAVOUR(GetParam());
    auto source = StartServeSource({}, GetParam());
    ASSERT_TRUE(source.ok()) << source.status();
    source_ = *std::move(source);
    FaultProxy::Options o;
    o.upstream_port = source_->Port();
    o.rewriter = [this] {
      return std::make_unique<EventTypeRewriter>(kMarker, kUnknownType, &rewritten_);
    };
    auto proxy = FaultProxy::Start(o);
    ASSERT_TRUE(proxy.ok()) << proxy.status();
    proxy_ = *std::move(proxy);
    proxy_->SetEnabled(false);  // no faults: only the rewrite
    BR_ASSERT_OK(source_->Execute("CREATE DATABASE u"));
    BR_ASSERT_OK(source_->Execute("CREATE TABLE u.t (id INT PRIMARY KEY, v VARCHAR(64))"));
    BR_ASSERT_OK(source_->Execute("INSERT INTO u.t VALUES (1, 'before'), (2, 'before')"));
  }

  // Through the proxy the stream must stay readable: no TLS. MySQL's
  // caching_sha2_password then takes the RSA key.
  std::vector<std::string> PlainThroughProxy(const std::string& prefix) const {
    std::vector<std::string> o = {absl::StrCat(prefix, "port=", proxy_->port()),
                                  absl::StrCat(prefix, "ssl_mode=disabled")};
    if (source_->IsMysql()) o.push_back(absl::StrCat(prefix, "get_server_public_key=on"));
    return o;
  }

  std::unique_ptr<ServerSandbox> source_;
  std::unique_ptr<FaultProxy> proxy_;
  std::atomic<int> rewritten_{0};
};

// Guards: an unknown event stored or served as if known, skipped silently,
// or an error that does not say which release wrote it and where; and a
// store that loses what came before it or cannot resume after it.
TEST_P(LiveUnknownEventTest, ServeStopsNamingReleasePositionAndTypeAndLosesNothing) {
  ServeOptions options;
  options.overrides = PlainThroughProxy("--source.");
  BR_ASSERT_OK_AND_ASSIGN(auto serve, ServeProcess::Create(*source_, options));
  BR_ASSERT_OK(serve->Start());
  BR_ASSERT_OK_AND_ASSIGN(SourceEnd good, WaitStoreReached(*serve, *source_, seconds(60)));
  BR_ASSERT_OK(source_->Execute(absl::StrCat("INSERT INTO u.t VALUES (3, '", kMarker, "')")));
  BR_ASSERT_OK(source_->Execute("INSERT INTO u.t VALUES (4, 'later')"));
  BR_ASSERT_OK_AND_ASSIGN(auto end, source_->BinlogEnd());

  // serve stops on its own.
  for (int i = 0; i < 300 && serve->Running(); ++i) std::this_thread::sleep_for(milliseconds(100));
  ASSERT_FALSE(serve->Running()) << "serve went on past an unknown event: " << serve->StderrTail();
  EXPECT_GE(rewritten_.load(), 1);
  const std::string err = ErrorLine(serve->Stderr());
  BR_ASSERT_OK_AND_ASSIGN(SqlRows version, source_->Query("SELECT VERSION()"));
  EXPECT_TRUE(absl::StrContains(err, *version[0][0])) << "the release is not named: " << err;
  EXPECT_TRUE(absl::StrContains(err, absl::StrCat(good.file, ":"))) << err;

  // Everything before the event is stored, byte for byte, and nothing of
  // the transaction that holds it is committed.
  const std::string stored = ReadWholeFile(serve->store_dir() + "/" + good.file);
  const std::string original = ReadWholeFile(source_->DataDir() + "/" + good.file);
  ASSERT_GE(stored.size(), good.pos) << "lost what came before the event";
  EXPECT_EQ(stored, original.substr(0, stored.size())) << "a stored byte differs from the source";
  BR_ASSERT_OK_AND_ASSIGN(ProcessResult rows,
                          RunBinrelay({"tail", "--file", serve->store_dir() + "/" + good.file,
                                       "--tables", "u.t"},
                                      {}, seconds(60)));
  EXPECT_FALSE(absl::StrContains(rows.out, kMarker)) << rows.out;
  EXPECT_FALSE(absl::StrContains(rows.out, "later")) << rows.out;

  // Restarted on the source itself (the release's stream binrelay knows),
  // it resumes where it stopped: the store becomes the source's file.
  // (Its config file names the source; the proxy came from the overrides.)
  serve->Kill();
  BR_ASSERT_OK_AND_ASSIGN(auto resumed,
                          BackgroundBinrelay::Start({"serve", "--config", serve->config_path()}, {}));
  const std::string path = serve->store_dir() + "/" + end.first;
  bool caught_up = false;
  for (int i = 0; i < 300 && !caught_up; ++i) {
    std::error_code ec;
    caught_up = fs::exists(path, ec) && fs::file_size(path, ec) >= end.second;
    if (!caught_up) std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_TRUE(caught_up) << resumed->StderrSoFar();
  BR_EXPECT_OK(CompareBinlogCopy(source_->DataDir() + "/" + end.first, path,
                                 CopyCompare::kPrefix));
}

// The same for tail: the rows before the event are printed, none from its
// transaction on, and the exit says what and where.
TEST_P(LiveUnknownEventTest, TailStopsNamingReleasePositionAndType) {
  BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(*source_));
  BR_ASSERT_OK(source_->Execute("INSERT INTO u.t VALUES (10, 'printed')"));
  BR_ASSERT_OK(source_->Execute(absl::StrCat("INSERT INTO u.t VALUES (11, '", kMarker, "')")));
  BR_ASSERT_OK(source_->Execute("INSERT INTO u.t VALUES (12, 'later')"));
  std::vector<std::string> args = {"tail",   "--source", absl::StrCat("127.0.0.1:", proxy_->port()),
                                   "--user", kRelayUser, "--tables",
                                   "u.t",    "--start",  start,
                                   "--until-end", "--tls", "disabled"};
  if (source_->IsMysql()) args.push_back("--get-server-public-key");
  BR_ASSERT_OK_AND_ASSIGN(ProcessResult r, RunBinrelay(args, {{"BINRELAY_SOURCE_PASSWORD",
                                                               kRelayPassword}},
                                                       seconds(60)));
  EXPECT_NE(r.exit_code, 0) << r.Describe();
  EXPECT_TRUE(absl::StrContains(r.out, "\"printed\"")) << r.out;
  EXPECT_FALSE(absl::StrContains(r.out, kMarker)) << r.out;
  EXPECT_FALSE(absl::StrContains(r.out, "\"later\"")) << r.out;
  BR_ASSERT_OK_AND_ASSIGN(SqlRows version, source_->Query("SELECT VERSION()"));
  const std::string err = ErrorLine(r.err);
  EXPECT_TRUE(absl::StrContains(err, *version[0][0])) << err;
  EXPECT_TRUE(absl::StrContains(err, start.substr(0, start.find(':')) + ":")) << err;
}

INSTANTIATE_TEST_SUITE_P(Flavours, LiveUnknownEventTest, ::testing::ValuesIn(ServerFlavour::All()),
                         FlavourTestName<::testing::TestParamInfo<std::string>>);

}  // namespace
}  // namespace binrelay::testing
