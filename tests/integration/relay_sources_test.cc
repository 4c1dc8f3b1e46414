// SHOW RELAY SOURCES on real servers of every release: binrelay follows a
// primary with a real replica of it (GTID auto-position) as the other
// candidate, and says which
// one a failover could follow, and why not the other, as the topology
// changes (the replica read-only, both writable, the replica behind with a
// transaction of its own, the replica down).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "protocol/client_connection.h"
#include "tests/harness/replica_fixture.h"
#include "tests/harness/serve_fixture.h"
#include "tests/harness/server_flavour.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

using Row = std::map<std::string, std::string>;  // NULL as "NULL"

// SHOW RELAY SOURCES on binrelay's listener, rows keyed by Source.
absl::StatusOr<std::map<std::string, Row>> RelaySources(const ServeProcess& serve) {
  protocol::ConnectOptions o;
  o.port = serve.listen_port();
  o.user = kReplUser;
  o.password = kReplPassword;
  o.tls = protocol::ConnectOptions::Tls::kRequired;  // caching_sha2_password (MySQL greeting)
  BR_ASSIGN_OR_RETURN(auto conn, protocol::ClientConnection::Connect(o));
  BR_ASSIGN_OR_RETURN(protocol::QueryResult r, conn->Query("SHOW RELAY SOURCES"));
  std::map<std::string, Row> out;
  for (const auto& values : r.rows) {
    Row row;
    for (size_t i = 0; i < r.columns.size() && i < values.size(); ++i) {
      row[r.columns[i]] = values[i].value_or("NULL");
    }
    out[row["Source"]] = row;
  }
  return out;
}

// The server's GTID state as a replica would compare it: MariaDB
// @@gtid_binlog_pos, MySQL @@gtid_executed (its newlines removed).
absl::StatusOr<std::string> Gtids(ServerSandbox& sb) {
  BR_ASSIGN_OR_RETURN(SqlRows rows, sb.Query(sb.Flavour().mysql ? "SELECT @@gtid_executed"
                                                               : "SELECT @@gtid_binlog_pos"));
  std::string text = rows.at(0).at(0).value_or("");
  text.erase(std::remove_if(text.begin(), text.end(), [](char c) { return c == '\n'; }),
             text.end());
  return text;
}

// "uuid:1-8" -> "uuid:8": the last GTID of a one-interval MySQL set.
std::string LastMysqlGtid(const std::string& set) {
  const size_t colon = set.find(':');
  const size_t dash = set.rfind('-');
  return set.substr(0, colon + 1) + set.substr(dash != std::string::npos && dash > colon
                                                   ? dash + 1
                                                   : colon + 1);
}

std::string Show(const std::map<std::string, Row>& rows) {
  std::string s;
  for (const auto& [source, row] : rows) {
    absl::StrAppend(&s, source, ":");
    for (const auto& [k, v] : row) absl::StrAppend(&s, " ", k, "=", v);
    absl::StrAppend(&s, "\n");
  }
  return s;
}

// Guards: a failover check that takes a read-only or lagging replica for a
// source, misses a split brain, hides errant transactions, or stalls on a
// dead candidate; each verdict must name the candidate and the GTIDs.
class RelaySourcesTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RelaySourcesTest, VerdictsFollowTheTopologyOfARealPrimaryAndReplica) {
  BINRELAY_REQUIRE_FLAVOUR(GetParam());
  BR_ASSERT_OK_AND_ASSIGN(auto primary, StartServeSource({}, GetParam()));
  const bool mysql = primary->Flavour().mysql;
  BR_ASSERT_OK(primary->Execute("CREATE DATABASE app"));
  BR_ASSERT_OK(primary->Execute("CREATE TABLE app.t (id INT PRIMARY KEY, v INT)"));
  BR_ASSERT_OK(primary->Execute("INSERT INTO app.t VALUES (1, 1), (2, 2)"));
  ReplicaOptions ro;
  ro.mode = ReplicaOptions::Mode::kGtidSlavePos;
  ro.server_id = 2;
  ro.flavour = GetParam();
  if (mysql) ro.extra = "GET_SOURCE_PUBLIC_KEY=1";  // caching_sha2_password without TLS
  BR_ASSERT_OK_AND_ASSIGN(
      auto replica,
      StartReplicaOf(MasterEndpoint{primary->Port(), kRelayUser, kRelayPassword}, ro));
  BR_ASSERT_OK(WaitReplicaExecuted(*replica, *primary, std::chrono::seconds(60)));
  BR_ASSERT_OK_AND_ASSIGN(std::string pos, Gtids(*primary));
  BR_ASSERT_OK(replica->Execute("SET GLOBAL read_only = 1"));

  const std::string p = absl::StrCat("127.0.0.1:", primary->Port());
  const std::string r = absl::StrCat("127.0.0.1:", replica->Port());
  ServeOptions so;
  so.overrides = {absl::StrCat("--source.candidates=", r)};
  BR_ASSERT_OK_AND_ASSIGN(auto serve, ServeProcess::Create(*primary, so));
  BR_ASSERT_OK(serve->Start());
  BR_ASSERT_OK(WaitStoreReached(*serve, *primary, std::chrono::seconds(60)).status());

  // 1. The usual topology: the primary is the one to follow, the replica is
  // read-only and holds everything stored.
  BR_ASSERT_OK_AND_ASSIGN(auto rows, RelaySources(*serve));
  ASSERT_EQ(rows.size(), 2u) << Show(rows);
  EXPECT_EQ(rows[p]["Current"], "Yes");
  EXPECT_EQ(rows[p]["Eligible"], "Yes") << Show(rows);
  EXPECT_EQ(rows[p]["Decision"], absl::StrCat("would follow ", p)) << Show(rows);
  EXPECT_EQ(rows[r]["Read_only"], "ON");
  EXPECT_EQ(rows[r]["Lacks"], "") << Show(rows);
  EXPECT_TRUE(absl::StrContains(rows[r]["Verdict"], "read-only")) << Show(rows);
  EXPECT_TRUE(absl::StrContains(rows[r]["Gtid_state"], pos)) << Show(rows);

  // 2. Both writable: a split brain, neither is followed.
  BR_ASSERT_OK(replica->Execute("SET GLOBAL read_only = 0"));
  BR_ASSERT_OK_AND_ASSIGN(rows, RelaySources(*serve));
  EXPECT_EQ(rows[p]["Eligible"], "No") << Show(rows);
  EXPECT_TRUE(absl::StrContains(rows[p]["Decision"],
                                absl::StrCat("2 candidates take writes (", p, ", ", r, ")")))
      << Show(rows);

  // 3. The replica stops replicating and takes a write of its own; the
  // primary goes on (binrelay stores it) and turns read-only. The replica,
  // now the only writable server, lacks what binrelay stored and has a
  // transaction binrelay never stored: refused, both named.
  BR_ASSERT_OK(replica->Execute("STOP REPLICA"));
  BR_ASSERT_OK(replica->Execute("INSERT INTO app.t VALUES (100, 100)"));
  BR_ASSERT_OK(primary->Execute("INSERT INTO app.t VALUES (3, 3)"));
  BR_ASSERT_OK(primary->Execute("SET GLOBAL read_only = 1"));
  BR_ASSERT_OK(WaitStoreReached(*serve, *primary, std::chrono::seconds(60)).status());
  BR_ASSERT_OK_AND_ASSIGN(std::string stored, Gtids(*primary));
  // What the replica lacks and has: MariaDB compares each domain's last
  // GTID (0-1-N against the replica's own 0-2-N); MySQL the sets (the
  // primary's last transaction; the replica's own uuid:1).
  std::string stored_pos = stored, errant;
  if (mysql) {
    stored_pos = LastMysqlGtid(stored);
    BR_ASSERT_OK_AND_ASSIGN(SqlRows uuid, replica->Query("SELECT @@server_uuid"));
    errant = absl::StrCat(*uuid[0][0], ":1");
  } else {
    BR_ASSERT_OK_AND_ASSIGN(errant, Gtids(*replica));
    EXPECT_TRUE(absl::StartsWith(errant, "0-2-")) << errant;
  }
  BR_ASSERT_OK_AND_ASSIGN(rows, RelaySources(*serve));
  EXPECT_EQ(rows[r]["Lacks"], stored_pos) << Show(rows);
  EXPECT_EQ(rows[r]["Beyond"], errant) << Show(rows);
  EXPECT_TRUE(absl::StrContains(
      rows[r]["Decision"],
      absl::StrCat("the one candidate taking writes, ", r, ", cannot be followed: lacks ",
                   stored_pos, " that binrelay stored, and has ", errant,
                   " that binrelay never stored (errant transactions)")))
      << Show(rows);

  // 4. The replica down: unreachable, said at once (not after 10 s).
  replica->Stop();
  const auto asked = std::chrono::steady_clock::now();
  BR_ASSERT_OK_AND_ASSIGN(rows, RelaySources(*serve));
  EXPECT_LT(std::chrono::steady_clock::now() - asked, std::chrono::seconds(8));
  EXPECT_EQ(rows[r]["Reachable"], "No") << Show(rows);
  EXPECT_TRUE(absl::StartsWith(rows[r]["Verdict"], "unreachable: ")) << Show(rows);
  EXPECT_TRUE(absl::StrContains(rows[p]["Decision"], "no candidate can be followed")) << Show(rows);
}

INSTANTIATE_TEST_SUITE_P(Flavours, RelaySourcesTest, ::testing::ValuesIn(ServerFlavour::All()),
                         FlavourTestName<::testing::TestParamInfo<std::string>>);

}  // namespace
}  // namespace binrelay::testing
