// binrelay move between releases and across flavours, live: a source of one
// release taking writes all through the copy, binrelay serve storing its
// binlog, a target of another release, and the cutover. What differs by
// flavour is all on binrelay's side of the wire: MySQL has no SET STATEMENT
// (the move's session settings, apply/move_session.h) and no binlog position
// for a snapshot (the checksum's brief table lock, apply/table_move.cc),
// and the two spell the same column types differently (apply/table_shape.h).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
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

constexpr char kMover[] = "mover";
constexpr char kMoverPassword[] = "mover-pw";

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
// DOUBLE, BLOB, YEAR, which MariaDB spells year(4)), and a composite key
// with a case-insensitive VARCHAR. Collations both flavours have.
constexpr char kTableT[] =
    "CREATE TABLE mf.t (id INT NOT NULL PRIMARY KEY, email VARCHAR(40) NOT NULL, "
    "v VARCHAR(64), d DECIMAL(12,3), ts TIMESTAMP(3) NULL, dt DATETIME(6), f DOUBLE, b BLOB, "
    "y YEAR, UNIQUE KEY (email)) DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_general_ci";
constexpr char kTableK[] =
    "CREATE TABLE mf.k (a VARCHAR(20) NOT NULL, n INT NOT NULL, p TEXT, PRIMARY KEY (a, n)) "
    "DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_general_ci";

std::string RowOfT(int id, uint32_t r) {
  return absl::StrCat("(", id, ", 'e", id, "@example.com', 'v", r % 9973, "', ", r % 100000,
                      ".", r % 1000, ", '2026-0", 1 + r % 9, "-1", r % 10, " 1", r % 10, ":0",
                      r % 10, ":00.", r % 1000, "', '1999-12-31 23:59:", 10 + r % 50, ".",
                      r % 1000000, "', ", r % 1000, ".25, UNHEX('", absl::Hex(r), "00FF'), ",
                      1990 + r % 100, ")");
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

// Every row of `table`, its values as text, in key order: compared across
// flavours, where CHECKSUM TABLE differs by row format.
std::string Rows(ServerSandbox& server, const std::string& table, const std::string& columns,
                 const std::string& order) {
  (void)server.Execute("SET time_zone = '+00:00'");
  auto rows = server.Query(absl::StrCat("SELECT ", columns, " FROM ", table, " ORDER BY ", order));
  if (!rows.ok()) return absl::StrCat("unreadable: ", rows.status().message());
  std::string out;
  for (const auto& r : *rows) {
    for (const auto& v : r) absl::StrAppend(&out, v ? *v : "NULL", "|");
    out.push_back('\n');
  }
  return out;
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

  const std::string t_columns = "id, email, v, d, ts, dt, f, HEX(b), y";
  const std::string t_rows = Rows(*target, "mf.t", t_columns, "id");
  EXPECT_EQ(t_rows, Rows(*source, "mf.t_old", t_columns, "id"));
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
  const std::string columns = "id, email, v, d, ts, dt, f, HEX(b), y";
  EXPECT_EQ(Rows(*servers.target, "mf.t", columns, "id"),
            Rows(source, "mf.t_old", columns, "id"));
  auto v = servers.target->Query("SELECT v FROM mf.t WHERE id = 1");
  ASSERT_TRUE(v.ok() && !v->empty()) << v.status();
  EXPECT_EQ((*v)[0][0].value_or("NULL"), "committed late");
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

INSTANTIATE_TEST_SUITE_P(Pairs, MoveFlavoursTest,
                         ::testing::Values(FlavourPair{"mysql-9.7", "mysql-9.7"},
                                           FlavourPair{"mariadb-10.11", "mysql-9.7"},
                                           FlavourPair{"mysql-9.7", "mariadb-10.11"},
                                           FlavourPair{"mariadb-10.5", "mariadb-11.8"}),
                         PairName);

}  // namespace
}  // namespace binrelay::testing
