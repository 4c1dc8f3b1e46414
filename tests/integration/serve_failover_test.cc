// Following a failover by hand: binrelay's source dies, its replica is
// promoted, and CHANGE MASTER TO ... MASTER_USE_GTID = slave_pos (MySQL:
// CHANGE REPLICATION SOURCE TO ... SOURCE_AUTO_POSITION = 1) on binrelay's
// listener makes it continue on the promoted server in a new store era,
// with a real replica of binrelay reading through the switch by GTID.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "protocol/client_connection.h"
#include "protocol/status_macros.h"
#include "replication/connection_sql_source.h"
#include "replication/dump_commands.h"
#include "tests/harness/fault_proxy.h"
#include "tests/harness/raw_dump_client.h"
#include "tests/harness/replica_fixture.h"
#include "tests/harness/serve_fixture.h"
#include "tests/harness/server_flavour.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

using std::chrono::seconds;

protocol::ConnectOptions Admin(const ServeProcess& serve) {
  return ListenerLogin(serve, kAdminUser, kAdminPassword);
}

int64_t Count(ServerSandbox& sb, const std::string& table) {
  auto rows = sb.Query(absl::StrCat("SELECT COUNT(*) FROM ", table));
  if (!rows.ok() || rows->empty() || !(*rows)[0][0]) return -1;
  return std::stoll(*(*rows)[0][0]);
}

std::string LastIoError(const protocol::ConnectOptions& admin) {
  return SlaveStatusColumn(admin, "Last_IO_Error");
}

// A primary with app.t (40 rows), a standby replicating it directly and
// logging what it applies (MySQL does by default), binrelay serve following
// the primary, and a real replica of binrelay by GTID; all caught up.
struct Topology {
  bool mysql = false;
  std::unique_ptr<ServerSandbox> primary, standby, replica;
  std::unique_ptr<ServerSandbox> standby2;  // with second_standby
  std::unique_ptr<FaultProxy> candidate_proxy;
  std::unique_ptr<ServeProcess> serve;
};

struct TopologyOptions {
  std::vector<std::string> standby_args;  // more mariadbd/mysqld options
  // Non-empty: binrelay follows the standby by itself ([source]
  // candidates and failover_after).
  std::string failover_after;
  // binrelay reaches the standby through a proxy that resets or drops
  // connections at random offsets (probe, switch point, dump alike).
  bool faulty_candidate = false;
  // A second replica of the primary like the first (server_id 6), a
  // candidate too.
  bool second_standby = false;
  // Run on the primary before the standby starts (so it replicates them).
  std::vector<std::string> primary_setup;
  // More sections of binrelay's configuration ([move.NAME], ...).
  std::string serve_extra_config;
};

absl::StatusOr<Topology> StartTopology(const std::string& flavour_name,
                                       const TopologyOptions& options) {
  Topology t;
  BR_ASSIGN_OR_RETURN(ServerFlavour flavour, ServerFlavour::Find(flavour_name));
  t.mysql = flavour.mysql;
  BR_ASSIGN_OR_RETURN(t.primary, StartServeSource({}, flavour_name));
  BR_RETURN_IF_ERROR(t.primary->Execute("CREATE DATABASE app"));
  BR_RETURN_IF_ERROR(
      t.primary->Execute("CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(64))"));
  for (int i = 1; i <= 20; ++i) {
    BR_RETURN_IF_ERROR(t.primary->Execute(absl::StrCat("INSERT INTO app.t VALUES (", i, ", 'a')")));
  }
  for (const std::string& sql : options.primary_setup) {
    BR_RETURN_IF_ERROR(t.primary->Execute(sql));
  }
  ReplicaOptions standby_options;
  standby_options.flavour = flavour_name;
  standby_options.mode = ReplicaOptions::Mode::kGtidSlavePos;
  standby_options.server_id = 5;
  if (!t.mysql) standby_options.server_args = {"--log-slave-updates"};
  standby_options.server_args.insert(standby_options.server_args.end(),
                                     options.standby_args.begin(), options.standby_args.end());
  // caching_sha2_password over plain TCP: the source's RSA key.
  if (t.mysql) standby_options.extra = "GET_SOURCE_PUBLIC_KEY=1";
  BR_ASSIGN_OR_RETURN(t.standby, StartReplicaOf(MasterEndpoint{t.primary->Port(), kReplUser,
                                                               kReplPassword},
                                                standby_options));
  if (options.second_standby) {
    ReplicaOptions second = standby_options;
    second.server_id = 6;
    BR_ASSIGN_OR_RETURN(t.standby2, StartReplicaOf(MasterEndpoint{t.primary->Port(), kReplUser,
                                                                  kReplPassword},
                                                   second));
  }
  ServeOptions serve_options;
  uint16_t candidate_port = t.standby->Port();
  if (options.faulty_candidate) {
    FaultProxy::Options po;
    po.upstream_port = t.standby->Port();
    po.seed = 27;
    po.min_bytes = 1;
    po.max_bytes = 48 * 1024;
    po.max_faults = 10;
    po.kinds = {FaultProxy::kReset, FaultProxy::kDrop, FaultProxy::kHalfClose};
    BR_ASSIGN_OR_RETURN(t.candidate_proxy, FaultProxy::Start(po));
    candidate_port = t.candidate_proxy->port();
  }
  serve_options.extra_config = options.serve_extra_config;
  if (!options.failover_after.empty()) {
    std::string candidates = absl::StrCat("127.0.0.1:", candidate_port);
    if (t.standby2) absl::StrAppend(&candidates, ", 127.0.0.1:", t.standby2->Port());
    serve_options.overrides = {"--source.candidates=" + candidates,
                               "--source.failover_after=" + options.failover_after};
  }
  BR_ASSIGN_OR_RETURN(t.serve, ServeProcess::Create(*t.primary, serve_options));
  BR_RETURN_IF_ERROR(t.serve->Start());
  BR_RETURN_IF_ERROR(WaitStoreReached(*t.serve, *t.primary, seconds(60)).status());
  ReplicaOptions ro;
  ro.flavour = flavour_name;
  ro.mode = ReplicaOptions::Mode::kGtidSlavePos;
  ro.server_id = 3;
  ro.extra = standby_options.extra;
  BR_ASSIGN_OR_RETURN(t.replica, StartReplicaOf(ReplicaEndpoint(*t.serve, *t.primary), ro));
  for (int i = 21; i <= 40; ++i) {
    BR_RETURN_IF_ERROR(t.primary->Execute(absl::StrCat("INSERT INTO app.t VALUES (", i, ", 'b')")));
  }
  BR_RETURN_IF_ERROR(WaitStoreReached(*t.serve, *t.primary, seconds(60)).status());
  BR_RETURN_IF_ERROR(WaitReplicaExecuted(*t.standby, *t.primary, seconds(60)));
  if (t.standby2) BR_RETURN_IF_ERROR(WaitReplicaExecuted(*t.standby2, *t.primary, seconds(60)));
  BR_RETURN_IF_ERROR(WaitReplicaExecuted(*t.replica, *t.primary, seconds(60)));
  return t;
}

// Makes `standby` a primary: its replication stopped and forgotten, and
// (with `writable`) read_only off.
absl::Status Promote(ServerSandbox& standby, bool mysql, bool writable = true) {
  BR_RETURN_IF_ERROR(standby.Execute(mysql ? "STOP REPLICA" : "STOP SLAVE"));
  BR_RETURN_IF_ERROR(standby.Execute(mysql ? "RESET REPLICA ALL" : "RESET SLAVE ALL"));
  if (writable) BR_RETURN_IF_ERROR(standby.Execute("SET GLOBAL read_only = 0"));
  return absl::OkStatus();
}

// The failover a DBA runs once nothing acknowledged can be lost: everything
// the primary wrote is in binrelay's store and applied on the standby; the
// primary dies (SIGKILL); the standby is promoted.
absl::Status KillPrimaryAndPromote(Topology& t) {
  BR_RETURN_IF_ERROR(WaitStoreReached(*t.serve, *t.primary, seconds(60)).status());
  BR_RETURN_IF_ERROR(WaitReplicaExecuted(*t.standby, *t.primary, seconds(60)));
  t.primary->Stop(seconds(0));
  return Promote(*t.standby, t.mysql);
}

class ServeFailoverTest : public ::testing::TestWithParam<std::string> {};

// Guards the switch end to end on a real server of each release: rows lost
// or applied twice across it (the promoted server's binlog repeats what
// binrelay stored, in a file whose name binrelay's store already has), a
// new source's file spliced onto or overwriting the old one's, and a
// CHANGE MASTER TO a server lacking stored transactions taken instead of
// refused with what it lacks.
TEST_P(ServeFailoverTest, ChangeMasterByGtidFollowsThePromotedReplica) {
  BINRELAY_REQUIRE_FLAVOUR(GetParam());
  BR_ASSERT_OK_AND_ASSIGN(Topology topology, StartTopology(GetParam(), TopologyOptions{}));
  const bool my = topology.mysql;
  auto& primary = topology.primary;
  auto& standby = topology.standby;
  auto& replica = topology.replica;
  auto& serve = topology.serve;
  BR_ASSERT_OK_AND_ASSIGN(std::vector<std::string> primary_files, SourceBinlogFiles(*primary));
  const std::string primary_dir = primary->DataDir();

  // The primary dies; the standby is promoted. binrelay's replica is
  // stopped meanwhile: it comes back at exactly what binrelay stored.
  primary->Stop(seconds(0));
  BR_ASSERT_OK(replica->Execute(my ? "STOP REPLICA" : "STOP SLAVE"));
  BR_ASSERT_OK(Promote(*standby, my, /*writable=*/false));

  replication::ConnectionSqlSource admin(Admin(*serve));
  BR_ASSERT_OK(admin.Query("STOP SLAVE").status());
  // First a server that never replicated the primary: it lacks what
  // binrelay stored, and is refused with the GTIDs it lacks; nothing is
  // stored from it and binrelay keeps serving.
  BR_ASSERT_OK_AND_ASSIGN(auto stranger, StartServeSource({"--server-id=9"}, GetParam()));
  BR_ASSERT_OK(stranger->Execute("CREATE DATABASE other"));
  const std::string by_gtid = my ? "SOURCE_AUTO_POSITION = 1" : "MASTER_USE_GTID = slave_pos";
  BR_ASSERT_OK(admin.Query(absl::StrCat("CHANGE MASTER TO MASTER_PORT = ", stranger->Port(), ", ",
                                        by_gtid))
                   .status());
  BR_ASSERT_OK(admin.Query("START SLAVE").status());
  std::string refused;
  for (int i = 0; i < 300 && !absl::StrContains(refused, "that binrelay stored"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    refused = LastIoError(Admin(*serve));
  }
  EXPECT_TRUE(absl::StrContains(refused, "lacks")) << refused << serve->StderrTail();
  EXPECT_FALSE(std::filesystem::exists(serve->store_dir() + "/era-1/" + primary_files.front()));
  EXPECT_TRUE(serve->Running());
  // The refused server is named by SHOW SLAVE STATUS (as a server does after
  // CHANGE MASTER TO) but is not the source: the store holds the primary's
  // files, so the primary stays Current in SHOW RELAY SOURCES, and apply
  // and the forwarder (the same followed source) do not query the stranger.
  EXPECT_EQ(SlaveStatusColumn(Admin(*serve), "Master_Port"),
            absl::StrCat(stranger->Port()));
  EXPECT_EQ(CurrentRelaySource(Admin(*serve)), absl::StrCat("127.0.0.1:", primary->Port()));

  // Then the promoted standby.
  BR_ASSERT_OK(admin.Query("STOP SLAVE").status());
  BR_ASSERT_OK(admin.Query(absl::StrCat("CHANGE MASTER TO MASTER_PORT = ", standby->Port(), ", ",
                                        by_gtid))
                   .status());
  BR_ASSERT_OK(admin.Query("START SLAVE").status());
  for (int i = 41; i <= 60; ++i) {
    BR_ASSERT_OK(standby->Execute(absl::StrCat("INSERT INTO app.t VALUES (", i, ", 'c')")));
  }
  BR_ASSERT_OK(WaitStoreReached(*serve, *standby, seconds(60)).status());
  // The replica connects after the switch at its GTID position, exactly
  // the end binrelay stored from the old primary: the dump must start where
  // that position is passed as readers see the files (the era's first file
  // opens under the stored GTIDs), not in the era file by its own opening
  // state, waiting for a GTID the era skips as a repeat.
  BR_ASSERT_OK(replica->Execute(my ? "START REPLICA" : "START SLAVE"));
  BR_ASSERT_OK(WaitReplicaExecuted(*replica, *standby, seconds(60)));
  EXPECT_EQ(Count(*replica, "app.t"), 60);
  // And again from a position inside the era.
  BR_ASSERT_OK(replica->Execute(my ? "STOP REPLICA" : "STOP SLAVE"));
  BR_ASSERT_OK(replica->Execute(my ? "START REPLICA" : "START SLAVE"));
  for (int i = 61; i <= 70; ++i) {
    BR_ASSERT_OK(standby->Execute(absl::StrCat("INSERT INTO app.t VALUES (", i, ", 'd')")));
  }
  BR_ASSERT_OK(WaitStoreReached(*serve, *standby, seconds(60)).status());
  BR_ASSERT_OK(WaitReplicaExecuted(*replica, *standby, seconds(60)));
  EXPECT_EQ(Count(*replica, "app.t"), 70);
  BR_ASSERT_OK_AND_ASSIGN(auto replica_sums, ChecksumAllTables(*replica, "app"));
  BR_ASSERT_OK_AND_ASSIGN(auto standby_sums, ChecksumAllTables(*standby, "app"));
  EXPECT_EQ(replica_sums, standby_sums);

  // The dead primary's files stay as they were; the standby's are kept
  // under era-1/ with its own names, byte for byte (the open one a prefix).
  for (const std::string& f : primary_files) {
    BR_EXPECT_OK(CompareBinlogCopy(primary_dir + "/" + f, serve->store_dir() + "/" + f,
                                   CopyCompare::kPrefixIgnoringInUseFlag));
  }
  BR_ASSERT_OK_AND_ASSIGN(std::vector<std::string> standby_files, SourceBinlogFiles(*standby));
  size_t in_era = 0;
  for (const std::string& f : standby_files) {
    const std::string stored = serve->store_dir() + "/era-1/" + f;
    if (!std::filesystem::exists(stored)) continue;
    ++in_era;
    BR_EXPECT_OK(CompareBinlogCopy(standby->DataDir() + "/" + f, stored,
                                   CopyCompare::kPrefixIgnoringInUseFlag));
  }
  EXPECT_GE(in_era, 1u);
  BR_ASSERT_OK_AND_ASSIGN(JsonValue status, StatusJson(serve->http_port()));
  const JsonValue* stored_file = status.Find("stored_file");
  ASSERT_NE(stored_file, nullptr);
  EXPECT_TRUE(absl::StartsWith(stored_file->text, "era-1/")) << stored_file->text;
  EXPECT_TRUE(absl::StrContains(serve->Stderr(), "following")) << serve->StderrTail();
  // The switch is counted and dated in /status, /metrics and SHOW SLAVE
  // STATUS (the stranger above was refused: not a switch).
  const JsonValue* switches = status.Find("source_switches");
  ASSERT_NE(switches, nullptr);
  EXPECT_EQ(switches->text, "1");
  const JsonValue* when = status.Find("last_source_switch");
  ASSERT_NE(when, nullptr);
  EXPECT_FALSE(when->text.empty());
  EXPECT_EQ(SlaveStatusColumn(Admin(*serve), "Binrelay_Source_Switches"), "1");
  // Now the standby's files are stored: the primary is no longer Current
  // (the standby is not a listed candidate, so no row is).
  EXPECT_EQ(CurrentRelaySource(Admin(*serve)), "");

  // By file and position: a name both sources gave a file is ambiguous
  // (refused, naming GTID and the era-qualified name); the era-qualified
  // name is read, and the stream names the file as its source did.
  protocol::ConnectOptions repl = Admin(*serve);
  repl.user = kReplUser;
  repl.password = kReplPassword;
  const std::vector<std::string> setup = {"SET @master_binlog_checksum = 'CRC32'",
                                          "SET @source_binlog_checksum = 'CRC32'"};
  BR_ASSERT_OK_AND_ASSIGN(
      DumpCapture ambiguous,
      CaptureDump(repl, {"ambiguous", setup,
                         replication::BuildBinlogDump(7777, primary_files.front(), 4,
                                                      replication::kDumpNonBlock)}));
  ASSERT_TRUE(ambiguous.error.has_value()) << ambiguous.Describe();
  EXPECT_TRUE(absl::StrContains(ambiguous.error->message, "GTID")) << ambiguous.Describe();
  EXPECT_TRUE(absl::StrContains(ambiguous.error->message, "era-1/")) << ambiguous.Describe();
  BR_ASSERT_OK_AND_ASSIGN(
      DumpCapture qualified,
      CaptureDump(repl, {"era-qualified", setup,
                         replication::BuildBinlogDump(7777, "era-1/" + primary_files.front(), 4,
                                                      replication::kDumpNonBlock)}));
  EXPECT_FALSE(qualified.error.has_value()) << qualified.Describe();
  ASSERT_GT(qualified.events.size(), 2u) << qualified.Describe();
  // The first event is the fake ROTATE: its name, after the 19-byte header
  // and the 8-byte position, is the source's (a CRC32 may follow).
  EXPECT_TRUE(absl::StrContains(qualified.events[0].substr(19 + 8), primary_files.front()));
  EXPECT_FALSE(absl::StrContains(qualified.events[0], "era-1")) << qualified.Describe();

  // A new address of the standby (a proxy in front of it), by position: it
  // lasts across a restart, which follows the era's recorded address (not
  // the standby's old one, nor [source] host).
  FaultProxy::Options po;
  po.upstream_port = standby->Port();
  po.min_bytes = po.max_bytes = uint64_t{1} << 60;  // forwards cleanly
  BR_ASSERT_OK_AND_ASSIGN(auto proxy, FaultProxy::Start(po));
  BR_ASSERT_OK(admin.Query("STOP SLAVE").status());
  BR_ASSERT_OK(
      admin.Query(absl::StrCat("CHANGE MASTER TO MASTER_PORT = ", proxy->port())).status());
  BR_ASSERT_OK(admin.Query("START SLAVE").status());
  BR_ASSERT_OK(standby->Execute("INSERT INTO app.t VALUES (71, 'e')"));
  BR_ASSERT_OK(WaitStoreReached(*serve, *standby, seconds(60)).status());
  BR_ASSERT_OK(serve->Stop());
  BR_ASSERT_OK(serve->Start());
  EXPECT_EQ(SlaveStatusColumn(Admin(*serve), "Master_Port"), absl::StrCat(proxy->port()))
      << serve->StderrTail();
  BR_ASSERT_OK(standby->Execute("INSERT INTO app.t VALUES (72, 'f')"));
  BR_ASSERT_OK(WaitStoreReached(*serve, *standby, seconds(60)).status()) << serve->StderrTail();
  EXPECT_GT(proxy->connections(), 1u);  // before the restart and after it
  EXPECT_FALSE(std::filesystem::exists(serve->store_dir() + "/era-2")) << serve->StderrTail();
}

// Guards the automatic switch: binrelay must not follow the standby while it
// is read-only (a replica not yet promoted), must follow it once it takes
// writes, and a GTID replica of binrelay ends equal to it.
TEST_P(ServeFailoverTest, LostPrimaryIsFollowedToTheStandbyOnceItTakesWrites) {
  BINRELAY_REQUIRE_FLAVOUR(GetParam());
  BR_ASSERT_OK_AND_ASSIGN(Topology topology,
                          StartTopology(GetParam(), {.standby_args = {"--read-only=1"},
                                                     .failover_after = "1s"}));
  const bool my = topology.mysql;
  auto& standby = topology.standby;
  auto& serve = topology.serve;
  topology.primary->Stop(seconds(0));
  // Lost for longer than failover_after, but the only candidate is read-only.
  std::string refusal;
  for (int i = 0; i < 100 && !absl::StrContains(refusal, "read-only"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    refusal = LastIoError(Admin(*serve));
  }
  EXPECT_TRUE(absl::StrContains(refusal, "read-only")) << refusal << serve->StderrTail();
  BR_ASSERT_OK_AND_ASSIGN(JsonValue before, StatusJson(serve->http_port()));
  ASSERT_NE(before.Find("source_switches"), nullptr);
  EXPECT_EQ(before.Find("source_switches")->text, "0");

  // Promoted: binrelay follows it by itself.
  BR_ASSERT_OK(Promote(*standby, my));
  for (int i = 41; i <= 60; ++i) {
    BR_ASSERT_OK(standby->Execute(absl::StrCat("INSERT INTO app.t VALUES (", i, ", 'c')")));
  }
  BR_ASSERT_OK(WaitStoreReached(*serve, *standby, seconds(60)).status());
  BR_ASSERT_OK(WaitReplicaExecuted(*topology.replica, *standby, seconds(60)));
  EXPECT_EQ(Count(*topology.replica, "app.t"), 60);
  BR_ASSERT_OK_AND_ASSIGN(JsonValue after, StatusJson(serve->http_port()));
  EXPECT_EQ(after.Find("source_switches")->text, "1");
  EXPECT_TRUE(absl::StrContains(serve->Stderr(), "following 127.0.0.1:")) << serve->StderrTail();
}

// Guards the choice between two servers that both take writes after the
// primary dies (a split brain, or a promotion not finished): following
// either could serve a history the other contradicts, so binrelay must
// follow neither, say which two in SHOW SLAVE STATUS and /status, keep
// what it stored and keep serving it; once one is made read-only it must
// follow the other, and its replica end equal to that one.
TEST_P(ServeFailoverTest, TwoWritableCandidatesAreRefusedUntilOneIsReadOnly) {
  BINRELAY_REQUIRE_FLAVOUR(GetParam());
  BR_ASSERT_OK_AND_ASSIGN(Topology topology,
                          StartTopology(GetParam(), {.failover_after = "1s",
                                                     .second_standby = true}));
  const bool my = topology.mysql;
  auto& standby = topology.standby;
  auto& standby2 = topology.standby2;
  auto& serve = topology.serve;
  BR_ASSERT_OK_AND_ASSIGN(JsonValue before, StatusJson(serve->http_port()));
  ASSERT_NE(before.Find("stored_offset"), nullptr);
  const std::string stored_before =
      absl::StrCat(before.Find("stored_file")->text, ":", before.Find("stored_offset")->text);
  topology.primary->Stop(seconds(0));
  // Both standbys are writable (read_only = OFF, as a replica may well be).
  std::string refusal;
  for (int i = 0; i < 150 && !absl::StrContains(refusal, "take writes"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    refusal = LastIoError(Admin(*serve));
  }
  EXPECT_TRUE(absl::StrContains(refusal, "2 candidates take writes")) << refusal
                                                                       << serve->StderrTail();
  EXPECT_TRUE(absl::StrContains(refusal, absl::StrCat("127.0.0.1:", standby->Port()))) << refusal;
  EXPECT_TRUE(absl::StrContains(refusal, absl::StrCat("127.0.0.1:", standby2->Port())))
      << refusal;
  EXPECT_TRUE(absl::StrContains(refusal, "read_only = ON")) << refusal;  // what to do
  BR_ASSERT_OK_AND_ASSIGN(JsonValue refused, StatusJson(serve->http_port()));
  ASSERT_NE(refused.Find("last_error"), nullptr);
  EXPECT_TRUE(absl::StrContains(refused.Find("last_error")->text, "take writes"))
      << refused.Find("last_error")->text;
  EXPECT_EQ(refused.Find("source_switches")->text, "0");
  EXPECT_EQ(absl::StrCat(refused.Find("stored_file")->text, ":",
                         refused.Find("stored_offset")->text),
            stored_before);
  EXPECT_FALSE(std::filesystem::exists(serve->store_dir() + "/era-1"));
  // Still serving what it stored: a new replica reads it all.
  ReplicaOptions late;
  late.flavour = GetParam();
  late.mode = ReplicaOptions::Mode::kGtidSlavePos;
  late.server_id = 8;
  late.extra = my ? "GET_SOURCE_PUBLIC_KEY=1" : "";
  BR_ASSERT_OK_AND_ASSIGN(auto late_replica,
                          StartReplicaOf(ReplicaEndpoint(*serve, *topology.primary), late));
  for (int i = 0; i < 600 && Count(*late_replica, "app.t") < 40; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(Count(*late_replica, "app.t"), 40);

  // The second is fenced (read-only): the first is followed.
  BR_ASSERT_OK(standby2->Execute("SET GLOBAL read_only = 1"));
  BR_ASSERT_OK(Promote(*standby, my, /*writable=*/false));
  for (int i = 41; i <= 60; ++i) {
    BR_ASSERT_OK(standby->Execute(absl::StrCat("INSERT INTO app.t VALUES (", i, ", 'c')")));
  }
  BR_ASSERT_OK(WaitStoreReached(*serve, *standby, seconds(60)).status()) << serve->StderrTail();
  BR_ASSERT_OK(WaitReplicaExecuted(*topology.replica, *standby, seconds(60)));
  EXPECT_EQ(Count(*topology.replica, "app.t"), 60);
  BR_ASSERT_OK_AND_ASSIGN(JsonValue after, StatusJson(serve->http_port()));
  EXPECT_EQ(after.Find("source_switches")->text, "1");
  EXPECT_TRUE(absl::StrContains(serve->Stderr(), absl::StrCat("following 127.0.0.1:",
                                                              standby->Port())))
      << serve->StderrTail();
}

// A target for a move of mv.t (with the mover's account), and what the
// primary runs first (so the standby replicates it): mv.t with `rows`
// rows, and binrelay's account allowed what a move does on the source
// (copy, checksum under a brief LOCK TABLES on MySQL, XA RECOVER: MySQL's
// XA_RECOVER_ADMIN, rename).
struct MoveSetup {
  std::unique_ptr<ServerSandbox> target;
  std::vector<std::string> primary_sql;
  // binrelay's [move.mv] section, with `extra` lines.
  std::string Config(const std::string& extra) const {
    return absl::StrCat("[move.mv]\ntarget_host = 127.0.0.1\ntarget_port = ", target->Port(),
                        "\ntarget_user = ", kMover, "\ntarget_password = ", kMoverPassword,
                        "\ntables = mv.t\n", extra);
  }
  // A topology whose primary has mv.t, binrelay running the move (with
  // `extra` lines) and following the read-only standby once it is writable.
  TopologyOptions TopologyFor(const std::string& extra) const {
    return {.standby_args = {"--read-only=1"},
            .failover_after = "1s",
            .primary_setup = primary_sql,
            .serve_extra_config = Config(extra)};
  }
};

absl::StatusOr<MoveSetup> PrepareMove(const std::string& flavour_name, int rows) {
  BR_ASSIGN_OR_RETURN(ServerFlavour flavour, ServerFlavour::Find(flavour_name));
  MoveSetup m;
  ServerSandboxOptions to;
  to.flavour = flavour_name;
  to.server_id = 7;
  BR_ASSIGN_OR_RETURN(m.target, ServerSandbox::Start(to));
  BR_RETURN_IF_ERROR(m.target->CreateUser(kMover, kMoverPassword, "ALL PRIVILEGES"));
  m.primary_sql = {
      absl::StrCat("GRANT SELECT, LOCK TABLES, ALTER, DROP, CREATE, INSERT ON *.* TO '",
                   kRelayUser, "'@'%'"),
      "CREATE DATABASE mv", "CREATE TABLE mv.t (id INT PRIMARY KEY, v VARCHAR(64))"};
  if (flavour.mysql) {
    m.primary_sql.push_back(
        absl::StrCat("GRANT XA_RECOVER_ADMIN ON *.* TO '", kRelayUser, "'@'%'"));
  }
  for (int from = 1; from <= rows; from += 500) {
    std::vector<std::string> values;
    for (int id = from; id < from + 500 && id <= rows; ++id) {
      values.push_back(absl::StrCat("(", id, ", 'a')"));
    }
    m.primary_sql.push_back("INSERT INTO mv.t VALUES " + absl::StrJoin(values, ","));
  }
  return m;
}

// The phase of binrelay's (only) move in /status, with its error if any
// ("" until it is listed).
std::string MovePhase(const ServeProcess& serve) {
  auto json = StatusJson(serve.http_port());
  const JsonValue* list = json.ok() ? json->Find("moves") : nullptr;
  if (list == nullptr || list->array.empty()) return "";
  const JsonValue* phase = list->array[0].Find("phase");
  const JsonValue* error = list->array[0].Find("error");
  std::string out = phase ? phase->text : "";
  if (error && !error->text.empty()) absl::StrAppend(&out, ": ", error->text);
  return out;
}

// A digest of `table`'s rows (id, v) that both flavours compute alike.
std::string RowsDigest(ServerSandbox& sb, const std::string& table) {
  auto rows = sb.Query(absl::StrCat("SELECT COUNT(*), COALESCE(SUM(CRC32(CONCAT_WS(',', id, v))), 0) "
                                    "FROM ", table));
  if (!rows.ok() || rows->empty()) return absl::StrCat("unreadable: ", rows.status().message());
  return absl::StrCat((*rows)[0][0].value_or("NULL"), "/", (*rows)[0][1].value_or("NULL"));
}

// Guards a move that outlives its source: copied and verified on the old
// primary, it must go on applying across the switch to the promoted
// standby (no change lost or applied twice), and cut over there, where the
// tables live now: locking, reading the position of and renaming the
// standby's tables, the position named in the store's new era. A move
// that kept [source] host would lock a dead server forever; one that read
// the standby's position as the old era's would wait for a position the
// store never reaches, or cut over early.
TEST_P(ServeFailoverTest, MoveReadyBeforeTheFailoverCutsOverOnThePromotedStandby) {
  BINRELAY_REQUIRE_FLAVOUR(GetParam());
  BR_ASSERT_OK_AND_ASSIGN(MoveSetup move, PrepareMove(GetParam(), 2000));
  BR_ASSERT_OK_AND_ASSIGN(
      Topology topology,
      StartTopology(GetParam(),
                    move.TopologyFor("cutover = manual\nchunk_time = 20ms\nflush_interval = 100ms\n")));
  auto& primary = topology.primary;
  auto& standby = topology.standby;
  auto& serve = topology.serve;
  auto& target = move.target;
  auto move_phase = [&serve] { return MovePhase(*serve); };
  auto wait_phase = [&](const std::string& want, seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string phase;
    while (std::chrono::steady_clock::now() < deadline) {
      phase = move_phase();
      if (absl::StartsWith(phase, want) || absl::StartsWith(phase, "error")) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return phase;
  };
  // Writes on the primary while the move copies and waits for its cutover.
  int next_id = 2001;
  auto write = [&next_id](ServerSandbox& sb, int n) -> absl::Status {
    for (int i = 0; i < n; ++i, ++next_id) {
      BR_RETURN_IF_ERROR(
          sb.Execute(absl::StrCat("INSERT INTO mv.t VALUES (", next_id, ", 'w')")));
      BR_RETURN_IF_ERROR(sb.Execute(absl::StrCat("UPDATE mv.t SET v = 'u", next_id,
                                                 "' WHERE id = ", next_id % 2000 + 1)));
      if (next_id % 7 == 0) {
        BR_RETURN_IF_ERROR(
            sb.Execute(absl::StrCat("DELETE FROM mv.t WHERE id = ", next_id % 1999 + 1)));
      }
    }
    return absl::OkStatus();
  };
  BR_ASSERT_OK(write(*primary, 100));
  ASSERT_EQ(wait_phase("ready for cutover", seconds(120)), "ready for cutover")
      << serve->StderrTail(40);
  BR_ASSERT_OK(write(*primary, 100));
  BR_ASSERT_OK(KillPrimaryAndPromote(topology));
  BR_ASSERT_OK(write(*standby, 100));
  BR_ASSERT_OK(WaitStoreReached(*serve, *standby, seconds(60)).status()) << serve->StderrTail();
  EXPECT_EQ(move_phase(), "ready for cutover");

  replication::ConnectionSqlSource admin(Admin(*serve));
  BR_ASSERT_OK(admin.Query("CUTOVER MOVE mv").status());
  const std::string done = wait_phase("done", seconds(120));
  ASSERT_EQ(done, "done") << serve->StderrTail(40);
  // The standby's table was renamed (the old primary is dead), and the
  // target holds exactly its rows: those written before the switch and
  // after it.
  const std::string moved = RowsDigest(*target, "mv.t");
  EXPECT_EQ(moved, RowsDigest(*standby, "mv.t_old"));
  EXPECT_FALSE(absl::StartsWith(moved, "unreadable")) << moved;
  std::printf("[move across failover %s] target rows/crc %s\n", GetParam().c_str(), moved.c_str());
  auto max_id = target->Query("SELECT MAX(id) FROM mv.t");
  ASSERT_TRUE(max_id.ok()) << max_id.status();
  EXPECT_EQ((*max_id)[0][0].value_or(""), absl::StrCat(next_id - 1));
  BR_ASSERT_OK_AND_ASSIGN(JsonValue after, StatusJson(serve->http_port()));
  EXPECT_EQ(after.Find("source_switches")->text, "1");
}

// Guards a move whose copy spans the failover: the first chunk copied from
// the old primary, the rest from the promoted standby, with changes on
// both sides of the switch to keys already copied and not yet copied. A
// copy that keeps reading through its connection to the dead primary, or
// gives up on it, leaves the move failed; one that mixes the two servers'
// states wrongly leaves the target different from the standby at the
// cutover (or needs the checksum to repair it).
TEST_P(ServeFailoverTest, MoveCopyingAcrossTheFailoverCutsOverEqualToThePromotedStandby) {
  BINRELAY_REQUIRE_FLAVOUR(GetParam());
  BR_ASSERT_OK_AND_ASSIGN(MoveSetup move, PrepareMove(GetParam(), 5000));
  // The move's test hook holds the copy before each of its first two
  // chunks until the test releases it.
  const std::string holds = absl::StrCat(::testing::TempDir(), "/binrelay-failover-holds-",
                                         GetParam(), "-", getpid());
  std::filesystem::remove_all(holds);
  std::filesystem::create_directories(holds);
  BR_ASSERT_OK_AND_ASSIGN(
      Topology topology,
      StartTopology(GetParam(), move.TopologyFor(absl::StrCat(
                                    "copy_threads = 1\nflush_interval = 100ms\ntest_hold_dir = ",
                                    holds, "\n"))));
  auto& primary = topology.primary;
  auto& standby = topology.standby;
  auto& serve = topology.serve;
  auto& target = move.target;
  auto logged = [&serve](const std::string& text) {
    for (int i = 0; i < 600; ++i) {
      if (absl::StrContains(serve->Stderr(), text)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  };
  auto release = [&holds](const std::string& point) {
    std::FILE* f = std::fopen((holds + "/" + point).c_str(), "w");
    if (f != nullptr) std::fclose(f);
  };
  // Changes to keys of the first chunk (1..1000 or so) and of later ones.
  auto change = [](ServerSandbox& sb, int round) -> absl::Status {
    for (int i = 0; i < 50; ++i) {
      const int low = 1 + (round * 50 + i) % 900;
      const int high = 2000 + (round * 50 + i) * 7 % 3000;
      BR_RETURN_IF_ERROR(sb.Execute(absl::StrCat("UPDATE mv.t SET v = 'r", round, "' WHERE id IN (",
                                                 low, ", ", high, ")")));
      if (i % 10 == 0) {
        BR_RETURN_IF_ERROR(
            sb.Execute(absl::StrCat("DELETE FROM mv.t WHERE id IN (", low + 1, ", ", high + 1, ")")));
        BR_RETURN_IF_ERROR(sb.Execute(absl::StrCat("INSERT INTO mv.t VALUES (",
                                                   10000 + round * 100 + i, ", 'n')")));
      }
    }
    return absl::OkStatus();
  };
  ASSERT_TRUE(logged("held at dispatch 1")) << serve->StderrTail(30);
  BR_ASSERT_OK(change(*primary, 0));
  release("dispatch 1");
  ASSERT_TRUE(logged("held at dispatch 2")) << serve->StderrTail(30);
  BR_ASSERT_OK(change(*primary, 1));
  BR_ASSERT_OK(KillPrimaryAndPromote(topology));
  BR_ASSERT_OK(change(*standby, 2));
  BR_ASSERT_OK(WaitStoreReached(*serve, *standby, seconds(60)).status()) << serve->StderrTail();
  release("dispatch 2");
  std::string phase;
  for (int i = 0; i < 300; ++i) {
    phase = MovePhase(*serve);
    if (phase == "done" || absl::StartsWith(phase, "error")) break;
    if (i == 50) {
      // Changes on the new primary while the copy goes on.
      BR_ASSERT_OK(change(*standby, 3));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(phase, "done") << serve->StderrTail(40);
  const std::string moved = RowsDigest(*target, "mv.t");
  EXPECT_EQ(moved, RowsDigest(*standby, "mv.t_old"));
  EXPECT_FALSE(absl::StartsWith(moved, "unreadable")) << moved;
  BR_ASSERT_OK_AND_ASSIGN(JsonValue after, StatusJson(serve->http_port()));
  EXPECT_EQ(after.Find("source_switches")->text, "1");
  const JsonValue* moves = after.Find("moves");
  ASSERT_NE(moves, nullptr);
  ASSERT_FALSE(moves->array.empty());
  const JsonValue* differing = moves->array[0].Find("chunks_differing");
  std::printf("[move copy across failover %s] target rows/crc %s, chunks differing %s\n",
              GetParam().c_str(), moved.c_str(), differing ? differing->text.c_str() : "?");
  std::filesystem::remove_all(holds);
}

// Guards a switch to a candidate that vanishes part way (its connections
// reset or dropped during the probe, the search for the switch point, the
// preflight and the dump): a second era begun for the same server, a
// transaction stored twice or lost, or binrelay giving up on it.
TEST_P(ServeFailoverTest, CandidateDroppingConnectionsMidSwitchIsFollowedWithoutAGap) {
  BINRELAY_REQUIRE_FLAVOUR(GetParam());
  BR_ASSERT_OK_AND_ASSIGN(Topology topology,
                          StartTopology(GetParam(), {.failover_after = "1s",
                                                     .faulty_candidate = true}));
  const bool my = topology.mysql;
  auto& standby = topology.standby;
  auto& serve = topology.serve;
  topology.primary->Stop(seconds(0));
  // binrelay restarts meanwhile: the switch is then made by its first
  // connection of the run, whose start is resolved from the store.
  BR_ASSERT_OK(serve->Stop());
  BR_ASSERT_OK(serve->Start());
  BR_ASSERT_OK(Promote(*standby, my, /*writable=*/false));
  // Rows written while the switch is under way, and long enough ones that
  // the dump through the proxy meets its faults too.
  for (int i = 41; i <= 60; ++i) {
    BR_ASSERT_OK(standby->Execute(
        absl::StrCat("INSERT INTO app.t VALUES (", i, ", REPEAT('c', 64))")));
    BR_ASSERT_OK(standby->Execute(absl::StrCat("UPDATE app.t SET v = REPEAT('e', 60) WHERE id = ",
                                               i - 40)));
  }
  BR_ASSERT_OK(WaitStoreReached(*serve, *standby, seconds(90)).status()) << serve->StderrTail();
  BR_ASSERT_OK(WaitReplicaExecuted(*topology.replica, *standby, seconds(60)));
  EXPECT_EQ(Count(*topology.replica, "app.t"), 60);
  BR_ASSERT_OK_AND_ASSIGN(auto replica_sums, ChecksumAllTables(*topology.replica, "app"));
  BR_ASSERT_OK_AND_ASSIGN(auto standby_sums, ChecksumAllTables(*standby, "app"));
  EXPECT_EQ(replica_sums, standby_sums);
  EXPECT_GT(topology.candidate_proxy->faults(), 0u) << "no fault was injected";
  EXPECT_FALSE(std::filesystem::exists(serve->store_dir() + "/era-2")) << serve->StderrTail();
  BR_ASSERT_OK_AND_ASSIGN(JsonValue after, StatusJson(serve->http_port()));
  EXPECT_EQ(after.Find("source_switches")->text, "1") << serve->StderrTail();
  std::printf("[candidate faults %s] %llu faults over %llu connections\n", GetParam().c_str(),
              static_cast<unsigned long long>(topology.candidate_proxy->faults()),
              static_cast<unsigned long long>(topology.candidate_proxy->connections()));
}

INSTANTIATE_TEST_SUITE_P(Flavours, ServeFailoverTest, ::testing::ValuesIn(ServerFlavour::All()),
                         FlavourTestName<::testing::TestParamInfo<std::string>>);

}  // namespace
}  // namespace binrelay::testing
