// Real third-party binlog clients from the npm registry read
// `binrelay serve` exactly as they read the source. Each client (wrapped in
// tests/clients/*.js with one CLI and one normalised output: a JSON line per
// changed row, positions included) streams the same workload (many column
// types, inserts, updates, deletes, multi-row transactions) from the MariaDB
// source and from binrelay following it, from the same position; the two
// outputs must be equal line for line.
//
// Clients (tests/clients/README.md): @vlasky/zongji (JavaScript decoder;
// MariaDB dialect, and --flavor mysql, which does not announce
// @mariadb_slave_capability) and @solashi/go-mysql-binlog-node (a prebuilt
// go-mysql binary, MySQL flavour only). `scripts/setup.sh` installs them
// (npm ci); a missing install is a failure here, not a skip.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "protocol/status_macros.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/serve_fixture.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

namespace fs = std::filesystem;

const std::string kClients = absl::StrCat(BINRELAY_SOURCE_DIR, "/tests/clients");

class ServeNpmClientsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(fs::exists(kClients + "/node_modules/@vlasky/zongji"))
        << "the npm test clients are not installed: run scripts/setup.sh (npm ci in "
        << kClients << ")";
    auto source = StartServeSource();
    ASSERT_TRUE(source.ok()) << source.status();
    source_ = source->release();
    auto start = source_->Query("SHOW MASTER STATUS");
    ASSERT_TRUE(start.ok()) << start.status();
    file_ = (*start)[0][0].value_or("");
    pos_ = (*start)[0][1].value_or("4");
    CommandResult load = RunShellCommand(
        absl::StrCat("mariadb --no-defaults -uroot --socket=", source_->SocketPath(), " < ",
                     kClients, "/workload.sql"),
        std::chrono::seconds(60));
    ASSERT_EQ(load.exit_code, 0) << load.output;
    auto serve = ServeProcess::Create(*source_);
    ASSERT_TRUE(serve.ok()) << serve.status();
    serve_ = serve->release();
    absl::Status st = serve_->Start();
    ASSERT_TRUE(st.ok()) << st;
    auto reached = WaitStoreReached(*serve_, *source_, std::chrono::seconds(60));
    ASSERT_TRUE(reached.ok()) << reached.status();
  }
  static void TearDownTestSuite() {
    delete serve_;
    delete source_;
  }

  // The script's output against `port` as `user`, and its exit.
  static CommandResult Run(const std::string& script, const std::vector<std::string>& extra,
                           uint16_t port, const char* user, const char* password,
                           int server_id) {
    std::string cmd = absl::StrCat("cd ", kClients, " && node ", script, " --host 127.0.0.1",
                                   " --port ", port, " --user ", user, " --password ", password,
                                   " --file ", file_, " --pos ", pos_, " --server-id ", server_id,
                                   " --until-rows ", kRows, " --timeout-ms 60000");
    for (const std::string& e : extra) absl::StrAppend(&cmd, " ", e);
    // stderr apart: the output compared is the rows alone.
    return RunShellCommand(absl::StrCat("sh -c '", cmd, " 2>", ::testing::TempDir(),
                                        "npm-client-", server_id, ".err'"),
                           std::chrono::seconds(90));
  }

  void ExpectSameRows(const std::string& script, const std::vector<std::string>& extra) {
    SCOPED_TRACE(absl::StrCat(script, " ", extra.empty() ? "" : extra[0]));
    CommandResult from_source = Run(script, extra, source_->Port(), kRelayUser, kRelayPassword, 5301);
    ASSERT_EQ(from_source.exit_code, 0) << from_source.output << ReadWholeFile(absl::StrCat(
        ::testing::TempDir(), "npm-client-5301.err"));
    CommandResult from_relay =
        Run(script, extra, serve_->listen_port(), kReplUser, kReplPassword, 5302);
    EXPECT_EQ(from_relay.exit_code, 0)
        << from_relay.output << ReadWholeFile(absl::StrCat(::testing::TempDir(), "npm-client-5302.err"))
        << "\n" << serve_->StderrTail(20);
    std::vector<std::string> a = absl::StrSplit(from_source.output, '\n', absl::SkipEmpty());
    std::vector<std::string> b = absl::StrSplit(from_relay.output, '\n', absl::SkipEmpty());
    EXPECT_EQ(a.size(), static_cast<size_t>(kRows));
    ASSERT_EQ(b.size(), a.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(b[i], a[i]) << "row " << i;
  }

  static constexpr int kRows = 56;  // what tests/clients/workload.sql changes
  static ServerSandbox* source_;
  static ServeProcess* serve_;
  static std::string file_;
  static std::string pos_;
};
ServerSandbox* ServeNpmClientsTest::source_ = nullptr;
ServeProcess* ServeNpmClientsTest::serve_ = nullptr;
std::string ServeNpmClientsTest::file_;
std::string ServeNpmClientsTest::pos_;

// Guards what zongji hit: its dump's file name ends with a zero byte
// (binrelay answered the retryable 1105 for a file it holds, and zongji
// retried forever), then a prepared information_schema lookup (COM_STMT_*
// got 1047), then KILL of its dump connection on stop.
TEST_F(ServeNpmClientsTest, ZongjiReadsTheSameRows) { ExpectSameRows("zongji_dump.js", {}); }

// Guards a MariaDB stream refused to a client that does not announce
// @mariadb_slave_capability (binrelay refused it with 1236; the source
// rewrites GTIDs as BEGIN and MariaDB-only events as dummies).
TEST_F(ServeNpmClientsTest, ZongjiAsAMysqlClientReadsTheSameRows) {
  ExpectSameRows("zongji_dump.js", {"--flavor mysql"});
}

// Guards go-mysql (MySQL flavour only: no capability, SHOW FULL COLUMNS and
// SHOW INDEX for names, KILL of its dump on close) reading binrelay.
TEST_F(ServeNpmClientsTest, GoMysqlReadsTheSameRows) { ExpectSameRows("gomysql_dump.js", {}); }

}  // namespace
}  // namespace binrelay::testing
