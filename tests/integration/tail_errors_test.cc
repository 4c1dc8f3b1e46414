// `binrelay tail` failure modes against real servers: bad credentials,
// unsuitable binlog settings, partial row images, and a source that stays
// away longer than --reconnect-timeout.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/harness/binrelay_process.h"
#include "tests/harness/json_lite.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

using std::chrono::seconds;

constexpr char kUser[] = "relay";
constexpr char kPassword[] = "errors-pw";
constexpr char kGrants[] = "REPLICATION SLAVE, BINLOG MONITOR, SELECT";

EnvVars Env(const char* password = kPassword) {
  return {{"BINRELAY_SOURCE_PASSWORD", password}};
}

absl::StatusOr<std::unique_ptr<ServerSandbox>> StartWithUser(std::vector<std::string> extra) {
  ServerSandboxOptions o;
  o.extra_args = std::move(extra);
  auto sb = ServerSandbox::Start(o);
  if (!sb.ok()) return sb.status();
  BR_RETURN_IF_ERROR((*sb)->CreateUser(kUser, kPassword, kGrants));
  return sb;
}

int CountLinesContaining(const std::vector<std::string>& lines,
                         const std::vector<std::string>& needles) {
  int n = 0;
  for (const std::string& l : lines) {
    for (const std::string& needle : needles) {
      if (absl::StrContains(l, needle)) {
        ++n;
        break;
      }
    }
  }
  return n;
}

// Resumes a SIGSTOPped server however the test ends.
struct ContinueOnExit {
  pid_t pid;
  ~ContinueOnExit() { kill(pid, SIGCONT); }
};

// Guards: a wrong password being retried forever, reported unclearly or
// several times, or anything reaching stdout.
TEST(TailErrorsTest, BadPasswordExitsNonZeroWithOneAccessDeniedLine) {
  BR_ASSERT_OK_AND_ASSIGN(auto sb, StartWithUser({}));
  BR_ASSERT_OK_AND_ASSIGN(ProcessResult r, RunBinrelay(TailArgs(*sb, kUser, "db.t", {}),
                                                       Env("not-the-password"), seconds(30)));
  EXPECT_FALSE(r.timed_out) << r.Describe();
  EXPECT_NE(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(r.term_signal, 0) << r.Describe();
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(CountLinesContaining(r.ErrLines(), {"Access denied", "1045"}), 1) << r.err;
}

// Guards: a STATEMENT-format source being tailed (it has no row events, so
// the output would be silently empty) instead of refused with the reason.
TEST(TailErrorsTest, StatementBinlogFormatIsRefusedNamingBinlogFormat) {
  BR_ASSERT_OK_AND_ASSIGN(auto sb, StartWithUser({"--binlog-format=STATEMENT"}));
  BR_ASSERT_OK_AND_ASSIGN(ProcessResult r,
                          RunBinrelay(TailArgs(*sb, kUser, "db.t", {}), Env(), seconds(30)));
  EXPECT_FALSE(r.timed_out) << r.Describe();
  EXPECT_NE(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(r.out, "");
  EXPECT_GE(CountLinesContaining(r.ErrLines(), {"binlog_format"}), 1) << r.err;
}

// Guards: MINIMAL images printed as if they were whole rows (consumers would
// take missing columns for NULL or unchanged data).
TEST(TailErrorsTest, MinimalRowImageLinesMissingColumnsAreMarkedPartial) {
  BR_ASSERT_OK_AND_ASSIGN(auto sb, StartWithUser({"--binlog-row-image=MINIMAL"}));
  BR_ASSERT_OK(sb->Execute("CREATE DATABASE m"));
  BR_ASSERT_OK(sb->Execute("CREATE TABLE m.t (id INT PRIMARY KEY, a INT, b VARCHAR(10))"));
  BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(*sb));
  BR_ASSERT_OK(sb->Execute("INSERT INTO m.t VALUES (1, 10, 'x')"));
  BR_ASSERT_OK(sb->Execute("UPDATE m.t SET a = 11 WHERE id = 1"));
  BR_ASSERT_OK(sb->Execute("DELETE FROM m.t WHERE id = 1"));

  BR_ASSERT_OK_AND_ASSIGN(
      ProcessResult r, RunBinrelay(TailArgs(*sb, kUser, "m.t", {"--start", start, "--until-end"}),
                                   Env(), seconds(30)));
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  BR_ASSERT_OK_AND_ASSIGN(std::vector<JsonValue> lines, ParseJsonLines(r.out));
  ASSERT_EQ(lines.size(), 3u) << r.out;
  // A line whose images omit any column must say so. (MariaDB logs an
  // INSERT's after image whole even under MINIMAL, so line 1 may be complete.)
  const std::vector<std::string> raw = r.OutLines();
  for (size_t i = 0; i < lines.size(); ++i) {
    bool omits = false;
    for (const char* image_key : {"before", "after"}) {
      const JsonValue* image = lines[i].Find(image_key);
      if (image == nullptr || !image->is_object()) continue;
      for (const char* col : {"id", "a", "b"}) omits |= image->Find(col) == nullptr;
    }
    const JsonValue* marker = lines[i].Find("image");
    const bool partial = marker != nullptr && marker->text == "partial";
    if (i > 0) {
      EXPECT_TRUE(omits) << "update/delete under MINIMAL must omit columns: " << raw[i];
    }
    EXPECT_EQ(partial, omits) << "line " << i + 1 << ": \"image\":\"partial\" must mark "
                              << "exactly the lines missing columns: " << raw[i];
  }
  // The update's before image holds the key only; its after image holds the
  // changed column with its new value and not the untouched `b`.
  const JsonValue* before = lines[1].Find("before");
  const JsonValue* after = lines[1].Find("after");
  ASSERT_TRUE(before && before->is_object() && after && after->is_object()) << r.out;
  ASSERT_NE(before->Find("id"), nullptr) << r.out;
  EXPECT_EQ(before->Find("id")->text, "1");
  EXPECT_EQ(before->Find("b"), nullptr) << "unchanged column in a MINIMAL before image";
  ASSERT_NE(after->Find("a"), nullptr) << r.out;
  EXPECT_EQ(after->Find("a")->text, "11");
  EXPECT_EQ(after->Find("b"), nullptr) << "unchanged column in a MINIMAL after image";
}

// Guards: a dead source (shut down) being taken for the end of the stream, or
// retried forever: past --reconnect-timeout binrelay must fail loudly, and
// stdout must hold only complete lines.
TEST(TailErrorsTest, SourceShutDownLongerThanReconnectTimeoutExitsNonZero) {
  BR_ASSERT_OK_AND_ASSIGN(auto sb, StartWithUser({}));
  BR_ASSERT_OK(sb->Execute("CREATE DATABASE g"));
  BR_ASSERT_OK(sb->Execute("CREATE TABLE g.t (id INT PRIMARY KEY)"));
  BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(*sb));
  BR_ASSERT_OK_AND_ASSIGN(
      auto tail, BackgroundBinrelay::Start(
                     TailArgs(*sb, kUser, "g.t",
                              {"--start", start, "--heartbeat", "1", "--reconnect-timeout", "3"}),
                     Env()));
  for (int i = 1; i <= 20; ++i) {
    BR_ASSERT_OK(sb->Execute(absl::StrCat("INSERT INTO g.t VALUES (", i, ")")));
  }
  ASSERT_GE(tail->WaitForStdoutLines(20, seconds(30)), 20u) << tail->StderrSoFar();
  const auto stopped_at = std::chrono::steady_clock::now();
  sb->Stop();
  ProcessResult r = tail->Wait(seconds(60));
  const auto took = std::chrono::steady_clock::now() - stopped_at;
  EXPECT_FALSE(r.timed_out) << r.Describe();
  EXPECT_NE(r.exit_code, 0) << "binrelay treated the source's shutdown as a normal end; "
                            << r.Describe();
  EXPECT_GE(took, seconds(3)) << "gave up before --reconnect-timeout";
  BR_ASSERT_OK_AND_ASSIGN(std::vector<JsonValue> lines, ParseJsonLines(r.out));
  EXPECT_EQ(lines.size(), 20u);
  std::vector<std::string> err = r.ErrLines();
  ASSERT_FALSE(err.empty());
  EXPECT_TRUE(absl::StrContains(err.back(), absl::StrCat(sb->Host(), ":", sb->Port())))
      << "last stderr line should name the source: " << err.back();
}

// Guards: a hung source (process frozen, TCP still open) never being noticed:
// missed heartbeats must count as a lost link and --reconnect-timeout apply.
TEST(TailErrorsTest, FrozenSourceLongerThanReconnectTimeoutExitsNonZero) {
  BR_ASSERT_OK_AND_ASSIGN(auto sb, StartWithUser({}));
  BR_ASSERT_OK(sb->Execute("CREATE DATABASE h"));
  BR_ASSERT_OK(sb->Execute("CREATE TABLE h.t (id INT PRIMARY KEY)"));
  BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(*sb));
  BR_ASSERT_OK_AND_ASSIGN(
      auto tail, BackgroundBinrelay::Start(
                     TailArgs(*sb, kUser, "h.t",
                              {"--start", start, "--heartbeat", "1", "--reconnect-timeout", "3"}),
                     Env()));
  for (int i = 1; i <= 5; ++i) {
    BR_ASSERT_OK(sb->Execute(absl::StrCat("INSERT INTO h.t VALUES (", i, ")")));
  }
  ASSERT_GE(tail->WaitForStdoutLines(5, seconds(30)), 5u) << tail->StderrSoFar();
  ContinueOnExit resume{sb->Pid()};
  ASSERT_EQ(kill(sb->Pid(), SIGSTOP), 0);
  ProcessResult r = tail->Wait(seconds(90));
  EXPECT_FALSE(r.timed_out) << "binrelay never gave up on a frozen source; " << r.Describe();
  EXPECT_NE(r.exit_code, 0) << r.Describe();
  BR_ASSERT_OK_AND_ASSIGN(std::vector<JsonValue> lines, ParseJsonLines(r.out));
  EXPECT_EQ(lines.size(), 5u);
  std::vector<std::string> err = r.ErrLines();
  ASSERT_FALSE(err.empty());
  EXPECT_TRUE(absl::StrContains(err.back(), absl::StrCat(sb->Host(), ":", sb->Port())))
      << "last stderr line should name the source: " << err.back();
}

}  // namespace
}  // namespace binrelay::testing
