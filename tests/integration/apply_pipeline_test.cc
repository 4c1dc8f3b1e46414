// Apply pipelines against real servers: a MariaDB source, binrelay serve
// following it, and a separate MariaDB target that [apply.NAME] sections
// keep identical to the source's tables (CHECKSUM TABLE compared).
//
// Each test uses its own databases on the shared source and target, creates
// the same tables on both, and starts its pipelines at the source's binlog
// end after those CREATE TABLEs (as an operator starts one after copying a
// table).

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <chrono>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "protocol/client_connection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/harness/binrelay_process.h"
#include "tests/harness/every_type_table.h"
#include "tests/harness/json_lite.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/replica_fixture.h"
#include "tests/harness/serve_fixture.h"
#include "tests/harness/sql_conn.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kApplier[] = "applier";
constexpr char kApplierPassword[] = "applier-pw";

struct Pipeline {
  std::string name;
  std::string tables;
  std::string target_schema;  // "" = the same database
  std::vector<std::string> extra;  // "key = value" lines
  const ServerSandbox* target = nullptr;  // nullptr: the test's target
  std::string password = kApplierPassword;
  bool expect_ready = true;  // StartServe waits until it has caught up
  std::string start;  // "" = the source's current end when the serve starts
};

class ApplyPipelineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto source = StartServeSource({"--binlog-format=ROW", "--binlog-row-image=FULL"});
    ASSERT_TRUE(source.ok()) << source.status();
    source_ = source->release();
    // Pipelines whose target is the source write there as the applier.
    ASSERT_TRUE(source_->CreateUser(kApplier, kApplierPassword).ok());
    ServerSandboxOptions o;
    o.server_id = 2;
    auto target = ServerSandbox::Start(o);
    ASSERT_TRUE(target.ok()) << target.status();
    target_ = target->release();
    ASSERT_TRUE(target_->CreateUser(kApplier, kApplierPassword).ok());
  }
  static void TearDownTestSuite() {
    delete target_;
    delete source_;
    target_ = nullptr;
    source_ = nullptr;
  }

  // Runs `ddl` (CREATE DATABASE/TABLE ...) on the source and on `target`.
  static void CreateOnBoth(const std::vector<std::string>& ddl, ServerSandbox* target = nullptr) {
    for (const std::string& s : ddl) {
      BR_ASSERT_OK(source_->Execute(s));
      BR_ASSERT_OK((target ? target : target_)->Execute(s));
    }
  }

  // A serve config with `pipelines`, all starting at the source's current end
  // (`source`, or the suite's).
  std::unique_ptr<ServeProcess> StartServe(const std::vector<Pipeline>& pipelines,
                                           ServerSandbox* source = nullptr) {
    if (source == nullptr) source = source_;
    auto start = CurrentBinlogPosition(*source);
    EXPECT_TRUE(start.ok()) << start.status();
    if (!start.ok()) return nullptr;
    std::string extra;
    for (const Pipeline& p : pipelines) {
      const ServerSandbox* t = p.target ? p.target : target_;
      absl::StrAppend(&extra, "[apply.", p.name, "]\ntarget_host = 127.0.0.1\ntarget_port = ",
                      t->Port(), "\ntarget_user = ", kApplier, "\ntarget_password = ",
                      p.password, "\ntables = ", p.tables, "\nstart = ",
                      p.start.empty() ? *start : p.start,
                      "\nflush_interval = 200ms\n");
      if (!p.target_schema.empty()) absl::StrAppend(&extra, "target_schema = ", p.target_schema, "\n");
      for (const std::string& line : p.extra) absl::StrAppend(&extra, line, "\n");
    }
    ServeOptions o;
    o.extra_config = extra;
    auto serve = ServeProcess::Create(*source, o);
    EXPECT_TRUE(serve.ok()) << serve.status();
    if (!serve.ok()) return nullptr;
    absl::Status s = (*serve)->Start();
    EXPECT_TRUE(s.ok()) << s;
    // Pipelines check their tables against the source's as they are when
    // they start; a test's DDL must come after that.
    for (const Pipeline& p : pipelines) {
      if (!p.expect_ready) continue;
      EXPECT_TRUE(StatusShows(**serve, p.name, "state", "caught up"));
    }
    return std::move(*serve);
  }

  // CHECKSUM TABLE of every table of `db` on the source equals that of
  // `target_db` on `target`, polled until `timeout`.
  static ::testing::AssertionResult Converges(const std::string& db, const std::string& target_db,
                                              seconds timeout, ServeProcess* serve,
                                              ServerSandbox* target = nullptr) {
    ServerSandbox* t = target ? target : target_;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string last;
    while (true) {
      auto want = ChecksumAllTables(*source_, db);
      auto got = ChecksumAllTables(*t, target_db);
      if (want.ok() && got.ok() && !want->empty() && *want == *got) {
        return ::testing::AssertionSuccess();
      }
      last.clear();
      if (want.ok() && got.ok()) {
        for (const auto& [table, sum] : *want) {
          auto it = got->find(table);
          absl::StrAppend(&last, table, ": source ", sum, ", target ",
                          it == got->end() ? "missing" : it->second, "; ");
        }
      } else {
        last = absl::StrCat(want.status().ToString(), " / ", got.status().ToString());
      }
      if (std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(milliseconds(200));
    }
    return ::testing::AssertionFailure()
           << db << " -> " << target_db << " did not converge: " << last << "\nstatus: "
           << (serve ? HttpGet(serve->http_port(), "/status") : "") << "\n"
           << (serve ? serve->StderrTail(30) : "");
  }

  // A counter of the target's SHOW GLOBAL STATUS (0 if unreadable).
  static uint64_t TargetCounter(const std::string& name) {
    auto rows = target_->Query("SHOW GLOBAL STATUS LIKE '" + name + "'");
    if (!rows.ok() || rows->empty() || (*rows)[0].size() < 2 || !(*rows)[0][1]) return 0;
    return std::stoull(*(*rows)[0][1]);
  }

  // Test bodies run with bulk_replace = `bulk` (on or off).
  void KeyChangesAndEveryColumnType(const std::string& db, const std::string& bulk);
  void QuotesAndTrailBytes(const std::string& db, const std::string& bulk);

  // The pipeline `name` in /status, or nullptr.
  static std::optional<JsonValue> PipelineStatus(ServeProcess& serve, const std::string& name) {
    auto json = StatusJson(serve.http_port());
    if (!json.ok()) return std::nullopt;
    const JsonValue* list = json->Find("pipelines");
    if (list == nullptr) return std::nullopt;
    for (const JsonValue& p : list->array) {
      const JsonValue* n = p.Find("name");
      if (n && n->text == name) return p;
    }
    return std::nullopt;
  }

  // Polls /status until pipeline `name`'s field `key` contains `want`.
  static ::testing::AssertionResult StatusShows(ServeProcess& serve, const std::string& name,
                                                const std::string& key, const std::string& want,
                                                seconds timeout = seconds(30)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string last;
    while (std::chrono::steady_clock::now() < deadline) {
      if (auto p = PipelineStatus(serve, name)) {
        const JsonValue* v = p->Find(key);
        last = v ? v->text : "(absent)";
        if (v && absl::StrContains(v->text, want)) return ::testing::AssertionSuccess();
      }
      std::this_thread::sleep_for(milliseconds(200));
    }
    return ::testing::AssertionFailure() << "pipeline " << name << " " << key << " is '" << last
                                         << "', wanted it to contain '" << want << "'\n"
                                         << serve.StderrTail(20);
  }

  static ServerSandbox* source_;
  static ServerSandbox* target_;
};

ServerSandbox* ApplyPipelineTest::source_ = nullptr;
ServerSandbox* ApplyPipelineTest::target_ = nullptr;

// Guards: start = gtid:POS ignored (the pipeline would begin at the store's
// end and miss what the source wrote after the copy was taken) or resolved
// past the first transaction the copy lacks.
TEST_F(ApplyPipelineTest, GtidStartAppliesEverythingAfterTheCopysPosition) {
  CreateOnBoth({"CREATE DATABASE gstart", "CREATE TABLE gstart.t (id INT PRIMARY KEY, v INT)"});
  BR_ASSERT_OK(source_->Execute("INSERT INTO gstart.t VALUES (1, 1), (2, 2)"));
  // The copy: the target holds the rows as of this GTID position.
  BR_ASSERT_OK_AND_ASSIGN(std::string copy_pos, GtidBinlogPos(*source_));
  BR_ASSERT_OK(target_->Execute("INSERT INTO gstart.t VALUES (1, 1), (2, 2)"));
  BR_ASSERT_OK(target_->Execute("CREATE DATABASE gstart_b"));
  BR_ASSERT_OK(target_->Execute("CREATE TABLE gstart_b.t LIKE gstart.t"));
  BR_ASSERT_OK(target_->Execute("INSERT INTO gstart_b.t SELECT * FROM gstart.t"));
  // Written after the copy and before binrelay starts.
  BR_ASSERT_OK(source_->Execute("INSERT INTO gstart.t VALUES (3, 3)"));
  BR_ASSERT_OK(source_->Execute("UPDATE gstart.t SET v = 10 WHERE id = 1"));
  BR_ASSERT_OK(source_->Execute("DELETE FROM gstart.t WHERE id = 2"));
  Pipeline p{"gstart", "gstart.t", "", {}};
  p.start = "gtid:" + copy_pos;
  auto serve = StartServe({p});
  ASSERT_NE(serve, nullptr);
  EXPECT_TRUE(Converges("gstart", "gstart", seconds(30), serve.get()));
  BR_ASSERT_OK(source_->Execute("INSERT INTO gstart.t VALUES (4, 4)"));
  EXPECT_TRUE(Converges("gstart", "gstart", seconds(30), serve.get()));
  // A second pipeline from the same position, added to a running relay
  // whose store already holds the position (the first resolved it once
  // the store had events; this one resolves it before serve starts).
  BR_ASSERT_OK(serve->Stop());
  std::ofstream(serve->config_path(), std::ios::app)
      << "[apply.gstart_b]\ntarget_host = 127.0.0.1\ntarget_port = " << target_->Port()
      << "\ntarget_user = " << kApplier << "\ntarget_password = " << kApplierPassword
      << "\ntables = gstart.t\ntarget_schema = gstart_b\nstart = gtid:" << copy_pos
      << "\nflush_interval = 200ms\n";
  BR_ASSERT_OK(serve->Start());
  EXPECT_TRUE(Converges("gstart", "gstart_b", seconds(30), serve.get()));
}

// Guards: REPLACE of a row whose unique value another row still holds on
// the target (1062, or the wrong row deleted) when unique values move
// between rows, one transaction at a time and in a rotation inside one
// transaction, with one row per statement and with the default batches.
TEST_F(ApplyPipelineTest, SwapPairsAndRotationsConvergeWithoutDuplicateKeyErrors) {
  CreateOnBoth({"CREATE DATABASE swap", "CREATE DATABASE swap_b1",
                "CREATE TABLE swap.t (id INT PRIMARY KEY, slot VARCHAR(50) NULL, UNIQUE(slot))"});
  BR_ASSERT_OK(target_->Execute("CREATE TABLE swap_b1.t LIKE swap.t"));
  auto serve = StartServe({{"swapdefault", "swap.t", "", {}},
                           {"swapone", "swap.t", "swap_b1", {"batch_rows = 1"}}});
  ASSERT_NE(serve, nullptr);
  BR_ASSERT_OK(source_->Execute(
      "INSERT INTO swap.t VALUES (1,'v1'),(2,NULL),(3,'v3'),(4,NULL),(5,'r1'),(6,'r2'),(7,'r3')"));
  // 50 transactions, each moving a unique value from one row to another.
  for (int i = 0; i < 50; ++i) {
    const int from = (i % 2 == 0) ? 1 : 2;
    const int to = 3 - from;
    const int from2 = (i % 2 == 0) ? 3 : 4;
    const int to2 = 7 - from2;
    BR_ASSERT_OK(source_->Execute(absl::StrCat(
        "BEGIN NOT ATOMIC START TRANSACTION; ",
        "UPDATE swap.t SET slot = NULL WHERE id = ", from, "; ",
        "UPDATE swap.t SET slot = 'v1' WHERE id = ", to, "; ",
        "UPDATE swap.t SET slot = NULL WHERE id = ", from2, "; ",
        "UPDATE swap.t SET slot = 'v3' WHERE id = ", to2, "; COMMIT; END")));
  }
  // A rotation of three unique values inside one transaction.
  BR_ASSERT_OK(source_->Execute(
      "BEGIN NOT ATOMIC START TRANSACTION; UPDATE swap.t SET slot = NULL WHERE id = 5; "
      "UPDATE swap.t SET slot = 'r1' WHERE id = 6; UPDATE swap.t SET slot = 'r2' WHERE id = 7; "
      "UPDATE swap.t SET slot = 'r3' WHERE id = 5; COMMIT; END"));
  EXPECT_TRUE(Converges("swap", "swap", seconds(60), serve.get()));
  EXPECT_TRUE(Converges("swap", "swap_b1", seconds(60), serve.get()));
  for (const char* name : {"swapdefault", "swapone"}) {
    auto p = PipelineStatus(*serve, name);
    ASSERT_TRUE(p.has_value()) << name;
    EXPECT_EQ(p->Find("last_error")->text, "") << name;
    EXPECT_NE(p->Find("state")->text, "error") << name;
    const JsonValue* retries = p->Find("retries");
    ASSERT_NE(retries, nullptr);
    EXPECT_EQ(retries->Find("1062"), nullptr) << name << " saw duplicate-key errors";
  }
  auto one = PipelineStatus(*serve, "swapone");
  EXPECT_GE(std::stoull(one->Find("rows_written")->text), 7u);
}

// Guards: a primary-key UPDATE leaving the old row behind, a composite key
// encoded ambiguously, an insert-delete-insert of one key collapsing to the
// wrong state, and any column type written inexactly (CHECKSUM TABLE
// compares every byte).
void ApplyPipelineTest::KeyChangesAndEveryColumnType(const std::string& db, const std::string& bulk) {
  CreateOnBoth({"CREATE DATABASE " + db + " CHARACTER SET utf8mb4",
                "CREATE TABLE " + db + ".single (id INT PRIMARY KEY, v INT)",
                "CREATE TABLE " + db + ".composite (a INT, b VARBINARY(10), v INT, PRIMARY KEY (a, b))",
                EveryTypeTableDdl(db + ".types")});
  const uint64_t prepares = TargetCounter("Com_stmt_prepare");
  // Pipeline names differ per run: a checkpoint left on the target by one
  // would be resumed by the other.
  const std::string name = "keys_" + bulk;
  auto serve = StartServe({{name, db + ".*", "", {"bulk_replace = " + bulk}}});
  ASSERT_NE(serve, nullptr);
  BR_ASSERT_OK(source_->Execute("INSERT INTO " + db + ".single VALUES (1,1),(2,2),(3,3)"));
  BR_ASSERT_OK(source_->Execute("UPDATE " + db + ".single SET id = id + 100 WHERE id < 3"));
  BR_ASSERT_OK(source_->Execute("UPDATE " + db + ".single SET id = 1 WHERE id = 101"));
  BR_ASSERT_OK(source_->Execute(
      "INSERT INTO " + db + ".composite VALUES (1,'a-b',1),(1,'a',2),(2,'x',3)"));
  BR_ASSERT_OK(source_->Execute("UPDATE " + db + ".composite SET b = 'a-c' WHERE a = 1 AND b = 'a-b'"));
  BR_ASSERT_OK(source_->Execute("UPDATE " + db + ".composite SET a = 3 WHERE b = 'x'"));
  // Insert, delete, insert of one key, in separate transactions.
  BR_ASSERT_OK(source_->Execute("INSERT INTO " + db + ".single VALUES (50, 1)"));
  BR_ASSERT_OK(source_->Execute("DELETE FROM " + db + ".single WHERE id = 50"));
  BR_ASSERT_OK(source_->Execute("INSERT INTO " + db + ".single VALUES (50, 2)"));
  // Every type: inserted, updated, two deleted, two kept.
  BR_ASSERT_OK(source_->Execute("SET NAMES utf8mb4"));
  BR_ASSERT_OK(source_->Execute("SET time_zone = '+00:00'"));
  BR_ASSERT_OK(source_->Execute("SET sql_mode = ''"));
  std::vector<std::string> nulls(Columns().size(), "NULL");
  BR_ASSERT_OK(source_->Execute(absl::StrCat(
      "INSERT INTO " + db + ".types VALUES ", RowValues(1, kMins), ", ", RowValues(2, kMaxes), ", ",
      RowValues(3, kMisc), ", ", RowValues(4, nulls), ", ", RowValues(5, kOther))));
  BR_ASSERT_OK(source_->Execute(absl::StrCat("UPDATE " + db + ".types SET ", SetClause(kOther),
                                             " WHERE id = 1")));
  BR_ASSERT_OK(source_->Execute(absl::StrCat("UPDATE " + db + ".types SET ", SetClause(kMaxes),
                                             " WHERE id = 4")));
  BR_ASSERT_OK(source_->Execute(absl::StrCat("UPDATE " + db + ".types SET ", SetClause(nulls),
                                             " WHERE id = 5")));
  BR_ASSERT_OK(source_->Execute("DELETE FROM " + db + ".types WHERE id IN (2, 3)"));
  EXPECT_TRUE(Converges(db, db, seconds(60), serve.get()));
  auto rows = target_->Query("SELECT id FROM " + db + ".single ORDER BY id");
  BR_ASSERT_OK(rows.status());
  std::vector<std::string> ids;
  for (const auto& r : *rows) ids.push_back(*r[0]);
  EXPECT_EQ(ids, (std::vector<std::string>{"1", "3", "50", "102"}));
  auto p = PipelineStatus(*serve, name);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->Find("last_error")->text, "");
  // The setting took effect: bulk commands need prepared statements on the
  // target; REPLACE text prepares none.
  EXPECT_EQ(p->Find("upsert_protocol")->text,
            bulk == "on" ? "bulk" : "text (bulk_replace = off)");
  EXPECT_EQ(p->Find("target_warnings")->text, "0") << "the target changed no value";
  if (bulk == "on") {
    EXPECT_GT(TargetCounter("Com_stmt_prepare"), prepares);
  } else {
    EXPECT_EQ(TargetCounter("Com_stmt_prepare"), prepares);
  }
}

TEST_F(ApplyPipelineTest, KeyChangesAndEveryColumnTypeConvergeThroughBulkCommands) {
  KeyChangesAndEveryColumnType("keys1", "on");
}

// The same through REPLACE text, as MySQL targets (no bulk commands) get it.
TEST_F(ApplyPipelineTest, KeyChangesAndEveryColumnTypeConvergeThroughReplaceText) {
  KeyChangesAndEveryColumnType("keys2", "off");
}

// Guards: keys that differ in bytes but are one row under the collation
// ('A' and 'a', 'a' and 'a ' under PAD SPACE) collapsed in a hash map, which
// would apply them in the wrong order and leave the wrong row behind.
TEST_F(ApplyPipelineTest, CaseInsensitiveAndPadSpaceKeysKeepBinlogOrder) {
  CreateOnBoth({"CREATE DATABASE ci CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
                "CREATE TABLE ci.t (k VARCHAR(10) PRIMARY KEY, v INT)"});
  auto serve = StartServe({{"ci", "ci.t", "", {}}});
  ASSERT_NE(serve, nullptr);
  BR_ASSERT_OK(source_->Execute("INSERT INTO ci.t VALUES ('A', 1)"));
  BR_ASSERT_OK(source_->Execute("DELETE FROM ci.t WHERE k = 'A'"));
  BR_ASSERT_OK(source_->Execute("INSERT INTO ci.t VALUES ('a', 2)"));
  BR_ASSERT_OK(source_->Execute("UPDATE ci.t SET v = 3 WHERE k = 'a'"));
  BR_ASSERT_OK(source_->Execute("REPLACE INTO ci.t VALUES ('a ', 4)"));
  BR_ASSERT_OK(source_->Execute("INSERT INTO ci.t VALUES ('B', 5)"));
  BR_ASSERT_OK(source_->Execute("UPDATE ci.t SET k = 'b' WHERE k = 'B'"));
  EXPECT_TRUE(Converges("ci", "ci", seconds(60), serve.get()));
  auto rows = target_->Query("SELECT CONCAT('[', k, ']'), v FROM ci.t ORDER BY v");
  BR_ASSERT_OK(rows.status());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ(*(*rows)[0][0], "[a ]");
  EXPECT_EQ(*(*rows)[1][0], "[b]");
}

// Guards: a pipeline writing into its source server's database when
// target_schema names another (the basis of an in-server copy), and its
// own writes feeding back into it.
TEST_F(ApplyPipelineTest, TargetSchemaOnTheSourceServer) {
  BR_ASSERT_OK(source_->Execute("CREATE DATABASE same1"));
  BR_ASSERT_OK(source_->Execute("CREATE DATABASE same1_copy"));
  BR_ASSERT_OK(source_->Execute("CREATE TABLE same1.t (id INT PRIMARY KEY, v VARCHAR(20))"));
  BR_ASSERT_OK(source_->Execute("CREATE TABLE same1_copy.t LIKE same1.t"));
  Pipeline p{"samesrv", "same1.*", "same1_copy", {}};
  p.target = source_;
  auto serve = StartServe({p});
  ASSERT_NE(serve, nullptr);
  for (int i = 0; i < 20; ++i) {
    BR_ASSERT_OK(source_->Execute(absl::StrCat("INSERT INTO same1.t VALUES (", i, ", 'v", i, "')")));
  }
  BR_ASSERT_OK(source_->Execute("UPDATE same1.t SET v = 'changed' WHERE id % 3 = 0"));
  BR_ASSERT_OK(source_->Execute("DELETE FROM same1.t WHERE id % 5 = 0"));
  EXPECT_TRUE(Converges("same1", "same1_copy", seconds(60), serve.get(), source_));
}

// Guards: writes to a target that logs statements. Under READ COMMITTED
// InnoDB refuses statement logging (1665), and a bulk command would be
// logged as its prepared `VALUES (?,?)` text, which the target's own
// replicas cannot run. The apply session (whose applier may) logs its rows
// as rows instead; the target's binlog must hold no statement of ours.
TEST_F(ApplyPipelineTest, StatementFormatTargetLogsTheAppliedRowsAsRows) {
  CreateOnBoth({"CREATE DATABASE stmtfmt", "CREATE TABLE stmtfmt.t (id INT PRIMARY KEY, v VARCHAR(20))"});
  BR_ASSERT_OK(target_->Execute("SET GLOBAL binlog_format = 'STATEMENT'"));
  struct Restore {
    ~Restore() { (void)target_->Execute("SET GLOBAL binlog_format = 'ROW'"); }
  } restore;
  BR_ASSERT_OK_AND_ASSIGN(std::string from, CurrentBinlogPosition(*target_));
  auto serve = StartServe({{"stmtfmt", "stmtfmt.t", "", {}}});
  ASSERT_NE(serve, nullptr);
  BR_ASSERT_OK(source_->Execute("INSERT INTO stmtfmt.t VALUES (1, 'a'), (2, 'b'), (3, 'c')"));
  BR_ASSERT_OK(source_->Execute("UPDATE stmtfmt.t SET v = 'x' WHERE id = 2"));
  EXPECT_TRUE(Converges("stmtfmt", "stmtfmt", seconds(60), serve.get()));
  auto status = PipelineStatus(*serve, "stmtfmt");
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->Find("upsert_protocol")->text, "bulk");
  BR_ASSERT_OK_AND_ASSIGN(auto conn, SqlConn::Open(*target_));
  BR_ASSERT_OK_AND_ASSIGN(
      auto events, conn->QueryNamed(absl::StrCat(
                       "SHOW BINLOG EVENTS IN '", from.substr(0, from.find(':')), "' FROM ",
                       from.substr(from.find(':') + 1))));
  size_t maps = 0;
  for (auto& e : events) {
    const std::string info = e["Info"].value_or("");
    // (Annotate_rows events quote the statement beside its row events.)
    if (e["Event_type"].value_or("") == "Query") {
      EXPECT_EQ(info.find("REPLACE INTO `stmtfmt`"), std::string::npos) << info;
    }
    if (e["Event_type"].value_or("") == "Table_map" &&
        info.find("(stmtfmt.t)") != std::string::npos) {
      ++maps;
    }
  }
  EXPECT_GT(maps, 0u) << "the applied rows are in the target's binlog as row events";
}

// Guards: a target that refuses bulk commands (here: no prepared statements
// allowed, max_prepared_stmt_count = 0, as a server at its limit would)
// stopping the pipeline, although REPLACE text would work. The batch and
// everything after it must go through as text, and status must say so.
TEST_F(ApplyPipelineTest, RefusedBulkCommandsFallBackToReplaceText) {
  CreateOnBoth({"CREATE DATABASE nobulk", "CREATE TABLE nobulk.t (id INT PRIMARY KEY, v INT)"});
  BR_ASSERT_OK(target_->Execute("SET GLOBAL max_prepared_stmt_count = 0"));
  struct Restore {
    ~Restore() { (void)target_->Execute("SET GLOBAL max_prepared_stmt_count = 16382"); }
  } restore;
  auto serve = StartServe({{"nobulk", "nobulk.t", "", {}}});
  ASSERT_NE(serve, nullptr);
  BR_ASSERT_OK(source_->Execute("INSERT INTO nobulk.t SELECT seq, seq FROM nobulk.seq_1_to_500"));
  BR_ASSERT_OK(source_->Execute("UPDATE nobulk.t SET v = v + 1 WHERE id % 7 = 0"));
  EXPECT_TRUE(Converges("nobulk", "nobulk", seconds(60), serve.get()));
  auto status = PipelineStatus(*serve, "nobulk");
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(absl::StartsWith(status->Find("upsert_protocol")->text, "text (bulk refused: "))
      << status->Find("upsert_protocol")->text;
  EXPECT_NE(status->Find("upsert_protocol")->text.find("1461"), std::string::npos)
      << "the target's own error is shown";
  EXPECT_EQ(status->Find("last_error")->text, "");
}

// Guards: a target that refuses (wrong password, a missing table, a column
// of another type) failing silently or taking the relay down: the pipeline's
// state and error say what is wrong, while the store keeps storing.
TEST_F(ApplyPipelineTest, RefusingTargetsAreReportedAndTheRelayGoesOn) {
  CreateOnBoth({"CREATE DATABASE refuse1", "CREATE TABLE refuse1.ok (id INT PRIMARY KEY)"});
  BR_ASSERT_OK(source_->Execute("CREATE TABLE refuse1.missing (id INT PRIMARY KEY)"));
  BR_ASSERT_OK(source_->Execute("CREATE TABLE refuse1.typed (id INT PRIMARY KEY, v INT)"));
  BR_ASSERT_OK(target_->Execute("CREATE TABLE refuse1.typed (id INT PRIMARY KEY, v BIGINT)"));
  Pipeline wrong_pw{"badpw", "refuse1.ok", "", {}};
  wrong_pw.password = "not-the-password";
  wrong_pw.expect_ready = false;
  Pipeline missing{"nomissing", "refuse1.missing", "", {}};
  missing.expect_ready = false;
  Pipeline typed{"badtype", "refuse1.typed", "", {}};
  typed.expect_ready = false;
  auto serve = StartServe({wrong_pw, missing, typed, {"good", "refuse1.ok", "", {}}});
  ASSERT_NE(serve, nullptr);
  EXPECT_TRUE(StatusShows(*serve, "badpw", "last_error", "Access denied"));
  EXPECT_TRUE(StatusShows(*serve, "badpw", "state", "retrying"));
  EXPECT_TRUE(StatusShows(*serve, "nomissing", "last_error", "does not exist"));
  EXPECT_TRUE(StatusShows(*serve, "badtype", "last_error",
                          "`v` is int on the source but bigint on the target"));
  BR_ASSERT_OK(source_->Execute("INSERT INTO refuse1.ok VALUES (1), (2)"));
  BR_ASSERT_OK(source_->Execute("INSERT INTO refuse1.typed VALUES (1, 1)"));
  EXPECT_TRUE(Converges("refuse1", "refuse1", seconds(1), nullptr) == false);
  auto ok = target_->Query("SELECT COUNT(*) FROM refuse1.ok");
  // The good pipeline applies; the store keeps up with the source.
  const auto deadline = std::chrono::steady_clock::now() + seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    ok = target_->Query("SELECT COUNT(*) FROM refuse1.ok");
    if (ok.ok() && *(*ok)[0][0] == "2") break;
    std::this_thread::sleep_for(milliseconds(200));
  }
  BR_ASSERT_OK(ok.status());
  EXPECT_EQ(*(*ok)[0][0], "2");
  BR_EXPECT_OK(WaitStoreReached(*serve, *source_, seconds(30)).status());
  EXPECT_TRUE(serve->Running());
  // Fixing the target lets the retrying pipeline go on by itself.
  BR_ASSERT_OK(target_->Execute("CREATE TABLE refuse1.missing (id INT PRIMARY KEY)"));
  EXPECT_TRUE(StatusShows(*serve, "nomissing", "state", "caught up"));
}

// Guards: a DDL on a subscribed table applied to a target of the old shape
// (rows in the wrong columns), the stop losing the rows before it, and a
// restart after the operator's fix not resuming after the DDL.
TEST_F(ApplyPipelineTest, DdlStopsThePipelineAndARestartResumesAfterIt) {
  CreateOnBoth({"CREATE DATABASE ddl1", "CREATE TABLE ddl1.t (id INT PRIMARY KEY, v INT)",
                "CREATE TABLE ddl1.other (id INT PRIMARY KEY)"});
  auto serve = StartServe({{"ddl", "ddl1.t", "", {}}, {"ddlother", "ddl1.other", "", {}}});
  ASSERT_NE(serve, nullptr);
  BR_ASSERT_OK(source_->Execute("INSERT INTO ddl1.t VALUES (1, 1), (2, 2)"));
  BR_ASSERT_OK(source_->Execute("ALTER TABLE ddl1.t ADD COLUMN w INT DEFAULT 7"));
  BR_ASSERT_OK(source_->Execute("INSERT INTO ddl1.t VALUES (3, 3, 3)"));
  BR_ASSERT_OK(source_->Execute("INSERT INTO ddl1.other VALUES (1)"));
  EXPECT_TRUE(StatusShows(*serve, "ddl", "state", "error"));
  EXPECT_TRUE(StatusShows(*serve, "ddl", "last_error", "DDL on subscribed table ddl1.t"));
  EXPECT_TRUE(StatusShows(*serve, "ddl", "last_error", "ADD COLUMN w INT"));
  // The rows before the DDL are on the target; the other pipeline goes on.
  auto rows = target_->Query("SELECT COUNT(*) FROM ddl1.t");
  BR_ASSERT_OK(rows.status());
  EXPECT_EQ(*(*rows)[0][0], "2");
  const auto deadline = std::chrono::steady_clock::now() + seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    rows = target_->Query("SELECT COUNT(*) FROM ddl1.other");
    if (rows.ok() && *(*rows)[0][0] == "1") break;
    std::this_thread::sleep_for(milliseconds(200));
  }
  EXPECT_EQ(*(*rows)[0][0], "1");
  // The operator makes the target match and restarts binrelay.
  BR_ASSERT_OK(target_->Execute("ALTER TABLE ddl1.t ADD COLUMN w INT DEFAULT 7"));
  BR_ASSERT_OK(serve->Stop());
  BR_ASSERT_OK(serve->Start());
  EXPECT_TRUE(Converges("ddl1", "ddl1", seconds(60), serve.get()));
}

// Guards: an ALTER that only adds a foreign key with ON DELETE CASCADE to a
// subscribed table passing as "no change". InnoDB's cascades are not in the
// binlog, so the pipeline went on while the target kept the child rows the
// source's cascade deleted, silently. It must stop at the ALTER, naming the
// table, the action and the position; and a restart, with the key still
// there, must refuse to start (it did not: the start's check read
// information_schema, where MariaDB shows foreign keys only to accounts with
// more than SELECT on the table, and binrelay's has SELECT).
TEST_F(ApplyPipelineTest, ForeignKeyCascadeAddedLaterStopsThePipelineAtTheAlter) {
  CreateOnBoth({"CREATE DATABASE fkc", "CREATE TABLE fkc.parent (id INT PRIMARY KEY)",
                "CREATE TABLE fkc.child (id INT PRIMARY KEY, p INT, KEY (p))"});
  auto serve = StartServe({{"fkc", "fkc.child", "", {}}});
  ASSERT_NE(serve, nullptr);
  BR_ASSERT_OK(source_->Execute("INSERT INTO fkc.parent VALUES (1), (2)"));
  BR_ASSERT_OK(source_->Execute("INSERT INTO fkc.child VALUES (1, 1), (2, 2)"));
  // The parent is not subscribed: wait for the child's rows only.
  SqlRows rows;
  for (int i = 0; i < 150; ++i) {
    BR_ASSERT_OK_AND_ASSIGN(rows, target_->Query("SELECT COUNT(*) FROM fkc.child"));
    if (rows[0][0].value_or("") == "2") break;
    std::this_thread::sleep_for(milliseconds(200));
  }
  ASSERT_EQ(rows[0][0].value_or(""), "2") << serve->StderrTail(20);
  BR_ASSERT_OK(source_->Execute("ALTER TABLE fkc.child ADD CONSTRAINT child_parent FOREIGN KEY "
                                "(p) REFERENCES fkc.parent (id) ON DELETE CASCADE"));
  // Deletes child row 1 on the source; only the parent's row is logged.
  BR_ASSERT_OK(source_->Execute("DELETE FROM fkc.parent WHERE id = 1"));
  BR_ASSERT_OK(source_->Execute("INSERT INTO fkc.child VALUES (3, 2)"));
  EXPECT_TRUE(StatusShows(*serve, "fkc", "state", "error"));
  EXPECT_TRUE(StatusShows(*serve, "fkc", "last_error",
                          "fkc.child gained a foreign key with ON DELETE CASCADE at "));
  // Nothing after the ALTER was applied.
  BR_ASSERT_OK_AND_ASSIGN(rows, target_->Query("SELECT COUNT(*) FROM fkc.child"));
  EXPECT_EQ(rows[0][0].value_or(""), "2");
  BR_ASSERT_OK(serve->Stop());
  BR_ASSERT_OK(serve->Start());
  EXPECT_TRUE(StatusShows(*serve, "fkc", "last_error",
                          "has foreign key child_parent with ON DELETE CASCADE"));
}

// Guards: rows a ROLLBACK TO SAVEPOINT undid being applied. When the
// transaction also changed a non-transactional table after the savepoint,
// MariaDB keeps the undone rows in the binlog, followed by the ROLLBACK TO
// statement; the decoder ignored that statement and the target got rows
// the source never committed (here id 2, and v = 10 for id 1).
TEST_F(ApplyPipelineTest, RowsUndoneByRollbackToSavepointAreNotApplied) {
  CreateOnBoth({"CREATE DATABASE sp", "CREATE TABLE sp.i (id INT PRIMARY KEY, v INT) ENGINE=InnoDB",
                "CREATE TABLE sp.m (id INT PRIMARY KEY) ENGINE=MyISAM"});
  auto serve = StartServe({{"sp", "sp.*", "", {}}});
  ASSERT_NE(serve, nullptr);
  BR_ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqlConn> session, SqlConn::Open(*source_));
  BR_ASSERT_OK(session->Exec(
      "BEGIN; INSERT INTO sp.i VALUES (1, 1); SAVEPOINT s1; INSERT INTO sp.i VALUES (2, 2); "
      "UPDATE sp.i SET v = 10 WHERE id = 1; INSERT INTO sp.m VALUES (2); "
      "ROLLBACK TO SAVEPOINT s1; INSERT INTO sp.i VALUES (3, 3); COMMIT"));
  // The premise: the undone rows and the ROLLBACK TO are in the binlog.
  BR_ASSERT_OK_AND_ASSIGN(SqlRows status, source_->Query("SHOW MASTER STATUS"));
  BR_ASSERT_OK_AND_ASSIGN(SqlRows events, source_->Query(absl::StrCat(
      "SHOW BINLOG EVENTS IN '", status[0][0].value_or(""), "'")));
  bool logged = false;
  for (const auto& e : events) {
    logged = logged || absl::StartsWith(e.back().value_or(""), "ROLLBACK TO");
  }
  ASSERT_TRUE(logged) << "the server did not log the ROLLBACK TO: the test proves nothing";
  EXPECT_TRUE(Converges("sp", "sp", seconds(30), serve.get()));
  BR_ASSERT_OK_AND_ASSIGN(SqlRows rows,
                          target_->Query("SELECT GROUP_CONCAT(id, ':', v ORDER BY id) FROM sp.i"));
  EXPECT_EQ(rows[0][0].value_or(""), "1:1,3:3");
  // And a later transaction with a savepoint that was released, not used.
  BR_ASSERT_OK(session->Exec(
      "BEGIN; SAVEPOINT a; UPDATE sp.i SET v = 5 WHERE id = 3; INSERT INTO sp.m VALUES (5); "
      "RELEASE SAVEPOINT a; COMMIT"));
  EXPECT_TRUE(Converges("sp", "sp", seconds(30), serve.get()));
}

// Guards: on a source with lower_case_table_names=1 a DDL may name a
// subscribed table in another letter case than its TABLE_MAPs (always lower
// case there). Matched exactly, "ALTER TABLE LcT.Items ..." was no DDL of
// lct.items: the pipeline did not stop at the statement, for the operator to
// change the target, and met rows of the new shape unprepared.
TEST_F(ApplyPipelineTest, DdlNamingTheTableInAnotherCaseStopsThePipeline) {
  auto source = StartServeSource({"--binlog-format=ROW", "--binlog-row-image=FULL",
                                  "--lower-case-table-names=1"});
  ASSERT_TRUE(source.ok()) << source.status();
  ServerSandbox& src = **source;
  BR_ASSERT_OK_AND_ASSIGN(SqlRows lctn, src.Query("SELECT @@lower_case_table_names"));
  ASSERT_EQ(lctn[0][0].value_or(""), "1") << "the setting under test did not take effect";
  for (const char* sql : {"CREATE DATABASE lct", "CREATE TABLE lct.items (id INT PRIMARY KEY, v INT)"}) {
    BR_ASSERT_OK(src.Execute(sql));
    BR_ASSERT_OK(target_->Execute(sql));
  }
  auto serve = StartServe({{"lct", "lct.items", "", {}}}, &src);
  ASSERT_NE(serve, nullptr);
  BR_ASSERT_OK(src.Execute("INSERT INTO lct.items VALUES (1, 1)"));
  BR_ASSERT_OK(src.Execute("ALTER TABLE LcT.Items ADD COLUMN w INT DEFAULT 7"));
  BR_ASSERT_OK(src.Execute("INSERT INTO LCT.ITEMS VALUES (2, 2, 2)"));
  EXPECT_TRUE(StatusShows(*serve, "lct", "last_error", "DDL on subscribed table LcT.Items"));
  BR_ASSERT_OK_AND_ASSIGN(SqlRows rows, target_->Query("SELECT COUNT(*) FROM lct.items"));
  EXPECT_EQ(rows[0][0].value_or(""), "1");
  BR_ASSERT_OK(serve->Stop());
}

// Guards: a pipeline resumed from a checkpoint older than a DDL reading the
// rows stored before the statement with the definition the source has now.
// MariaDB's default binlog_row_metadata=NO_LOG logs no signedness: -5 logged
// before MODIFY v INT UNSIGNED would be read as 4294967291. Those rows must
// be read with the target's definition (the source's before the DDL), and
// the pipeline must then stop at the statement as it does live; before the
// fix it refused to start (source and target differ) until the operator
// changed the target, and then wrote 4294967291.
TEST_F(ApplyPipelineTest, ResumeFromBeforeADdlReadsTheEarlierRowsWithTheEarlierDefinition) {
  CreateOnBoth({"CREATE DATABASE ddl2", "CREATE TABLE ddl2.t (id INT PRIMARY KEY, v INT)"});
  auto serve = StartServe({{"ddl2", "ddl2.t", "", {}}});
  ASSERT_NE(serve, nullptr);
  BR_ASSERT_OK(source_->Execute("INSERT INTO ddl2.t VALUES (1, 1)"));
  ASSERT_TRUE(Converges("ddl2", "ddl2", seconds(30), serve.get()));
  // binrelay is down while the source changes rows, then the table.
  BR_ASSERT_OK(serve->Stop());
  BR_ASSERT_OK(source_->Execute("INSERT INTO ddl2.t VALUES (2, -5)"));
  BR_ASSERT_OK(source_->Execute("UPDATE ddl2.t SET v = -1 WHERE id = 1"));
  // Without strict mode the ALTER turns the negative values into 0.
  const std::string alter = "SET STATEMENT sql_mode = '' FOR ALTER TABLE ddl2.t MODIFY v INT UNSIGNED";
  BR_ASSERT_OK(source_->Execute(alter));
  BR_ASSERT_OK(source_->Execute("INSERT INTO ddl2.t VALUES (3, 4000000000)"));
  BR_ASSERT_OK(serve->Start());
  // The rows before the DDL arrive as the source held them then; the
  // pipeline stops at the statement.
  EXPECT_TRUE(StatusShows(*serve, "ddl2", "last_error", "DDL on subscribed table ddl2.t"))
      << serve->StderrTail(20);
  auto rows = target_->Query("SELECT GROUP_CONCAT(id, ':', v ORDER BY id) FROM ddl2.t");
  BR_ASSERT_OK(rows.status());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0][0].value_or("NULL"), "1:-1,2:-5");
  EXPECT_NE(serve->Stderr().find("rows before that statement are applied with the target "
                                 "table's definition"),
            std::string::npos);
  // The operator runs the same statement on the target and restarts.
  BR_ASSERT_OK(target_->Execute(alter));
  BR_ASSERT_OK(serve->Stop());
  BR_ASSERT_OK(serve->Start());
  EXPECT_TRUE(Converges("ddl2", "ddl2", seconds(60), serve.get()));
  rows = target_->Query("SELECT GROUP_CONCAT(id, ':', v ORDER BY id) FROM ddl2.t");
  BR_ASSERT_OK(rows.status());
  EXPECT_EQ((*rows)[0][0].value_or("NULL"), "1:0,2:0,3:4000000000");
}

// Guards: rows written to a subscribed table shortly before the source
// renamed it, while binrelay was down, being skipped at the restart (the
// source no longer lists the table, so nothing would decode its rows) and
// so missing from the target once the operator renames it there too.
TEST_F(ApplyPipelineTest, ResumeFromBeforeARenameStillAppliesTheRowsBeforeIt) {
  CreateOnBoth({"CREATE DATABASE ren1", "CREATE TABLE ren1.t (id INT PRIMARY KEY, v INT)"});
  auto serve = StartServe({{"ren", "ren1.*", "", {}}});
  ASSERT_NE(serve, nullptr);
  BR_ASSERT_OK(source_->Execute("INSERT INTO ren1.t VALUES (1, 1)"));
  ASSERT_TRUE(Converges("ren1", "ren1", seconds(30), serve.get()));
  BR_ASSERT_OK(serve->Stop());
  BR_ASSERT_OK(source_->Execute("INSERT INTO ren1.t VALUES (2, 2), (3, 3)"));
  BR_ASSERT_OK(source_->Execute("RENAME TABLE ren1.t TO ren1.t2"));
  BR_ASSERT_OK(source_->Execute("INSERT INTO ren1.t2 VALUES (4, 4)"));
  BR_ASSERT_OK(serve->Start());
  EXPECT_TRUE(StatusShows(*serve, "ren", "last_error", "DDL on subscribed table ren1."))
      << serve->StderrTail(20);
  auto rows = target_->Query("SELECT GROUP_CONCAT(id ORDER BY id) FROM ren1.t");
  BR_ASSERT_OK(rows.status());
  EXPECT_EQ((*rows)[0][0].value_or("NULL"), "1,2,3") << "the rows before the RENAME";
  BR_ASSERT_OK(target_->Execute("RENAME TABLE ren1.t TO ren1.t2"));
  BR_ASSERT_OK(serve->Stop());
  BR_ASSERT_OK(serve->Start());
  EXPECT_TRUE(Converges("ren1", "ren1", seconds(60), serve.get()));
}

// Guards: a crash between a drain and its checkpoint, or during a drain,
// losing or leaving behind rows; a target restart being fatal. binrelay is
// killed with SIGKILL at random moments while a workload runs, and the
// target restarts once; the target must still converge.
TEST_F(ApplyPipelineTest, KillNineDuringFlushesAndATargetRestartConverge) {
  CreateOnBoth({"CREATE DATABASE crash1",
                "CREATE TABLE crash1.t (id INT PRIMARY KEY, v INT, pad VARCHAR(200), "
                "UNIQUE KEY (v))",
                "CREATE TABLE crash1.log (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(50))"});
  auto serve = StartServe({{"crash", "crash1.*", "", {"batch_rows = 50", "concurrency = 4"}}});
  ASSERT_NE(serve, nullptr);
  std::atomic<bool> done{false};
  absl::Status workload_status;
  std::thread writer([&] {
    std::mt19937 rng(42);
    for (int i = 0; i < 600 && workload_status.ok(); ++i) {
      const int id = static_cast<int>(rng() % 200);
      std::string sql;
      switch (rng() % 4) {
        case 0:
        case 1:
          sql = absl::StrCat("REPLACE INTO crash1.t VALUES (", id, ", ", i, ", REPEAT('p', ",
                             rng() % 200, "))");
          break;
        case 2:
          sql = absl::StrCat("UPDATE crash1.t SET id = ", 200 + i, " WHERE id = ", id);
          break;
        default:
          sql = absl::StrCat("DELETE FROM crash1.t WHERE id = ", id);
      }
      workload_status = source_->Execute(sql);
      if (workload_status.ok()) {
        workload_status = source_->Execute(
            absl::StrCat("INSERT INTO crash1.log (note) VALUES ('step ", i, "')"));
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
    done = true;
  });
  std::mt19937 rng(7);
  for (int kill = 0; kill < 4 && !done; ++kill) {
    std::this_thread::sleep_for(milliseconds(300 + rng() % 700));
    serve->Kill();
    if (kill == 1) {
      // The target restarts while binrelay is down and comes back after it.
      target_->Stop();
      BR_ASSERT_OK(serve->Start());
      std::this_thread::sleep_for(milliseconds(500));
      BR_ASSERT_OK(target_->Restart());
      continue;
    }
    BR_ASSERT_OK(serve->Start());
  }
  writer.join();
  BR_ASSERT_OK(workload_status);
  EXPECT_TRUE(Converges("crash1", "crash1", seconds(120), serve.get()));
  auto p = PipelineStatus(*serve, "crash");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->Find("state")->text == "error", false) << p->Find("last_error")->text;
}

}  // namespace
}  // namespace binrelay::testing

namespace binrelay::testing {
namespace {

// Anonymous resident memory of `pid` in bytes (RssAnon: the heap, not the
// page cache of mapped binlog files), or 0.
uint64_t AnonymousRss(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, "RssAnon:")) {
      uint64_t kb = std::strtoull(line.c_str() + 8, nullptr, 10);
      return kb * 1024;
    }
  }
  return 0;
}

// Guards: lock waits on the target being fatal, and concurrency and batch
// size not adapting: a test session holds row locks on the target longer
// than lock_wait_timeout while eight source connections write, so the
// pipeline must retry (1205), halve its concurrency, and still converge.
TEST_F(ApplyPipelineTest, ContentionIsRetriedAndShrinksConcurrency) {
  CreateOnBoth({"CREATE DATABASE busy1",
                "CREATE TABLE busy1.t (id INT PRIMARY KEY, grp INT NOT NULL, seq INT NOT NULL, "
                "v INT, UNIQUE KEY grp_seq (grp, seq))"});
  BR_ASSERT_OK(source_->Execute(
      "INSERT INTO busy1.t SELECT seq, seq % 4, seq, 0 FROM busy1.seq_1_to_400"));
  BR_ASSERT_OK(target_->Execute(
      "INSERT INTO busy1.t SELECT seq, seq % 4, seq, 0 FROM busy1.seq_1_to_400"));
  auto serve = StartServe({{"busy", "busy1.t", "",
                            {"batch_rows = 20", "concurrency = 8", "lock_wait_timeout = 1"}}});
  ASSERT_NE(serve, nullptr);
  // Hold the locks of every row on the target until the pipeline has met them.
  auto locker = protocol::ClientConnection::Connect(
      target_->ClientOptions(kApplier, kApplierPassword));
  BR_ASSERT_OK(locker.status());
  BR_ASSERT_OK((*locker)->Query("START TRANSACTION").status());
  BR_ASSERT_OK((*locker)->Query("SELECT COUNT(*) FROM busy1.t FOR UPDATE").status());
  std::vector<std::thread> writers;
  std::vector<absl::Status> results(8);
  for (int w = 0; w < 8; ++w) {
    writers.emplace_back([w, &results] {
      // Each writer has its own connection (the sandbox's root one is not
      // thread-safe).
      auto conn = protocol::ClientConnection::Connect(
          source_->ClientOptions(kApplier, kApplierPassword));
      if (!conn.ok()) {
        results[w] = conn.status();
        return;
      }
      for (int i = 0; i < 50 && results[w].ok(); ++i) {
        const int id = 1 + (w * 50 + i) % 400;
        results[w] = (*conn)->Query(absl::StrCat(
            "UPDATE busy1.t SET v = v + 1, seq = seq + 1000 WHERE id = ", id)).status();
      }
    });
  }
  for (auto& t : writers) t.join();
  for (const auto& r : results) BR_ASSERT_OK(r);
  // The locks are held until the pipeline has met them (a lock wait timed
  // out and was retried), however long its ingest and first drain take.
  for (auto deadline = std::chrono::steady_clock::now() + seconds(90);
       std::chrono::steady_clock::now() < deadline;) {
    auto busy = PipelineStatus(*serve, "busy");
    const JsonValue* r = busy ? busy->Find("retries") : nullptr;
    if (r != nullptr && r->Find("1205") != nullptr) break;
    std::this_thread::sleep_for(milliseconds(200));
  }
  BR_ASSERT_OK((*locker)->Query("ROLLBACK").status());
  EXPECT_TRUE(Converges("busy1", "busy1", seconds(90), serve.get()));
  auto p = PipelineStatus(*serve, "busy");
  ASSERT_TRUE(p.has_value());
  const JsonValue* retries = p->Find("retries");
  ASSERT_NE(retries, nullptr);
  ASSERT_NE(retries->Find("1205"), nullptr) << "no lock wait timeout was retried";
  EXPECT_GT(std::stoull(retries->Find("1205")->text), 0u);
  std::string metrics = HttpGet(serve->http_port(), "/metrics");
  EXPECT_TRUE(absl::StrContains(metrics,
                                "binrelay_apply_retries_total{pipeline=\"busy\",code=\"1205\"}"))
      << metrics.substr(0, 3000);
  // The drain that met contention halved concurrency; it grows back by one
  // per three clean drains, so right after convergence it is below 8.
  EXPECT_TRUE(absl::StrContains(metrics, "binrelay_apply_concurrency{pipeline=\"busy\"}"));
  EXPECT_LT(std::stoull(p->Find("concurrency")->text), 8u) << "concurrency never shrank";
}

// Guards: a drain handed off in the middle of a transaction (the soft
// limit reached inside it) writing a checkpoint inside that transaction: a
// restart from there would skip the transaction's rows read before the cut
// and apply the rest. Every checkpoint the target receives must lie outside
// the big transaction; the target's general log shows each one.
TEST_F(ApplyPipelineTest, CheckpointsNeverFallInsideATransactionCutByTheSoftLimit) {
  CreateOnBoth({"CREATE DATABASE cut1", "CREATE TABLE cut1.t (id INT PRIMARY KEY, v TEXT)"});
  Pipeline p{"cut", "cut1.t", "", {"soft_limit_bytes = 1M", "batch_rows = 50"}};
  auto serve = StartServe({p});
  ASSERT_NE(serve, nullptr);
  BR_ASSERT_OK(target_->Execute("SET GLOBAL log_output = 'TABLE'"));
  BR_ASSERT_OK(target_->Execute("TRUNCATE mysql.general_log"));
  BR_ASSERT_OK(target_->Execute("SET GLOBAL general_log = 1"));
  BR_ASSERT_OK(source_->Execute("INSERT INTO cut1.t VALUES (0, 'before')"));
  BR_ASSERT_OK_AND_ASSIGN(std::string before, CurrentBinlogPosition(*source_));
  // About 8 MiB in one transaction: 8 times the soft limit (its minimum).
  BR_ASSERT_OK(source_->Execute(
      "INSERT INTO cut1.t SELECT seq, REPEAT('x', 4000) FROM cut1.seq_1_to_2000"));
  BR_ASSERT_OK_AND_ASSIGN(std::string after, CurrentBinlogPosition(*source_));
  BR_ASSERT_OK(source_->Execute("INSERT INTO cut1.t VALUES (5000, 'after')"));
  EXPECT_TRUE(Converges("cut1", "cut1", seconds(60), serve.get()));
  BR_ASSERT_OK(target_->Execute("SET GLOBAL general_log = 0"));
  BR_ASSERT_OK_AND_ASSIGN(auto conn, SqlConn::Open(*target_));
  BR_ASSERT_OK_AND_ASSIGN(
      auto rows, conn->QueryNamed("SELECT CONVERT(argument USING utf8mb4) AS a FROM mysql.general_log "
                             "WHERE argument LIKE '%apply_checkpoint%' AND argument LIKE "
                             "'REPLACE INTO%' AND argument LIKE '%''cut''%'"));
  const std::string file = before.substr(0, before.find(':'));
  const uint64_t start = std::stoull(before.substr(before.find(':') + 1));
  const uint64_t end = std::stoull(after.substr(after.find(':') + 1));
  ASSERT_EQ(after.substr(0, after.find(':')), file);
  size_t checked = 0;
  for (auto& row : rows) {
    if (!row["a"]) continue;
    // ... VALUES ('cut','mysql-bin.000001',12345,...
    const std::string& sql = *row["a"];
    const size_t at = sql.find(absl::StrCat("'", file, "',"));
    if (at == std::string::npos) continue;
    const uint64_t pos = std::stoull(sql.substr(at + file.size() + 3));
    EXPECT_TRUE(pos <= start || pos >= end)
        << "checkpoint " << file << ":" << pos << " inside the transaction " << start << ".."
        << end;
    ++checked;
  }
  EXPECT_GT(checked, 2u) << "the cut transaction took several drains";
  BR_EXPECT_OK(target_->Execute("TRUNCATE mysql.general_log"));
}

// Guards: quoted literals that lose or change bytes: quotes, backslashes
// and NULs in text and binary columns, sjis and gbk characters whose second
// byte is 0x5C (a backslash to a lexer reading the wrong charset), JSON
// with escapes, and binary primary keys holding such bytes, which DELETE
// and REPLACE must match exactly.
void ApplyPipelineTest::QuotesAndTrailBytes(const std::string& db, const std::string& bulk) {
  CreateOnBoth({"CREATE DATABASE " + db,
                "CREATE TABLE " + db + ".t (id INT PRIMARY KEY, l VARCHAR(50) CHARACTER SET latin1, "
                "u VARCHAR(50) CHARACTER SET utf8mb4, s VARCHAR(50) CHARACTER SET sjis, "
                "g VARCHAR(50) CHARACTER SET gbk, b VARBINARY(50), bl BLOB, j JSON)",
                "CREATE TABLE " + db + ".k (k VARBINARY(16) PRIMARY KEY, v INT)"});
  auto serve = StartServe({{"quot_" + bulk, db + ".*", "", {"bulk_replace = " + bulk}}});
  ASSERT_NE(serve, nullptr);
  for (const std::string& sql : std::vector<std::string>{
           "INSERT INTO " + db + ".t VALUES (1, X'275C00E9', X'697427732061205C206261636B205C2720F09F8E89', X'955C955C', "
           "X'815C815C', X'00275C22FF', X'5C5C27005C', "
           "JSON_OBJECT('a', CONCAT('x', CHAR(34), 'y', CHAR(92), 'z', CHAR(39))))",
           "INSERT INTO " + db + ".t VALUES (2, X'5C', X'27', X'5C', X'5C', X'5C', X'27', "
           "JSON_ARRAY(CHAR(92)))",
           "UPDATE " + db + ".t SET l = X'5C27', s = X'835C', g = X'8A5C' WHERE id = 2",
           "INSERT INTO " + db + ".k VALUES (X'27', 1), (X'5C', 2), (X'00', 3), (X'5C27005C', 4)",
           "UPDATE " + db + ".k SET v = v + 10 WHERE k = X'5C'",
           "DELETE FROM " + db + ".k WHERE k = X'27'",
           "UPDATE " + db + ".k SET k = X'5C5C' WHERE k = X'5C27005C'"}) {
    BR_ASSERT_OK(source_->Execute(sql));
  }
  EXPECT_TRUE(Converges(db, db, seconds(30), serve.get()));
}

TEST_F(ApplyPipelineTest, QuotesBackslashesAndTrailBytesArriveExactlyThroughBulkCommands) {
  QuotesAndTrailBytes("quot1", "on");
}

// The same through quoted literals in REPLACE text (MySQL targets).
TEST_F(ApplyPipelineTest, QuotesBackslashesAndTrailBytesArriveExactlyThroughReplaceText) {
  QuotesAndTrailBytes("quot2", "off");
}

// Guards: rows of an XA transaction applied at its XA PREPARE (a later XA
// ROLLBACK on the source leaves them on the target), rows of one committed
// later lost, and a checkpoint past an undecided transaction (after a
// kill -9 its rows would never be read again).
TEST_F(ApplyPipelineTest, XaTransactionsApplyOnlyWhatTheSourceCommits) {
  CreateOnBoth({"CREATE DATABASE xa1", "CREATE TABLE xa1.t (id INT PRIMARY KEY, v VARCHAR(20))"});
  auto serve = StartServe({{"xa", "xa1.t", "", {}}});
  ASSERT_NE(serve, nullptr);
  // Each prepared on its own connection, which then goes away: a prepared
  // XA transaction outlives its session and is decided from another.
  for (const std::vector<std::string>& group :
       {std::vector<std::string>{"XA START 'gone'", "INSERT INTO xa1.t VALUES (1, 'rolled back')",
                                 "XA END 'gone'", "XA PREPARE 'gone'"},
        std::vector<std::string>{"XA START 'kept'", "INSERT INTO xa1.t VALUES (2, 'committed')",
                                 "XA END 'kept'", "XA PREPARE 'kept'"}}) {
    BR_ASSERT_OK_AND_ASSIGN(auto session, SqlConn::Open(*source_));
    for (const std::string& sql : group) BR_ASSERT_OK(session->Exec(sql));
  }
  // Later transactions are applied (and checkpointed) while both wait.
  BR_ASSERT_OK(source_->Execute("INSERT INTO xa1.t VALUES (10, 'plain')"));
  BR_ASSERT_OK_AND_ASSIGN(auto target, SqlConn::Open(*target_));
  std::string seen;
  for (int i = 0; i < 300 && seen != "10"; ++i) {
    std::this_thread::sleep_for(milliseconds(100));
    auto rows = target->QueryNamed("SELECT GROUP_CONCAT(id ORDER BY id) AS ids FROM xa1.t");
    seen = rows.ok() && !rows->empty() && (*rows)[0]["ids"] ? *(*rows)[0]["ids"] : "";
  }
  EXPECT_EQ(seen, "10") << "only the committed transaction is on the target";
  EXPECT_TRUE(StatusShows(*serve, "xa", "xa_held", "2")) << "both undecided ones are held";
  // binrelay dies while 'kept' is undecided; its rows must be read again.
  serve->Kill();
  BR_ASSERT_OK(serve->Start());
  BR_ASSERT_OK_AND_ASSIGN(auto xa, SqlConn::Open(*source_));
  BR_ASSERT_OK(xa->Exec("XA ROLLBACK 'gone'"));
  BR_ASSERT_OK(xa->Exec("XA COMMIT 'kept'"));
  for (const char* sql : {"XA START 'one'", "INSERT INTO xa1.t VALUES (3, 'one phase')",
                          "XA END 'one'", "XA COMMIT 'one' ONE PHASE"}) {
    BR_ASSERT_OK(xa->Exec(sql));
  }
  EXPECT_TRUE(Converges("xa1", "xa1", seconds(30), serve.get()));
}

// Guards: an XA transaction prepared before a pipeline's start and committed
// after it. The copy the pipeline starts from cannot hold its rows (they were
// not committed), and the pipeline never read its XA PREPARE: without reading
// the group back from the store at the XA COMMIT, its rows never reach the
// target. One rolled back must leave nothing behind; a third, committed
// later, is served by the same read of the store.
TEST_F(ApplyPipelineTest, XaPreparedBeforeThePipelinesStartIsReadBackAtItsCommit) {
  CreateOnBoth({"CREATE DATABASE xa2", "CREATE TABLE xa2.t (id INT PRIMARY KEY, v VARCHAR(20))"});
  BR_ASSERT_OK(source_->Execute("INSERT INTO xa2.t VALUES (1, 'copied')"));
  BR_ASSERT_OK(target_->Execute("INSERT INTO xa2.t VALUES (1, 'copied')"));
  for (const std::vector<std::string>& group :
       {std::vector<std::string>{"XA START 'early'", "INSERT INTO xa2.t VALUES (2, 'early')",
                                 "UPDATE xa2.t SET v = 'changed early' WHERE id = 1",
                                 "XA END 'early'", "XA PREPARE 'early'"},
        std::vector<std::string>{"XA START 'undone'", "INSERT INTO xa2.t VALUES (3, 'undone')",
                                 "XA END 'undone'", "XA PREPARE 'undone'"},
        std::vector<std::string>{"XA START 'late'", "INSERT INTO xa2.t VALUES (4, 'late')",
                                 "XA END 'late'", "XA PREPARE 'late'"}}) {
    BR_ASSERT_OK_AND_ASSIGN(auto session, SqlConn::Open(*source_));
    for (const std::string& sql : group) BR_ASSERT_OK(session->Exec(sql));
  }
  // The pipeline starts at the source's current end: after both PREPAREs.
  auto serve = StartServe({{"xaback", "xa2.t", "", {}}});
  ASSERT_NE(serve, nullptr);
  BR_ASSERT_OK(source_->Execute("INSERT INTO xa2.t VALUES (10, 'plain')"));
  BR_ASSERT_OK_AND_ASSIGN(auto xa, SqlConn::Open(*source_));
  BR_ASSERT_OK(xa->Exec("XA COMMIT 'early'"));
  BR_ASSERT_OK(xa->Exec("XA ROLLBACK 'undone'"));
  BR_ASSERT_OK(source_->Execute("INSERT INTO xa2.t VALUES (11, 'plain')"));
  BR_ASSERT_OK(xa->Exec("XA COMMIT 'late'"));
  EXPECT_TRUE(Converges("xa2", "xa2", seconds(30), serve.get())) << serve->StderrTail(20);
  // One read of the store serves every later commit.
  const std::string log = serve->Stderr();
  size_t scans = 0;
  for (size_t at = 0; (at = log.find("reading the store from", at)) != std::string::npos; ++at) {
    ++scans;
  }
  EXPECT_EQ(scans, 1u) << serve->StderrTail(20);
  BR_ASSERT_OK_AND_ASSIGN(auto target, SqlConn::Open(*target_));
  BR_ASSERT_OK_AND_ASSIGN(auto rows, target->QueryNamed(
      "SELECT GROUP_CONCAT(id, ':', v ORDER BY id) AS r FROM xa2.t"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["r"].value_or("NULL"), "1:changed early,2:early,4:late,10:plain,11:plain");
}

// Guards: buffers growing without bound while the target is down (1 MiB
// rows, an 8 MiB soft limit), and the pipeline not completing once the
// target is back. Anonymous memory (not the page cache of the store's
// mapped files) must stay within the limit plus a fixed overhead: the
// process baseline, one 1 MiB event on ingest, and a statement of about
// twice a row per flusher connection (hex).
TEST_F(ApplyPipelineTest, BoundedMemoryWhileTheTargetIsDown) {
  auto big_target = ServerSandbox::Start([] {
    ServerSandboxOptions o;
    o.server_id = 3;
    o.extra_args = {"--max-allowed-packet=64M"};
    return o;
  }());
  BR_ASSERT_OK(big_target.status());
  BR_ASSERT_OK((*big_target)->CreateUser(kApplier, kApplierPassword));
  CreateOnBoth({"CREATE DATABASE mem1", "CREATE TABLE mem1.t (id INT PRIMARY KEY, body LONGTEXT)"},
               big_target->get());
  Pipeline p{"mem", "mem1.t", "", {"soft_limit_bytes = 8M", "concurrency = 2"}};
  p.target = big_target->get();
  auto serve = StartServe({p});
  ASSERT_NE(serve, nullptr);
  const uint64_t baseline = AnonymousRss(serve->pid());
  (*big_target)->Stop();
  for (int i = 0; i < 48; ++i) {
    BR_ASSERT_OK(source_->Execute(absl::StrCat(
        "INSERT INTO mem1.t VALUES (", i, ", REPEAT(CHAR(97 + ", i % 26, "), 1048576))")));
  }
  uint64_t peak = 0;
  // Watch while the backlog is read against a stopped target.
  for (int i = 0; i < 30; ++i) {
    peak = std::max(peak, AnonymousRss(serve->pid()));
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_TRUE(StatusShows(*serve, "mem", "state", "retrying"));
  BR_ASSERT_OK((*big_target)->Restart());
  const auto deadline = std::chrono::steady_clock::now() + seconds(120);
  bool converged = false;
  while (std::chrono::steady_clock::now() < deadline && !converged) {
    peak = std::max(peak, AnonymousRss(serve->pid()));
    auto want = ChecksumAllTables(*source_, "mem1");
    auto got = ChecksumAllTables(**big_target, "mem1");
    converged = want.ok() && got.ok() && *want == *got;
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_TRUE(converged) << serve->StderrTail(20);
  auto status = PipelineStatus(*serve, "mem");
  ASSERT_TRUE(status.has_value());
  EXPECT_GT(std::stoull(status->Find("parked")->text), 0u) << "the soft limit never held reading";
  std::cerr << "anonymous memory: baseline " << baseline / (1 << 20) << " MiB, peak "
            << peak / (1 << 20) << " MiB\n";
#ifndef __SANITIZE_ADDRESS__
  constexpr uint64_t kOverhead = 32ull << 20;
  EXPECT_LT(peak, baseline + (8ull << 20) + kOverhead)
      << "peak anonymous memory " << peak / (1 << 20) << " MiB, baseline "
      << baseline / (1 << 20) << " MiB";
#else
  // Under ASan, freed memory waits in its quarantine (256 MiB by default)
  // and shadow memory is resident too: RSS says nothing about the live
  // set. The release build checks the bound; here the soft limit is still
  // shown to hold reading (parked > 0 above) and the pipeline to complete.
#endif
}

// Guards: a lagging pipeline losing what it needs when the source purges
// its binlog (it must read binrelay's store), and binrelay's own retention
// purging files a lagging pipeline's checkpoint needs across a restart.
TEST_F(ApplyPipelineTest, FarBehindPipelineSurvivesSourcePurgeAndRetention) {
  auto slow_target = ServerSandbox::Start([] {
    ServerSandboxOptions o;
    o.server_id = 4;
    return o;
  }());
  BR_ASSERT_OK(slow_target.status());
  BR_ASSERT_OK((*slow_target)->CreateUser(kApplier, kApplierPassword));
  CreateOnBoth({"CREATE DATABASE lag1", "CREATE TABLE lag1.t (id INT PRIMARY KEY, v VARCHAR(100))"},
               slow_target->get());
  Pipeline p{"lag", "lag1.t", "", {}};
  p.target = slow_target->get();
  auto start = CurrentBinlogPosition(*source_);
  BR_ASSERT_OK(start.status());
  auto serve = StartServe({p});
  ASSERT_NE(serve, nullptr);
  (*slow_target)->Stop();
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 25; ++i) {
      BR_ASSERT_OK(source_->Execute(absl::StrCat("REPLACE INTO lag1.t VALUES (", round * 25 + i,
                                                 ", REPEAT('x', 90))")));
    }
    BR_ASSERT_OK(source_->Execute("FLUSH BINARY LOGS"));
  }
  BR_ASSERT_OK(WaitStoreReached(*serve, *source_, seconds(30)).status());
  // The source purges everything the pipeline has not applied.
  auto files = SourceBinlogFiles(*source_);
  BR_ASSERT_OK(files.status());
  BR_ASSERT_OK(source_->Execute(absl::StrCat("PURGE BINARY LOGS TO '", files->back(), "'")));
  // binrelay restarts with a retention that wants every closed file gone.
  BR_ASSERT_OK(serve->Stop());
  const std::string pipeline_file = start->substr(0, start->find(':'));
  {
    std::string cnf = ReadWholeFile(serve->config_path());
    size_t at = cnf.find("[store]\n");
    ASSERT_NE(at, std::string::npos);
    cnf.insert(at + 8, "retention_bytes = 1\nretention_hard_cap_bytes = 0\n");
    std::ofstream(serve->config_path(), std::ios::trunc) << cnf;
  }
  BR_ASSERT_OK(serve->Start());
  BR_ASSERT_OK(source_->Execute("FLUSH BINARY LOGS"));  // a rotation runs retention
  std::this_thread::sleep_for(seconds(2));
  EXPECT_TRUE(std::filesystem::exists(serve->store_dir() + "/" + pipeline_file))
      << "retention purged " << pipeline_file << ", which the lagging pipeline needs\n"
      << serve->StderrTail(20);
  // The pipeline is listed among the store's consumers (as replicas are),
  // at the position its claim holds.
  {
    std::string body = HttpGet(serve->http_port(), "/status");
    auto json = ParseJson(body.substr(std::min(body.size(), body.find("\r\n\r\n") + 4)));
    BR_ASSERT_OK(json.status()) << body;
    const JsonValue* consumers = json->Find("consumers");
    ASSERT_NE(consumers, nullptr) << body;
    bool listed = false;
    for (const JsonValue& c : consumers->array) {
      const JsonValue* name = c.Find("name");
      const JsonValue* file = c.Find("file");
      if (name && name->text == "apply pipeline lag") {
        listed = true;
        EXPECT_EQ(file ? file->text : "", pipeline_file) << body;
      }
    }
    EXPECT_TRUE(listed) << body;
  }
  BR_ASSERT_OK((*slow_target)->Restart());
  EXPECT_TRUE(Converges("lag1", "lag1", seconds(90), serve.get(), slow_target->get()));
}

// Guards: a pipeline catching up on distinct rows leaving its target idle
// between drains. It used to hand the buffer over only once flush_interval
// had passed or at the store's end, so with a long interval the whole
// backlog after the first transaction went in one drain at the end.
TEST_F(ApplyPipelineTest, CatchUpOnDistinctRowsDrainsAsSoonAsTheTargetIsFree) {
  CreateOnBoth({"CREATE DATABASE early", "CREATE TABLE early.t (id INT PRIMARY KEY, v INT)"});
  auto serve = StartServe({});
  ASSERT_NE(serve, nullptr);
  BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(*source_));
  // The first transaction is one batch (batch_rows below), so the first drain
  // is a single statement; the reader then has 200k rows still to read. Only
  // a drain that outlasts all of that reading (a stall of the target far
  // beyond one statement) leaves nothing for a drain in between: under two
  // CPU burners and an fsync writer, 500 rows first and 100k after failed
  // 1 run in 20.
  constexpr int kFirstRows = 100, kTransactions = 400, kRows = 500;
  BR_ASSERT_OK(source_->Execute(
      absl::StrCat("INSERT INTO early.t SELECT seq, seq FROM early.seq_1_to_", kFirstRows)));
  for (int i = 0; i < kTransactions; ++i) {
    BR_ASSERT_OK(source_->Execute(absl::StrCat("INSERT INTO early.t SELECT seq, seq FROM early.seq_",
                                               kFirstRows + i * kRows + 1, "_to_",
                                               kFirstRows + (i + 1) * kRows)));
  }
  // All of it is stored before the pipeline exists, so the pipeline never
  // meets the store's end (where it always hands over) until it is done.
  BR_ASSERT_OK(WaitStoreReached(*serve, *source_, seconds(60)).status());
  BR_ASSERT_OK(serve->Stop());
  std::ofstream(serve->config_path(), std::ios::app)
      << "[apply.early]\ntarget_host = 127.0.0.1\ntarget_port = " << target_->Port()
      << "\ntarget_user = " << kApplier << "\ntarget_password = " << kApplierPassword
      << "\ntables = early.t\nstart = " << start
      << "\nflush_interval = 1h\nbatch_rows = 100\nconcurrency = 1\n";
  BR_ASSERT_OK(serve->Start());
  EXPECT_TRUE(Converges("early", "early", seconds(120), serve.get()));
  auto p = PipelineStatus(*serve, "early");
  ASSERT_TRUE(p.has_value());
  // Before: exactly 2 (the first transaction, then everything else at the
  // store's end). Now each drain takes what was read during the last one.
  EXPECT_GE(std::stoull(p->Find("drains")->text), 3u) << serve->StderrTail(20);
  EXPECT_EQ(p->Find("rows_written")->text, std::to_string(kFirstRows + kTransactions * kRows));
}

}  // namespace
}  // namespace binrelay::testing
