// binrelay move and apply pipelines between releases and across flavours,
// live: a source of one release taking writes, binrelay serve storing its
// binlog, a target of another release. What differs by flavour is all on
// binrelay's side of the wire: MySQL has no SET STATEMENT (the move's
// session settings, apply/move_session.h) and no binlog position for a
// snapshot (the checksum's brief table lock, apply/table_move.cc), the two
// spell the same column types differently (apply/table_shape.h), and
// MySQL's JSON is binary in its binlog where MariaDB's is text.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <atomic>
#include <chrono>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "tests/harness/binrelay_process.h"
#include "tests/harness/every_type_table.h"
#include "tests/harness/json_lite.h"
#include "tests/harness/serve_fixture.h"
#include "tests/harness/server_flavour.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/sql_conn.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;


struct FlavourPair {
  std::string source, target;
};

void PrintTo(const FlavourPair& p, std::ostream* os) { *os << p.source << " to " << p.target; }

std::string PairName(const ::testing::TestParamInfo<FlavourPair>& info) {
  auto name = [](std::string f) { return absl::StrReplaceAll(f, {{"-", "_"}, {".", "_"}}); };
  return absl::StrCat(name(info.param.source), "_to_", name(info.param.target));
}


// The move's tables: a UNIQUE key, every family of types the copier and the
// pipeline write differently (DECIMAL, fractional TIMESTAMP and DATETIME,
// DOUBLE, BLOB, YEAR, which MariaDB spells year(4), JSON: binary in MySQL's
// binlog, a checked LONGTEXT on MariaDB), and a composite key
// with a case-insensitive VARCHAR. Collations both flavours have.
constexpr char kTableT[] =
    "CREATE TABLE mf.t (id INT NOT NULL PRIMARY KEY, email VARCHAR(40) NOT NULL, "
    "v VARCHAR(64), d DECIMAL(12,3), ts TIMESTAMP(3) NULL, dt DATETIME(6), f DOUBLE, b BLOB, "
    "y YEAR, doc JSON, UNIQUE KEY (email)) DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_general_ci";
constexpr char kTableK[] =
    "CREATE TABLE mf.k (a VARCHAR(20) NOT NULL, n INT NOT NULL, p TEXT, PRIMARY KEY (a, n)) "
    "DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_general_ci";

std::string RowOfT(int id, uint32_t r) {
  return absl::StrCat("(", id, ", 'e", id, "@example.com', 'v", r % 9973, "', ", r % 100000,
                      ".", r % 1000, ", '2026-0", 1 + r % 9, "-1", r % 10, " 1", r % 10, ":0",
                      r % 10, ":00.", r % 1000, "', '1999-12-31 23:59:", 10 + r % 50, ".",
                      r % 1000000, "', ", r % 1000, ".25, UNHEX('", absl::Hex(r), "00FF'), ",
                      1990 + r % 100, ", '{\"r\": ", r % 1000, ", \"tags\": [\"x\", ", r % 7,
                      "], \"e\": \"caf\u00e9\"}')");
}

// Random writes on mf.t and mf.k until `stop`: inserts, updates (a primary
// key change among them), deletes. Errors after the cutover (the tables
// are renamed away) are expected.
void WriteRandomly(ServerSandbox* source, std::atomic<bool>* stop, std::atomic<uint64_t>* done) {
  std::mt19937 rng(11);
  absl::StatusOr<std::unique_ptr<SqlConn>> conn = SqlConn::Open(*source);
  if (!conn.ok()) return;
  while (!*stop) {
    const int id = static_cast<int>(rng() % 4000) + 1;
    std::string sql;
    switch (rng() % 6) {
      case 0:
        sql = absl::StrCat("REPLACE INTO mf.t VALUES ", RowOfT(id, rng()));
        break;
      case 1:
        sql = absl::StrCat("UPDATE mf.t SET v = 'u", rng() % 1000, "', d = d + 1.5, ts = "
                           "'2030-01-01 00:00:00.5', f = f * 2 WHERE id = ", id);
        break;
      case 2:
        sql = absl::StrCat("DELETE FROM mf.t WHERE id = ", id);
        break;
      case 3:
        sql = absl::StrCat("UPDATE mf.t SET id = ", 10000 + id, " WHERE id = ", id);
        break;
      case 4:
        sql = absl::StrCat("REPLACE INTO mf.k VALUES ('", rng() % 2 ? "K" : "k", id % 300,
                           "', ", id % 7, ", REPEAT('p', ", rng() % 500, "))");
        break;
      default:
        sql = absl::StrCat("DELETE FROM mf.k WHERE a = 'k", id % 300, "' AND n = ", id % 7);
        break;
    }
    if ((*conn)->Exec(sql).ok()) ++*done;
    std::this_thread::sleep_for(milliseconds(2));
  }
}

// `text` as MySQL's JSON prints it (`mysql` parses it): one text per JSON
// value, where MariaDB keeps whatever text it was given (spacing, escapes,
// number forms).
std::string MySqlJsonText(ServerSandbox& mysql, std::string_view text) {
  if (text == "NULL") return std::string(text);
  auto rows = mysql.Query(absl::StrCat("SELECT CAST(CONVERT(UNHEX('", absl::BytesToHexString(
                                           absl::string_view(text.data(), text.size())),
                                       "') USING utf8mb4) AS JSON)"));
  if (!rows.ok() || rows->empty() || !(*rows)[0][0]) {
    return "not JSON to MySQL: " + std::string(text);
  }
  return *(*rows)[0][0];
}

// Every row of `table`, its values as text, in key order: compared across
// flavours, where CHECKSUM TABLE differs by row format. With `mysql`, the
// first column that is a JSON document (`columns` casts it to text; it
// holds no '|') is as MySQL prints it.
std::string Rows(ServerSandbox& server, const std::string& table, const std::string& columns,
                 const std::string& order, ServerSandbox* mysql = nullptr,
                 size_t json_field = 0) {
  (void)server.Execute("SET time_zone = '+00:00'");
  auto rows = server.Query(absl::StrCat("SELECT ", columns, " FROM ", table, " ORDER BY ", order));
  if (!rows.ok()) return absl::StrCat("unreadable: ", rows.status().message());
  std::string out;
  for (const auto& r : *rows) {
    for (size_t i = 0; i < r.size(); ++i) {
      std::string v = r[i].value_or("NULL");
      if (mysql != nullptr && i == json_field) v = MySqlJsonText(*mysql, v);
      absl::StrAppend(&out, v, "|");
    }
    out.push_back('\n');
  }
  return out;
}

// The MySQL server of a pair, or nullptr.
ServerSandbox* MySqlOf(ServerSandbox& a, ServerSandbox& b) {
  return a.IsMysql() ? &a : b.IsMysql() ? &b : nullptr;
}

// Polls /status until the move's phase contains `want` or is "error".
std::string WaitForPhase(ServeProcess& serve, const std::string& want, seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string phase, error;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto json = StatusJson(serve.http_port()); json.ok()) {
      if (const JsonValue* list = json->Find("moves"); list && !list->array.empty()) {
        const JsonValue& m = list->array[0];
        phase = m.Find("phase") ? m.Find("phase")->text : "";
        error = m.Find("error") ? m.Find("error")->text : "";
        if (absl::StrContains(phase, want) || phase == "error") break;
      }
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  return error.empty() ? phase : absl::StrCat(phase, ": ", error);
}

// A source of one flavour with binrelay's account allowed what a move
// does there, and a target of another with the mover's account.
struct MoveServers {
  std::unique_ptr<ServerSandbox> source, target;
};

absl::StatusOr<MoveServers> StartMoveServers(const FlavourPair& pair) {
  MoveServers s;
  BR_ASSIGN_OR_RETURN(s.source, StartServeSource({"--binlog-format=ROW", "--binlog-row-image=FULL"},
                                                 pair.source));
  // The move copies, checksums (on MySQL under a brief LOCK TABLES), waits
  // for XA transactions prepared before it (XA RECOVER: MySQL's
  // XA_RECOVER_ADMIN) and renames with binrelay's [source] account.
  BR_RETURN_IF_ERROR(s.source->Execute(absl::StrCat(
      "GRANT SELECT, LOCK TABLES, ALTER, DROP, CREATE, INSERT ON *.* TO '", kRelayUser, "'@'%'")));
  if (s.source->IsMysql()) {
    BR_RETURN_IF_ERROR(s.source->Execute(
        absl::StrCat("GRANT XA_RECOVER_ADMIN ON *.* TO '", kRelayUser, "'@'%'")));
  }
  ServerSandboxOptions to;
  to.flavour = pair.target;
  to.server_id = 2;
  BR_ASSIGN_OR_RETURN(s.target, ServerSandbox::Start(to));
  BR_RETURN_IF_ERROR(s.target->CreateUser(kMover, kMoverPassword, "ALL PRIVILEGES"));
  BR_RETURN_IF_ERROR(s.source->Execute("CREATE DATABASE mf"));
  return s;
}

// binrelay serve running the move "mf" of mf.* with small chunks (many
// ranges copied and checksummed while writes land).
absl::StatusOr<std::unique_ptr<ServeProcess>> StartMove(const MoveServers& s) {
  ServeOptions o;
  o.start = "current";
  o.extra_config = absl::StrCat("[move.mf]\ntarget_host = 127.0.0.1\ntarget_port = ",
                                s.target->Port(), "\ntarget_user = ", kMover,
                                "\ntarget_password = ", kMoverPassword,
                                "\ntables = mf.*\nchunk_time = 20ms\ncopy_threads = 2\n"
                                "flush_interval = 100ms\n");
  BR_ASSIGN_OR_RETURN(auto serve, ServeProcess::Create(*s.source, o));
  BR_RETURN_IF_ERROR(serve->Start());
  return serve;
}

// binrelay serve running the apply pipeline "p" of mf.* from `start` on
// the source into `target`.
absl::StatusOr<std::unique_ptr<ServeProcess>> StartPipeline(ServerSandbox& source,
                                                            ServerSandbox& target,
                                                            const std::string& start) {
  ServeOptions o;
  o.extra_config = absl::StrCat("[apply.p]\ntarget_host = 127.0.0.1\ntarget_port = ",
                                target.Port(), "\ntarget_user = ", kMover,
                                "\ntarget_password = ", kMoverPassword,
                                "\ntables = mf.*\nstart = ", start, "\nflush_interval = 100ms\n");
  BR_ASSIGN_OR_RETURN(auto serve, ServeProcess::Create(source, o));
  BR_RETURN_IF_ERROR(serve->Start());
  return serve;
}

class MoveFlavoursTest : public ::testing::TestWithParam<FlavourPair> {};

// Guards the move on every pair of releases users move between: a
// statement only MariaDB parses (SET STATEMENT), a snapshot position only
// MariaDB reports, a shape check refusing year(4) against year or utf8
// against utf8mb3, or a value written differently by the copier or the
// pipeline on the other flavour each leave the move failed or the
// target's rows different from the source's at the cutover.
TEST_P(MoveFlavoursTest, MoveUnderWritesCutsOverWithTheSourcesRows) {
  const FlavourPair& pair = GetParam();
  BINRELAY_REQUIRE_FLAVOUR(pair.source);
  BINRELAY_REQUIRE_FLAVOUR(pair.target);
  BR_ASSERT_OK_AND_ASSIGN(MoveServers servers, StartMoveServers(pair));
  ServerSandbox* source = servers.source.get();
  ServerSandbox* target = servers.target.get();
  BR_ASSERT_OK(source->Execute(kTableT));
  BR_ASSERT_OK(source->Execute(kTableK));
  std::mt19937 rng(5);
  for (int from = 1; from <= 3000; from += 500) {
    std::vector<std::string> values;
    for (int id = from; id < from + 500; ++id) values.push_back(RowOfT(id, rng()));
    BR_ASSERT_OK(source->Execute("INSERT INTO mf.t VALUES " + absl::StrJoin(values, ",")));
  }
  std::vector<std::string> keyed;
  for (int i = 0; i < 1000; ++i) {
    keyed.push_back(absl::StrCat("('k", i % 300, "', ", i / 300, ", REPEAT('x', ", i % 200, "))"));
  }
  BR_ASSERT_OK(source->Execute("INSERT INTO mf.k VALUES " + absl::StrJoin(keyed, ",")));

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> writes{0};
  std::thread writer(WriteRandomly, source, &stop, &writes);
  struct Join {
    std::atomic<bool>* stop;
    std::thread* t;
    ~Join() {
      *stop = true;
      if (t->joinable()) t->join();
    }
  } join{&stop, &writer};

  BR_ASSERT_OK_AND_ASSIGN(auto serve, StartMove(servers));
  const std::string phase = WaitForPhase(*serve, "done", seconds(180));
  stop = true;
  if (writer.joinable()) writer.join();
  ASSERT_EQ(phase, "done") << serve->StderrTail(40);
  EXPECT_GT(writes.load(), 50u) << "the source took too few writes during the move";

  const std::string t_columns = "id, CAST(doc AS CHAR), email, v, d, ts, dt, f, HEX(b), y";
  ServerSandbox* mysql = MySqlOf(*source, *target);
  const std::string t_rows = Rows(*target, "mf.t", t_columns, "id", mysql, 1);
  EXPECT_EQ(t_rows, Rows(*source, "mf.t_old", t_columns, "id", mysql, 1));
  EXPECT_GT(t_rows.size(), 1000u) << t_rows.substr(0, 200);
  EXPECT_EQ(Rows(*target, "mf.k", "a, n, p", "a, n"), Rows(*source, "mf.k_old", "a, n, p", "a, n"));
  if (source->IsMysql()) {
    // The checksum's snapshot position, taken the MySQL way, logged with
    // how long the table stayed locked.
    const std::string log = serve->Stderr();
    EXPECT_TRUE(absl::StrContains(log, "the table was locked for")) << serve->StderrTail(40);
    for (absl::string_view line : absl::StrSplit(log, '\n')) {
      if (absl::StrContains(line, "the table was locked for")) std::cerr << line << "\n";
    }
  }
  std::cerr << "move " << pair.source << " -> " << pair.target << ": " << writes.load()
            << " writes during the move\n";
  BR_EXPECT_OK(serve->Stop());
}

// Guards the MySQL snapshot's lock: LOCK TABLES ... READ waits for every
// transaction writing the table, and writers queue behind a waiting lock,
// so the wait is bounded (1 s) and retried. A wait without a bound would
// stall the source's writers for as long as the open transaction lasts; one
// that gave up for good would fail the move over an ordinary long
// transaction; a snapshot taken without the lock would miss its row.
TEST(MoveOnMySqlTest, ChecksumSnapshotLockWaitsOutAnOpenTransactionOnTheTable) {
  BINRELAY_REQUIRE_FLAVOUR("mysql-9.7");
  BR_ASSERT_OK_AND_ASSIGN(MoveServers servers, StartMoveServers({"mysql-9.7", "mariadb-10.11"}));
  ServerSandbox& source = *servers.source;
  BR_ASSERT_OK(source.Execute(kTableT));
  std::mt19937 rng(3);
  std::vector<std::string> values;
  for (int id = 1; id <= 200; ++id) values.push_back(RowOfT(id, rng()));
  BR_ASSERT_OK(source.Execute("INSERT INTO mf.t VALUES " + absl::StrJoin(values, ",")));
  // A transaction that wrote the table and stays open: its metadata lock
  // holds off LOCK TABLES ... READ until it commits.
  BR_ASSERT_OK_AND_ASSIGN(auto open, SqlConn::Open(source));
  BR_ASSERT_OK(open->Exec("BEGIN"));
  BR_ASSERT_OK(open->Exec("UPDATE mf.t SET v = 'committed late' WHERE id = 1"));
  BR_ASSERT_OK_AND_ASSIGN(auto serve, StartMove(servers));
  const auto deadline = std::chrono::steady_clock::now() + seconds(120);
  while (!absl::StrContains(serve->Stderr(), "READ on") &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(100));
  }
  const std::string waited = serve->Stderr();
  ASSERT_TRUE(absl::StrContains(waited, "waited 1 s and gave up (attempt 1)"))
      << serve->StderrTail(30);
  // Still waiting, not failed, while the transaction stays open.
  std::this_thread::sleep_for(seconds(2));
  const std::string still = WaitForPhase(*serve, "checksum", seconds(5));
  EXPECT_TRUE(absl::StrContains(still, "checksum") && !absl::StrContains(still, "error")) << still;
  BR_ASSERT_OK(open->Exec("COMMIT"));
  ASSERT_EQ(WaitForPhase(*serve, "done", seconds(120)), "done") << serve->StderrTail(30);
  const std::string columns = "id, CAST(doc AS CHAR), email, v, d, ts, dt, f, HEX(b), y";
  EXPECT_EQ(Rows(*servers.target, "mf.t", columns, "id", &source, 1),
            Rows(source, "mf.t_old", columns, "id", &source, 1));
  auto v = servers.target->Query("SELECT v FROM mf.t WHERE id = 1");
  ASSERT_TRUE(v.ok() && !v->empty()) << v.status();
  EXPECT_EQ((*v)[0][0].value_or("NULL"), "committed late");
  BR_EXPECT_OK(serve->Stop());
}

// Guards the copy's byte limit on MySQL, whose rows the copier reads as text
// (no bulk commands): chunks sized in rows alone make each copy thread hold
// hundreds of 1 MB rows. serve, running the move of 120 such rows with
// copy_chunk_bytes = 8M and two copy threads, must stay far below the
// table's 120 MB, and the copy must be exact.
TEST(MoveOnMySqlTest, LargeRowsAreCopiedWithinCopyChunkBytes) {
  BINRELAY_REQUIRE_FLAVOUR("mysql-9.7");
  BR_ASSERT_OK_AND_ASSIGN(MoveServers servers, StartMoveServers({"mysql-9.7", "mysql-9.7"}));
  ServerSandbox& source = *servers.source;
  BR_ASSERT_OK(source.Execute("CREATE TABLE mf.big (id INT PRIMARY KEY, b LONGBLOB)"));
  for (int first = 0; first < 120; first += 20) {
    BR_ASSERT_OK(source.Execute(absl::StrCat(
        "INSERT INTO mf.big (id, b) WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 "
        "FROM s WHERE n < 20) SELECT n + ", first, ", CONCAT(n + ", first,
        ", REPEAT(CHAR(65 + (n + ", first, ") % 26), 1048576)) FROM s")));
  }
  // The store starts at the source's current file: not the one with the rows.
  BR_ASSERT_OK(source.Execute("FLUSH BINARY LOGS"));
  ServeOptions o;
  o.start = "current";
  o.extra_config = absl::StrCat("[move.mf]\ntarget_host = 127.0.0.1\ntarget_port = ",
                                servers.target->Port(), "\ntarget_user = ", kMover,
                                "\ntarget_password = ", kMoverPassword,
                                "\ntables = mf.big\ncopy_threads = 2\ncopy_chunk_bytes = 8M\n");
  BR_ASSERT_OK_AND_ASSIGN(auto serve, ServeProcess::Create(source, o));
  BR_ASSERT_OK(serve->Start());
  ASSERT_EQ(WaitForPhase(*serve, "done", seconds(180)), "done") << serve->StderrTail(30);
  // VmHWM: the high-water mark since serve started, the copy included.
  const uint64_t peak = PeakRssBytes(serve->pid());
  RecordProperty("peak_rss_mib", static_cast<int>(peak >> 20));
  std::cerr << "serve peak RSS moving 120 x 1 MB rows on MySQL 9.7: " << (peak >> 20) << " MiB\n";
  ASSERT_GT(peak, 0u) << "no /proc reading";
#if defined(__SANITIZE_ADDRESS__)
  RecordProperty("rss_bound", "not checked under AddressSanitizer (shadow memory)");
#else
  EXPECT_LT(peak, 64ull << 20) << "peak RSS " << (peak >> 20) << " MiB for chunks of 8 MiB";
#endif
  EXPECT_EQ(Rows(*servers.target, "mf.big", "id, LENGTH(b), SHA2(b, 256)", "id"),
            Rows(source, "mf.big_old", "id, LENGTH(b), SHA2(b, 256)", "id"));
  BR_EXPECT_OK(serve->Stop());
}

// Guards: a definition the target's release cannot parse (MySQL's default
// collation on MariaDB) failing the move with only the server's error, not
// naming the table or saying what to do.
TEST(MoveOnMySqlTest, DefinitionTheTargetCannotTakeIsRefusedWithWhatToDo) {
  BINRELAY_REQUIRE_FLAVOUR("mysql-9.7");
  BR_ASSERT_OK_AND_ASSIGN(MoveServers servers, StartMoveServers({"mysql-9.7", "mariadb-10.11"}));
  BR_ASSERT_OK(servers.source->Execute(
      "CREATE TABLE mf.c (id INT PRIMARY KEY, name VARCHAR(20)) COLLATE utf8mb4_0900_ai_ci"));
  BR_ASSERT_OK(servers.source->Execute("INSERT INTO mf.c VALUES (1, 'a')"));
  BR_ASSERT_OK_AND_ASSIGN(auto serve, StartMove(servers));
  const std::string phase = WaitForPhase(*serve, "done", seconds(60));
  EXPECT_TRUE(absl::StartsWith(phase, "error: ")) << phase;
  EXPECT_TRUE(absl::StrContains(phase, "creating mf.c on 127.0.0.1:")) << phase;
  EXPECT_TRUE(absl::StrContains(phase, "utf8mb4_0900_ai_ci")) << phase;
  EXPECT_TRUE(absl::StrContains(phase, "create the table there by hand")) << phase;
}

class ApplyFlavoursTest : public ::testing::TestWithParam<FlavourPair> {};

// Guards an apply pipeline between flavours: the shape check refusing
// MySQL's JSON against MariaDB's (a checked LONGTEXT) or year against
// year(4), MySQL's binary JSON written to MariaDB as anything but its text,
// MariaDB's JSON text refused by MySQL's JSON column, or a value of another
// type changed on the way. The target's table is made by the operator on
// the target's own flavour, as a user moving between flavours does.
TEST_P(ApplyFlavoursTest, PipelineAppliesJsonAndOtherTypesAcrossFlavours) {
  const FlavourPair& pair = GetParam();
  BINRELAY_REQUIRE_FLAVOUR(pair.source);
  BINRELAY_REQUIRE_FLAVOUR(pair.target);
  BR_ASSERT_OK_AND_ASSIGN(MoveServers servers, StartMoveServers(pair));
  ServerSandbox& source = *servers.source;
  ServerSandbox& target = *servers.target;
  const std::string create =
      "CREATE TABLE mf.j (id INT PRIMARY KEY, doc JSON, y YEAR, e ENUM('a', 'b'), bits BIT(5), "
      "dt DATETIME(3), dbl DOUBLE, dec5 DECIMAL(20, 5), txt TEXT, bin VARBINARY(10)) "
      "DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_general_ci";
  BR_ASSERT_OK(source.Execute(create));
  BR_ASSERT_OK(target.Execute("CREATE DATABASE mf"));
  BR_ASSERT_OK(target.Execute(create));
  BR_ASSERT_OK_AND_ASSIGN(auto start, CurrentBinlogPosition(source));
  BR_ASSERT_OK_AND_ASSIGN(auto serve, StartPipeline(source, target, start));
  const std::vector<std::string> docs = {
      R"({"a": 1, "b": [1, 2.5, -3e-7, true, false, null], "c": {"d": "x\"y"}})",
      R"([])",
      R"({"k": "caf\u00e9 \u65e5\u672c", "n": 12345678901234567890})",
      R"("just a string")",
      R"({"a": {"a": {"a": [[[]]]}}, "big": 1.7976931348623157e308})",
  };
  for (size_t i = 0; i < docs.size(); ++i) {
    BR_ASSERT_OK(source.Execute(absl::StrCat(
        "INSERT INTO mf.j VALUES (", i + 1, ", '", absl::StrReplaceAll(docs[i], {{"\\", "\\\\"}}),
        "', ", 1990 + i, ", 'b', b'10101', '2026-12-04 10:11:12.345', ", 0.1 * (i + 1),
        ", -123456789012345.12345, REPEAT('t', ", 100 * i, "), UNHEX('00FF", i, "0'))")));
  }
  BR_ASSERT_OK(source.Execute("UPDATE mf.j SET doc = '{\"a\": 2}', y = NULL WHERE id = 2"));
  BR_ASSERT_OK(source.Execute("DELETE FROM mf.j WHERE id = 4"));
  const std::string columns =
      "id, CAST(doc AS CHAR), y, e, bits + 0, dt, dbl, dec5, txt, HEX(bin)";
  auto rows = [&](ServerSandbox& server) {
    return Rows(server, "mf.j", columns, "id", MySqlOf(source, target), 1);
  };
  const std::string want = rows(source);
  ASSERT_EQ(std::count(want.begin(), want.end(), '\n'), 4) << want;
  std::string got;
  for (int i = 0; i < 300 && (got = rows(target)) != want; ++i) {
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_EQ(got, want) << serve->StderrTail(30);
  BR_EXPECT_OK(serve->Stop());
}

// The pipeline's status entry `field` (the first pipeline's), or "".
std::string PipelineField(ServeProcess& serve, const std::string& field) {
  auto json = StatusJson(serve.http_port());
  if (!json.ok()) return "";
  const JsonValue* list = json->Find("pipelines");
  if (list == nullptr || list->array.empty()) return "";
  const JsonValue* v = list->array[0].Find(field);
  return v ? v->text : "";
}

int64_t GlobalCounter(ServerSandbox& server, const std::string& name) {
  auto rows = server.Query("SHOW GLOBAL STATUS LIKE '" + name + "'");
  if (!rows.ok() || rows->empty() || !(*rows)[0][1]) return -1;
  return std::stoll(*(*rows)[0][1]);
}

// Guards the pipeline's writes to a MySQL target, which has no bulk
// command: prepared multi-row REPLACEs whose values travel in binary form.
// Every column type must arrive byte for byte (CHECKSUM TABLE, same
// flavour on both sides), bound (statements executed for them), and rows of
// long strings as text beside them: a value bound to its neighbour's
// marker, a latin1 or utf8mb4 string re-encoded, a JSON document refused as
// a binary string, or a short batch cut into pieces that skip or repeat a
// row would each show. The setting must take effect (statements prepared on the
// target, "prepared" in /status), and a target that refuses to prepare
// (max_prepared_stmt_count = 0) must get REPLACE text instead, saying why.
TEST(ApplyOnMySqlTest, EveryColumnTypeArrivesExactlyThroughPreparedReplaces) {
  BINRELAY_REQUIRE_FLAVOUR("mysql-9.7");
  BR_ASSERT_OK_AND_ASSIGN(MoveServers servers, StartMoveServers({"mysql-9.7", "mysql-9.7"}));
  ServerSandbox& source = *servers.source;
  ServerSandbox& target = *servers.target;
  BR_ASSERT_OK(target.Execute("CREATE DATABASE mf"));
  for (ServerSandbox* s : {&source, &target}) {
    BR_ASSERT_OK(s->Execute(EveryTypeTableDdl("mf.types")));
    BR_ASSERT_OK(s->Execute(
        "CREATE TABLE mf.many (id INT PRIMARY KEY, l VARCHAR(20) CHARACTER SET latin1, "
        "u VARCHAR(20) CHARACTER SET utf8mb4, b BLOB)"));
    BR_ASSERT_OK(s->Execute("CREATE TABLE mf.refused (id INT PRIMARY KEY, v VARCHAR(10))"));
  }
  const int64_t prepares = GlobalCounter(target, "Com_stmt_prepare");
  BR_ASSERT_OK_AND_ASSIGN(auto start, CurrentBinlogPosition(source));
  ServeOptions o;
  auto config = [&](const std::string& name, const std::string& tables) {
    return absl::StrCat("[apply.", name, "]\ntarget_host = 127.0.0.1\ntarget_port = ",
                        target.Port(), "\ntarget_user = ", kMover, "\ntarget_password = ",
                        kMoverPassword, "\ntables = ", tables, "\nstart = ", start,
                        "\nflush_interval = 100ms\n");
  };
  o.extra_config = config("p", "mf.types,mf.many");
  BR_ASSERT_OK_AND_ASSIGN(auto serve, ServeProcess::Create(source, o));
  BR_ASSERT_OK(serve->Start());
  BR_ASSERT_OK(source.Execute("SET NAMES utf8mb4"));
  BR_ASSERT_OK(source.Execute("SET time_zone = '+00:00'"));
  BR_ASSERT_OK(source.Execute("SET sql_mode = ''"));
  std::vector<std::string> nulls(Columns().size(), "NULL");
  // kMaxes with its longest strings (rows of hundreds of KiB go as text:
  // target_flusher.cc kMaxBoundRowBytes) as kOther's: every extreme
  // number and date bound, and strings past 250 bytes (ch100's two-byte
  // length, tx's 1,500 bytes) too.
  std::vector<std::string> maxes = kMaxes;
  for (size_t i = 0; i < maxes.size(); ++i) {
    const std::string name = Columns()[i].name;
    if (absl::StartsWith(maxes[i], "REPEAT(") && name != "ch100" && name != "tx") {
      maxes[i] = kOther[i];
    }
  }
  auto checksum = [](ServerSandbox& s, const std::string& tables) {
    auto rows = s.Query("CHECKSUM TABLE " + tables);
    if (!rows.ok()) return std::string("unreadable: ") + std::string(rows.status().message());
    std::string out;
    for (const auto& r : *rows) absl::StrAppend(&out, r[0].value_or(""), "=", r[1].value_or("NULL"), " ");
    return out;
  };
  auto converge = [&](const std::string& tables) {
    const std::string want = checksum(source, tables);
    std::string got;
    for (int i = 0; i < 300 && (got = checksum(target, tables)) != want; ++i) {
      std::this_thread::sleep_for(milliseconds(100));
    }
    EXPECT_EQ(got, want) << serve->StderrTail(30);
  };
  const int64_t executes = GlobalCounter(target, "Com_stmt_execute");
  ASSERT_GE(executes, 0);
  BR_ASSERT_OK(source.Execute(absl::StrCat(
      "INSERT INTO mf.types VALUES ", RowValues(1, kMins), ", ", RowValues(2, maxes), ", ",
      RowValues(3, kMisc), ", ", RowValues(4, nulls), ", ", RowValues(5, kOther))));
  BR_ASSERT_OK(source.Execute(absl::StrCat("UPDATE mf.types SET ", SetClause(kOther),
                                           " WHERE id = 1")));
  BR_ASSERT_OK(source.Execute(absl::StrCat("UPDATE mf.types SET ", SetClause(maxes),
                                           " WHERE id = 4")));
  BR_ASSERT_OK(source.Execute("DELETE FROM mf.types WHERE id IN (2, 3)"));
  converge("mf.types");
  EXPECT_GT(GlobalCounter(target, "Com_stmt_execute"), executes) << "the types were not bound";
  // A row of long strings (225 KB) alone: written as text, nothing executed.
  const int64_t bound = GlobalCounter(target, "Com_stmt_execute");
  BR_ASSERT_OK(source.Execute(absl::StrCat("INSERT INTO mf.types VALUES ", RowValues(6, kMaxes))));
  converge("mf.types");
  EXPECT_EQ(GlobalCounter(target, "Com_stmt_execute"), bound) << "the long row was bound";
  // 1301 rows in one transaction, two connections' runs of about 650:
  // statements of 512 rows (2048 markers / 4), the rest cut into pieces of
  // powers of two. Every 7th row has NULLs, so NULL bits fall at every
  // offset of the pieces.
  BR_ASSERT_OK(source.Execute("SET cte_max_recursion_depth = 2000"));
  BR_ASSERT_OK(source.Execute(
      "INSERT INTO mf.many WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
      "WHERE i < 1301) SELECT i, IF(i % 7 = 0, NULL, CONVERT(CONCAT('caf', CHAR(233 USING "
      "latin1), i) USING latin1)), IF(i % 7 = 3, NULL, CONCAT('\u65e5', i)), "
      "IF(i % 7 = 5, NULL, UNHEX(CONCAT('00FF27', LPAD(HEX(i), 4, '0'), '5C'))) FROM n"));
  converge("mf.types, mf.many");
  auto count = target.Query("SELECT COUNT(*) FROM mf.many");
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ((*count)[0][0].value_or("?"), "1301");
  EXPECT_EQ(PipelineField(*serve, "upsert_protocol"), "prepared");
  EXPECT_EQ(PipelineField(*serve, "target_warnings"), "0") << serve->StderrTail(30);
  EXPECT_GT(GlobalCounter(target, "Com_stmt_prepare"), prepares) << "nothing was prepared";
  BR_EXPECT_OK(serve->Stop());

  // A target that prepares nothing: REPLACE text, and /status says why.
  BR_ASSERT_OK(target.Execute("SET GLOBAL max_prepared_stmt_count = 0"));
  BR_ASSERT_OK_AND_ASSIGN(start, CurrentBinlogPosition(source));
  o.extra_config = config("q", "mf.refused");
  BR_ASSERT_OK_AND_ASSIGN(serve, ServeProcess::Create(source, o));
  BR_ASSERT_OK(serve->Start());
  BR_ASSERT_OK(source.Execute("INSERT INTO mf.refused VALUES (1, 'a'), (2, 'b'), (3, NULL)"));
  for (int i = 0; i < 300; ++i) {
    auto rows = target.Query("SELECT COUNT(*) FROM mf.refused");
    if (rows.ok() && (*rows)[0][0].value_or("") == "3") break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  const std::string how = PipelineField(*serve, "upsert_protocol");
  EXPECT_TRUE(absl::StartsWith(how, "text (prepared refused: ")) << how;
  EXPECT_TRUE(absl::StrContains(how, "1461")) << how;
  auto rows = target.Query("SELECT id, IFNULL(v, 'NULL') FROM mf.refused ORDER BY id");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[2][1].value_or("?"), "NULL");
  BR_EXPECT_OK(serve->Stop());
}

// Guards a MariaDB JSON column in latin1 applied to a MySQL JSON column:
// bound, its bytes are taken as utf8mb4 text (é, 0xE9, is not UTF-8: the
// row arrived as NULL, a warning the only trace; where the bytes happen to
// form UTF-8, other characters), so that table is written as text in
// latin1 while the pipeline still binds the others' rows.
TEST(ApplyOnMySqlTest, Latin1JsonFromMariaDbIsWrittenAsTextBesideBoundTables) {
  BINRELAY_REQUIRE_FLAVOUR("mysql-9.7");
  BR_ASSERT_OK_AND_ASSIGN(MoveServers servers, StartMoveServers({"mariadb-10.11", "mysql-9.7"}));
  ServerSandbox& source = *servers.source;
  ServerSandbox& target = *servers.target;
  // MariaDB's JSON is a utf8mb4 LONGTEXT with a JSON_VALID check; the same
  // in latin1 is what an older schema has.
  BR_ASSERT_OK(source.Execute("CREATE TABLE mf.j (id INT PRIMARY KEY, doc LONGTEXT CHARACTER SET "
                              "latin1 CHECK (JSON_VALID(doc)))"));
  BR_ASSERT_OK(source.Execute(
      "CREATE TABLE mf.n (id INT PRIMARY KEY, v INT)"));
  auto charset = source.Query(
      "SELECT CHARACTER_SET_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'mf' "
      "AND TABLE_NAME = 'j' AND COLUMN_NAME = 'doc'");
  ASSERT_TRUE(charset.ok() && charset->size() == 1) << charset.status();
  ASSERT_EQ((*charset)[0][0].value_or(""), "latin1") << "the source's JSON must be latin1 here";
  BR_ASSERT_OK(target.Execute("CREATE DATABASE mf"));
  BR_ASSERT_OK(target.Execute("CREATE TABLE mf.j (id INT PRIMARY KEY, doc JSON)"));
  BR_ASSERT_OK(target.Execute(
      "CREATE TABLE mf.n (id INT PRIMARY KEY, v INT)"));
  BR_ASSERT_OK_AND_ASSIGN(auto start, CurrentBinlogPosition(source));
  BR_ASSERT_OK_AND_ASSIGN(auto serve, StartPipeline(source, target, start));
  const int64_t executes = GlobalCounter(target, "Com_stmt_execute");
  ASSERT_GE(executes, 0);
  BR_ASSERT_OK(source.Execute("SET NAMES utf8mb4"));
  BR_ASSERT_OK(source.Execute("INSERT INTO mf.j VALUES (1, '{\"k\": \"caf\u00e9\"}'), (2, '[]')"));
  BR_ASSERT_OK(source.Execute("INSERT INTO mf.n VALUES (1, 10), (2, 20)"));
  std::string got;
  for (int i = 0; i < 300; ++i) {
    auto rows = target.Query("SELECT CAST(doc AS CHAR) FROM mf.j ORDER BY id");
    auto n = target.Query("SELECT COUNT(*) FROM mf.n");
    if (rows.ok() && rows->size() == 2 && n.ok() && (*n)[0][0].value_or("") == "2") {
      got = absl::StrCat((*rows)[0][0].value_or("NULL"), "|", (*rows)[1][0].value_or("NULL"));
      break;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_EQ(got, "{\"k\": \"caf\u00e9\"}|[]") << serve->StderrTail(30);
  EXPECT_EQ(PipelineField(*serve, "upsert_protocol"), "prepared") << serve->StderrTail(30);
  EXPECT_GT(GlobalCounter(target, "Com_stmt_execute"), executes) << "mf.n was not bound";
  EXPECT_EQ(PipelineField(*serve, "target_warnings"), "0") << serve->StderrTail(30);
  BR_EXPECT_OK(serve->Stop());
}

INSTANTIATE_TEST_SUITE_P(Pairs, ApplyFlavoursTest,
                         ::testing::Values(FlavourPair{"mysql-9.7", "mariadb-10.11"},
                                           FlavourPair{"mariadb-10.11", "mysql-9.7"}),
                         PairName);

// Guards: MariaDB's JSON text moved into a MySQL JSON column the operator
// made, which MySQL rewrites (keys sorted, spacing, escapes): the move's
// checksum compares text and would fail only after the whole copy. It is
// refused before anything is copied, saying what to do.
TEST(MoveOnMySqlTest, MariaDbJsonIntoAMySqlJsonColumnIsRefusedBeforeCopying) {
  BINRELAY_REQUIRE_FLAVOUR("mysql-9.7");
  BR_ASSERT_OK_AND_ASSIGN(MoveServers servers, StartMoveServers({"mariadb-10.11", "mysql-9.7"}));
  BR_ASSERT_OK(servers.source->Execute("CREATE TABLE mf.d (id INT PRIMARY KEY, doc JSON)"));
  BR_ASSERT_OK(servers.source->Execute("INSERT INTO mf.d VALUES (1, '{\"b\":1,\"a\":2}')"));
  BR_ASSERT_OK(servers.target->Execute("CREATE DATABASE mf"));
  BR_ASSERT_OK(servers.target->Execute("CREATE TABLE mf.d (id INT PRIMARY KEY, doc JSON)"));
  BR_ASSERT_OK_AND_ASSIGN(auto serve, StartMove(servers));
  const std::string phase = WaitForPhase(*serve, "done", seconds(60));
  EXPECT_TRUE(absl::StrContains(phase, "column `doc` is MySQL's JSON but the source's is "
                                       "longtext")) << phase;
  EXPECT_TRUE(absl::StrContains(phase, "ALTER it to JSON after the cutover")) << phase;
  auto rows = servers.target->Query("SELECT COUNT(*) FROM mf.d");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ((*rows)[0][0].value_or("?"), "0") << "rows were copied before the refusal";
}

INSTANTIATE_TEST_SUITE_P(Pairs, MoveFlavoursTest,
                         ::testing::Values(FlavourPair{"mysql-9.7", "mysql-9.7"},
                                           FlavourPair{"mariadb-10.11", "mysql-9.7"},
                                           FlavourPair{"mysql-9.7", "mariadb-10.11"},
                                           FlavourPair{"mariadb-10.5", "mariadb-11.8"}),
                         PairName);

}  // namespace
}  // namespace binrelay::testing
