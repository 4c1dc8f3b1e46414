// RelayAdmin over a real BinlogStore fed with recorded binlogs, driven
// through AnswerQuery with the SQL replicas, mysqlbinlog and operators send.
// Expected values come from the fixtures' event walk (INDEX.md and the
// offsets/GTIDs listed next to each test), not from the code under test.
#include "proxy/relay_admin.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "protocol/server_error.h"
#include "proxy/admin_responder.h"
#include "replication/binlog_store.h"
#include "tests/harness/binlog_fixtures.h"
#include "tests/harness/fixtures.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/temp_dir.h"
#include "tests/harness/store_feed.h"

namespace binrelay::proxy {
namespace {

namespace fs = std::filesystem;
using replication::BinlogStore;
using testing::FeedBinlogFile;
using testing::FixturePath;
using testing::ReadFileOrDie;

constexpr uint32_t kServerId = 4242;
constexpr char kRelayUuid[] = "0e0b5c1a-4f5e-4d3c-9b2a-1a2b3c4d5e6f";


class FixedStatus : public StatusProvider {
 public:
  RelayStatus Snapshot() const override { return status; }
  RelayStatus status;
};

class RelayAdminTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTestTempDir("relay_admin"); }
  void TearDown() override {
    admin_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }

  void OpenStore(replication::BinlogStoreOptions o = {}) {
    auto s = BinlogStore::Open(dir_, std::move(o));
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = *std::move(s);
  }
  void NewAdmin(const StatusProvider* status = nullptr, std::string version = "8.0.36-binrelay") {
    RelayAdminOptions o;
    o.server_id = kServerId;
    o.server_uuid = kRelayUuid;
    o.version = std::move(version);
    admin_ = std::make_unique<RelayAdmin>(store_.get(), status, o);
  }
  void Feed(const char* fixture, const std::string& name) {
    BR_ASSERT_OK(FeedBinlogFile(ReadFileOrDie(FixturePath(fixture)), name, 4, *store_));
  }
  void StoreMysql() {
    OpenStore();
    Feed(testing::kMysqlBinlog1, "binlog.000001");
    Feed(testing::kMysqlBinlog2, "binlog.000002");
    NewAdmin();
  }

  AdminReply Ask(std::string_view sql) {
    AdminContext ctx;
    ctx.handler = admin_.get();
    ctx.version = "8.0.36-binrelay";
    ctx.session = &session_;
    return AnswerQuery(sql, ctx);
  }
  // The single value of a one-row, one-column answer; "<error N: msg>" else.
  std::optional<std::string> Value(std::string_view sql) {
    AdminReply r = Ask(sql);
    if (r.kind == AdminReply::Kind::kError) {
      return absl::StrCat("<error ", r.error_code, ": ", r.message, ">");
    }
    if (r.result.rows.size() != 1 || r.result.rows[0].size() != 1) return "<bad shape>";
    return r.result.rows[0][0];
  }
  // SHOW VARIABLES LIKE: the Value column, or "<no row>".
  std::string ShowVariable(std::string_view name) {
    AdminReply r = Ask(absl::StrCat("SHOW VARIABLES LIKE '", AV(name), "'"));
    if (r.kind != AdminReply::Kind::kResultSet || r.result.rows.size() != 1) return "<no row>";
    return r.result.rows[0][1].value_or("NULL");
  }

  std::string dir_;
  std::unique_ptr<BinlogStore> store_;
  std::unique_ptr<RelayAdmin> admin_;
  SessionState session_;
};

// Guards: a MySQL 8 replica's handshake questions answered from the wrong
// flavour or a stale GTID state (gtid_mode OFF would stop an auto-position
// replica; a wrong gtid_executed would make it skip or repeat transactions).
TEST_F(RelayAdminTest, MysqlReplicaQuestionsAreAnsweredFromTheStoredStream) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  StoreMysql();
  EXPECT_EQ(Value("SELECT @@GLOBAL.SERVER_ID"), "4242");
  EXPECT_EQ(Value("SELECT @@GLOBAL.SERVER_UUID"), kRelayUuid);
  EXPECT_EQ(ShowVariable("SERVER_UUID"), kRelayUuid);
  EXPECT_EQ(Value("SELECT @@GLOBAL.GTID_MODE"), "ON");
  EXPECT_EQ(Value("SELECT @@global.rpl_semi_sync_source_enabled"), "0");
  EXPECT_EQ(Value("SELECT @@global.gtid_executed"), absl::StrCat(testing::kMysqlBinlogUuid, ":1-6"));
  // binlog.000001 opens with an empty PREVIOUS_GTIDS: nothing is purged yet.
  EXPECT_EQ(Value("SELECT @@global.gtid_purged"), "");
  EXPECT_EQ(Value("SELECT @@gtid_binlog_pos"), "");  // a MariaDB variable
  // The checksum handshake: the replica copies @@global.binlog_checksum.
  EXPECT_EQ(Ask("SET @master_binlog_checksum = @@global.binlog_checksum, "
                "@source_binlog_checksum = @@global.binlog_checksum")
                .kind,
            AdminReply::Kind::kOk);
  EXPECT_EQ(Value("SELECT @source_binlog_checksum"), "CRC32");
  EXPECT_EQ(Value("select @@version_comment limit 1"), "binrelay");
  EXPECT_EQ(Value("SELECT @@max_allowed_packet"), "67108864");
}

// Guards: MariaDB replica questions (GTID mode needs gtid_domain_id; the
// connect state comes from gtid_binlog_pos/gtid_current_pos).
TEST_F(RelayAdminTest, MariaDbReplicaQuestionsAreAnsweredFromTheStoredStream) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMariaBinlog);
  OpenStore();
  Feed(testing::kMariaBinlog, "mariadb-bin.000001");
  NewAdmin(nullptr, "5.5.5-10.11.0-binrelay");
  EXPECT_EQ(ShowVariable("SERVER_ID"), "4242");
  EXPECT_EQ(Value("SELECT @@GLOBAL.gtid_domain_id"), "0");
  EXPECT_EQ(Value("SELECT @@GLOBAL.gtid_binlog_pos"), "0-1-2");
  EXPECT_EQ(Value("SELECT @@gtid_current_pos"), "0-1-2");
  EXPECT_EQ(Value("SELECT @@global.gtid_executed"), "");
  EXPECT_EQ(Value("SELECT @@global.gtid_purged"), "");
  EXPECT_EQ(Value("SELECT @@GLOBAL.GTID_MODE"), "OFF");
  EXPECT_EQ(Value("SELECT @@global.binlog_checksum"), "CRC32");
  EXPECT_EQ(ShowVariable("rpl_semi_sync_master_enabled"), "OFF");
}

// Guards: binlog_checksum taken from a default instead of the source's FDE
// (a NONE source announced as CRC32 makes replicas reject every event).
TEST_F(RelayAdminTest, ChecksumNoneComesFromTheStoredFde) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMaria10Binlog);
  OpenStore();
  Feed(testing::kMaria10Binlog, "mysql-bin.07");
  NewAdmin();
  EXPECT_EQ(Value("SELECT @@global.binlog_checksum"), "NONE");
  EXPECT_EQ(Value("SELECT @@gtid_binlog_pos"), "0-3704-2816");
}

// Guards: an empty store answering with made-up positions.
TEST_F(RelayAdminTest, EmptyStoreHasNoPositionsAndDefaultsToCrc32) {
  OpenStore();
  NewAdmin(nullptr, "5.5.5-10.11.0-binrelay");
  EXPECT_EQ(Value("SELECT @@global.binlog_checksum"), "CRC32");
  EXPECT_EQ(Value("SELECT @@GLOBAL.gtid_binlog_pos"), "");
  AdminReply status = Ask("SHOW MASTER STATUS");
  ASSERT_EQ(status.kind, AdminReply::Kind::kResultSet);
  EXPECT_EQ(status.result.columns.size(), 4u);  // MariaDB flavour from the version
  EXPECT_TRUE(status.result.rows.empty());
  EXPECT_TRUE(Ask("SHOW BINARY LOGS").result.rows.empty());
  EXPECT_EQ(Value("SELECT binlog_gtid_pos('mariadb-bin.000001', 4)"), std::nullopt);
}

// Guards: unknown variables answered with a value (replicas rely on 1193 to
// detect optional features) and operator overrides not taking precedence.
TEST_F(RelayAdminTest, UnknownVariableIs1193AndOverridesWin) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  StoreMysql();
  AdminReply r = Ask("SELECT @@global.no_such_variable");
  ASSERT_EQ(r.kind, AdminReply::Kind::kError);
  EXPECT_EQ(r.error_code, protocol::server_error::kUnknownSystemVariable);
  admin_->SetVariable("gtid_mode", "ON_PERMISSIVE");
  admin_->SetVariable("binlog_row_image", "FULL");
  EXPECT_EQ(Value("SELECT @@GLOBAL.GTID_MODE"), "ON_PERMISSIVE");
  EXPECT_EQ(ShowVariable("binlog_row_image"), "FULL");
  admin_->SetVariable("gtid_mode", std::nullopt);
  EXPECT_EQ(Value("SELECT @@GLOBAL.GTID_MODE"), "ON");
}

// Guards: SHOW MASTER STATUS at a position that is not the committed end, or
// without MySQL's Executed_Gtid_Set (binrelay's own client reads it).
TEST_F(RelayAdminTest, MasterStatusIsTheCommittedEnd) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  StoreMysql();
  AdminReply r = Ask("SHOW MASTER STATUS");
  ASSERT_EQ(r.kind, AdminReply::Kind::kResultSet);
  EXPECT_EQ(r.result.columns, (std::vector<std::string>{"File", "Position", "Binlog_Do_DB",
                                                        "Binlog_Ignore_DB",
                                                        "Executed_Gtid_Set"}));
  ASSERT_EQ(r.result.rows.size(), 1u);
  EXPECT_EQ(r.result.rows[0], (protocol::TextRow{"binlog.000002", "847", "", "",
                                                 absl::StrCat(testing::kMysqlBinlogUuid, ":1-6")}));
  EXPECT_EQ(Ask("show binary log status;").result.rows, r.result.rows);
}

TEST_F(RelayAdminTest, MariaDbMasterStatusHasFourColumns) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMariaBinlog);
  OpenStore();
  Feed(testing::kMariaBinlog, "mariadb-bin.000001");
  NewAdmin();  // the MySQL-style greeting does not matter: the source is MariaDB
  AdminReply r = Ask("SHOW MASTER STATUS");
  ASSERT_EQ(r.result.rows.size(), 1u);
  EXPECT_EQ(r.result.columns.size(), 4u);
  EXPECT_EQ(r.result.rows[0], (protocol::TextRow{"mariadb-bin.000001", "1074", "", ""}));
}

// Guards: a file listed with bytes that are not durable yet (a replica could
// ask for a position the store may still lose).
TEST_F(RelayAdminTest, BinaryLogsListOnlyDurableBytes) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  replication::BinlogStoreOptions lazy;
  lazy.sync = replication::SyncPolicy::kInterval;
  lazy.sync_interval = std::chrono::hours(1);  // nothing is published unless flushed
  OpenStore(lazy);
  Feed(testing::kMysqlBinlog1, "binlog.000001");  // its ROTATE closes and publishes it
  std::string part = ReadFileOrDie(FixturePath(testing::kMysqlBinlog2)).substr(0, 529);
  BR_ASSERT_OK(FeedBinlogFile(part, "binlog.000002", 4, *store_));
  NewAdmin();
  AdminReply r = Ask("SHOW BINARY LOGS");
  ASSERT_EQ(r.kind, AdminReply::Kind::kResultSet);
  EXPECT_EQ(r.result.columns, (std::vector<std::string>{"Log_name", "File_size", "Encrypted"}));
  EXPECT_EQ(r.result.rows, (std::vector<protocol::TextRow>{{"binlog.000001", "1516", "No"}}));
  EXPECT_EQ(Value("SELECT binlog_gtid_pos('binlog.000002', 197)"), std::nullopt);
  BR_ASSERT_OK(store_->Flush());
  r = Ask("SHOW MASTER LOGS");
  EXPECT_EQ(r.result.rows, (std::vector<protocol::TextRow>{{"binlog.000001", "1516", "No"},
                                                           {"binlog.000002", "529", "No"}}));
}

// Guards: SHOW SLAVE HOSTS keeping replicas whose dump ended, dropping one
// that reconnected before its old connection ended, or showing master_id 0.
TEST_F(RelayAdminTest, ReplicasAppearWhileConnected) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  StoreMysql();
  ReplicaRegistration a{11, "10.0.0.11", "repl", "", 3306, 0};
  ReplicaRegistration b{12, "", "", "", 0, 0};
  admin_->ReplicaRegistered(a);
  admin_->ReplicaRegistered(b);
  admin_->ReplicaRegistered(a);  // replica 11 reconnects; its old dump still runs
  AdminReply r = Ask("SHOW SLAVE HOSTS");
  ASSERT_EQ(r.kind, AdminReply::Kind::kResultSet);
  EXPECT_EQ(r.result.columns,
            (std::vector<std::string>{"Server_id", "Host", "Port", "Master_id"}));
  EXPECT_EQ(r.result.rows, (std::vector<protocol::TextRow>{{"11", "10.0.0.11", "3306", "4242"},
                                                           {"12", "", "0", "4242"}}));
  admin_->ReplicaDisconnected(11);  // the old connection ends
  admin_->ReplicaDisconnected(12);
  admin_->ReplicaDisconnected(99);  // never registered: ignored
  r = Ask("SHOW REPLICAS");
  EXPECT_EQ(r.result.rows, (std::vector<protocol::TextRow>{{"11", "10.0.0.11", "3306", "4242"}}));
  admin_->ReplicaDisconnected(11);
  EXPECT_TRUE(Ask("SHOW REPLICAS").result.rows.empty());
}

// Guards: SHOW RELAY STATUS columns drifting from the /status JSON keys.
TEST_F(RelayAdminTest, RelayStatusIsOneRowOfTheStatusFacts) {
  OpenStore();
  FixedStatus status;
  status.status.upstream_state = replication::UpstreamState::kStreaming;
  status.status.source = "db1:3306";
  status.status.received_file = "binlog.000002";
  status.status.received_offset = 900;
  status.status.stored_file = "binlog.000002";
  status.status.stored_offset = 847;
  status.status.seconds_behind_source = 1.25;
  status.status.events_received = 30;
  status.status.bytes_received = 2400;
  status.status.stored_bytes = 2363;
  status.status.stored_files = 2;
  status.status.reconnects = 1;
  status.status.purges = 3;
  NewAdmin(&status);
  AdminReply r = Ask("SHOW RELAY STATUS");
  ASSERT_EQ(r.kind, AdminReply::Kind::kResultSet);
  std::string json = RenderStatusJson(status.status);
  for (const std::string& c : r.result.columns) {
    EXPECT_TRUE(absl::StrContains(json, absl::StrCat("\"", c, "\":"))) << c;
  }
  ASSERT_EQ(r.result.rows.size(), 1u);
  EXPECT_EQ(r.result.rows[0],
            (protocol::TextRow{"streaming", "db1:3306", "binlog.000002", "900", "binlog.000002",
                               "847", "1.250", "30", "2400", "2363", "2", "1", "3",
                               std::nullopt, std::nullopt}));
  status.status.last_error = "lost connection";
  EXPECT_EQ(Ask("SHOW RELAY STATUS").result.rows[0][13], "lost connection");
  // One summary per apply pipeline, in the column /status calls "pipelines".
  proxy::ApplyStatus p;
  p.name = "orders";
  p.state = "caught up";
  p.flushed_file = "binlog.000002";
  p.flushed_offset = 847;
  status.status.pipelines.push_back(p);
  EXPECT_EQ(Ask("SHOW RELAY STATUS").result.rows[0][14],
            "orders: caught up, flushed binlog.000002:847, lag 0.0 s");
}

// Guards: a pipeline or move field that /status shows but SQL does not (or
// the reverse): SHOW RELAY PIPELINES and SHOW RELAY MOVES are a row per item
// and a column per field of the same description /status renders, values
// as /status prints them.
TEST_F(RelayAdminTest, RelayPipelinesAndMovesAreRowsOfTheStatusDescription) {
  OpenStore();
  FixedStatus status;
  proxy::ApplyStatus p;
  p.name = "orders";
  p.state = "running";
  p.flushed_file = "binlog.000002";
  p.flushed_offset = 847;
  p.deferred = 12;
  p.lag_seconds = 1.5;
  status.status.pipelines.push_back(p);
  proxy::MoveProgress m;
  m.name = "mv";
  m.phase = "copy";
  m.rows_copied = 900;
  m.rows_left_to_checksum = 2;
  status.status.moves.push_back(m);
  NewAdmin(&status);
  const std::string json = RenderStatusJson(status.status);
  AdminReply r = Ask("SHOW RELAY PIPELINES");
  ASSERT_EQ(r.kind, AdminReply::Kind::kResultSet) << r.message;
  ASSERT_EQ(r.result.rows.size(), 1u);
  for (size_t i = 0; i < r.result.columns.size(); ++i) {
    const std::string& c = r.result.columns[i];
    ASSERT_TRUE(r.result.rows[0][i].has_value()) << c;
    const std::string& v = *r.result.rows[0][i];
    // Text is quoted in JSON, numbers are not.
    EXPECT_TRUE(absl::StrContains(json, absl::StrCat("\"", c, "\":", v)) ||
                absl::StrContains(json, absl::StrCat("\"", c, "\":\"", v, "\"")))
        << c << " = " << v << " is not in /status: " << json;
  }
  auto col = [&](const AdminReply& reply, std::string_view name) -> std::string {
    for (size_t i = 0; i < reply.result.columns.size(); ++i) {
      if (reply.result.columns[i] == name) return reply.result.rows[0][i].value_or("NULL");
    }
    return "<no column>";
  };
  EXPECT_EQ(col(r, "deferred"), "12");
  EXPECT_EQ(col(r, "lag_seconds"), "1.500");
  EXPECT_EQ(col(r, "flushed_file"), "binlog.000002");
  AdminReply moves = Ask("SHOW RELAY MOVES");
  ASSERT_EQ(moves.kind, AdminReply::Kind::kResultSet) << moves.message;
  ASSERT_EQ(moves.result.rows.size(), 1u);
  EXPECT_EQ(col(moves, "rows_copied"), "900");
  EXPECT_EQ(col(moves, "rows_left_to_checksum"), "2");
  EXPECT_EQ(col(moves, "phase"), "copy");
}

TEST_F(RelayAdminTest, RelayStatusWithoutProviderShowsTheStore) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  StoreMysql();
  AdminReply r = Ask("SHOW RELAY STATUS");
  ASSERT_EQ(r.result.rows.size(), 1u);
  const protocol::TextRow& row = r.result.rows[0];
  EXPECT_EQ(row[0], "unknown");
  EXPECT_EQ(row[4], "binlog.000002");
  EXPECT_EQ(row[5], "847");
  EXPECT_EQ(row[9], "2363");  // 1516 + 847
  EXPECT_EQ(row[10], "2");
}

// Guards: PURGE removing the named file itself or a file a reader needs,
// accepting an unknown target silently, or not saying who keeps a file.
TEST_F(RelayAdminTest, PurgeBinaryLogsToHonoursPinsAndNamesTheConsumer) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  StoreMysql();
  // The replication user may not purge (error 1227), and nothing is removed.
  AdminReply r = Ask("PURGE BINARY LOGS TO 'binlog.000002'");
  ASSERT_EQ(r.kind, AdminReply::Kind::kError);
  EXPECT_EQ(r.error_code, kErSpecificAccessDenied);
  EXPECT_TRUE(absl::StrContains(r.message, "admin_user")) << r.message;
  EXPECT_TRUE(fs::exists(dir_ + "/binlog.000001"));
  session_.admin = true;
  r = Ask("PURGE BINARY LOGS TO 'binlog.000009'");
  ASSERT_EQ(r.kind, AdminReply::Kind::kError);
  EXPECT_EQ(r.error_code, kErUnknownTargetBinlog);
  EXPECT_TRUE(absl::StrContains(r.message, "'binlog.000009'")) << r.message;
  EXPECT_TRUE(absl::StrContains(r.message, "binlog.000001 to binlog.000002")) << r.message;
  {
    replication::StorePin pin =
        store_->Pin({"binlog.000001", 1516}, "replica 10.0.0.7:5123 server_id 7");
    r = Ask("PURGE BINARY LOGS TO 'binlog.000002'");
    ASSERT_EQ(r.kind, AdminReply::Kind::kError);
    EXPECT_EQ(r.error_code, kErLogInUse);
    EXPECT_TRUE(absl::StrContains(
        r.message, "replica 10.0.0.7:5123 server_id 7 at binlog.000001:1516 still needs"))
        << r.message;
    EXPECT_TRUE(fs::exists(dir_ + "/binlog.000001"));
  }
  r = Ask("purge master logs to 'binlog.000002'");
  EXPECT_EQ(r.kind, AdminReply::Kind::kOk) << r.message;
  EXPECT_FALSE(fs::exists(dir_ + "/binlog.000001"));
  EXPECT_TRUE(fs::exists(dir_ + "/binlog.000002"));
  EXPECT_EQ(Ask("SHOW BINARY LOGS").result.rows,
            (std::vector<protocol::TextRow>{{"binlog.000002", "847", "No"}}));
  // What is gone is now purged history: binlog.000002's PREVIOUS_GTIDS.
  EXPECT_EQ(Value("SELECT @@GLOBAL.gtid_purged"), absl::StrCat(testing::kMysqlBinlogUuid, ":1-4"));
  EXPECT_EQ(store_->purged_files(), 1u);
}

// Guards: binlog_gtid_pos counting a transaction only at its commit (MariaDB
// counts it once its GTID event is passed), accepting offsets inside an
// event, or answering for bytes past the end.
TEST_F(RelayAdminTest, BinlogGtidPosFollowsMariaDbSemantics) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMariaBinlog);
  OpenStore();
  Feed(testing::kMariaBinlog, "mariadb-bin.000001");
  NewAdmin();
  struct Case {
    uint64_t pos;
    std::optional<std::string> want;
  } cases[] = {{0, ""},         {4, ""},         {256, ""},        {285, ""},
               {330, ""},       {372, "0-1-1"},  {702, "0-1-1"},   {744, "0-1-2"},
               {1074, "0-1-2"}, {331, std::nullopt}, {1075, std::nullopt},
               {4000000000, std::nullopt}};
  for (const Case& c : cases) {
    EXPECT_EQ(Value(absl::StrCat("SELECT binlog_gtid_pos('mariadb-bin.000001',", c.pos, ")")),
              c.want)
        << c.pos;
  }
  // An empty name is the first stored file; an unknown one is NULL.
  EXPECT_EQ(Value("SELECT binlog_gtid_pos('', 744)"), "0-1-2");
  EXPECT_EQ(Value("SELECT binlog_gtid_pos('mariadb-bin.000002', 4)"), std::nullopt);
}

// Guards: the file's opening GTID_LIST state lost (offset 4 comes from the
// index), and NONE-checksum files framed as if they had CRCs.
TEST_F(RelayAdminTest, BinlogGtidPosStartsFromTheFilesGtidList) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMaria10Binlog);
  OpenStore();
  Feed(testing::kMaria10Binlog, "mysql-bin.07");
  NewAdmin();
  EXPECT_EQ(Value("SELECT binlog_gtid_pos('mysql-bin.07', 4)"), "0-3704-2814");
  EXPECT_EQ(Value("SELECT binlog_gtid_pos('mysql-bin.07', 326)"), "0-3704-2814");
  EXPECT_EQ(Value("SELECT binlog_gtid_pos('mysql-bin.07', 364)"), "0-3704-2815");
  EXPECT_EQ(Value("SELECT binlog_gtid_pos('mysql-bin.07', 627)"), "0-3704-2815");
  EXPECT_EQ(Value("SELECT binlog_gtid_pos('mysql-bin.07', 884)"), "0-3704-2816");
}

// Guards: a MySQL binlog (PREVIOUS_GTIDS, no GTID_LIST) given a MariaDB
// position; MariaDB answers '' for binlogs without GTID_LIST.
TEST_F(RelayAdminTest, BinlogGtidPosOfAMysqlBinlogIsEmpty) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  StoreMysql();
  EXPECT_EQ(Value("SELECT binlog_gtid_pos('binlog.000002', 4)"), "");
  EXPECT_EQ(Value("SELECT binlog_gtid_pos('binlog.000002', 529)"), "");
}

// Guards: a damaged stored file read past its damage (a huge event_size) or
// a torn file answered with a made-up state instead of an error.
TEST_F(RelayAdminTest, BinlogGtidPosOfADamagedFileIsAnError) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMariaBinlog);
  OpenStore();
  Feed(testing::kMariaBinlog, "mariadb-bin.000001");
  BR_ASSERT_OK(store_->Close());
  NewAdmin();
  const std::string path = dir_ + "/mariadb-bin.000001";
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(476 + 9);  // event_size of the TABLE_MAP at 476
    f.write("\xF0\xFF\xFF\x0F", 4);
  }
  AdminReply r = Ask("SELECT binlog_gtid_pos('mariadb-bin.000001', 744)");
  ASSERT_EQ(r.kind, AdminReply::Kind::kError);
  EXPECT_TRUE(absl::StrContains(r.message, "mariadb-bin.000001:476")) << r.message;
  fs::resize_file(path, 300);  // torn: shorter than the store believes
  r = Ask("SELECT binlog_gtid_pos('mariadb-bin.000001', 744)");
  ASSERT_EQ(r.kind, AdminReply::Kind::kError);
  EXPECT_TRUE(absl::StrContains(r.message, "mariadb-bin.000001")) << r.message;
  // Offset 4 comes from the index and does not read the file.
  EXPECT_EQ(Value("SELECT binlog_gtid_pos('mariadb-bin.000001', 4)"), "");
}

// Guards: answers racing the writer: a position SHOW MASTER STATUS shows must
// always be one binlog_gtid_pos can answer (durable, at an event boundary).
TEST_F(RelayAdminTest, AnswersStayConsistentWhileTheStoreIsWritten) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMariaBinlog);
  replication::BinlogStoreOptions o;
  o.sync = replication::SyncPolicy::kInterval;
  o.sync_interval = std::chrono::milliseconds(1);
  o.buffer_bytes = 64;  // many small writes
  OpenStore(o);
  NewAdmin();
  std::string maria = ReadFileOrDie(FixturePath(testing::kMariaBinlog));
  std::atomic<bool> done{false};
  std::thread writer([&] {
    // Feed in slices so the reader sees several committed ends.
    // Cuts at event ends; 476 and 744 stop inside a transaction, which the
    // restart drops again (never visible to readers).
    for (size_t cut : {330, 476, 744, 1074}) {
      store_->OnStreamRestart(store_->resume_position().value_or(
          replication::BinlogPosition{"mariadb-bin.000001", 4}));
      std::optional<replication::BinlogPosition> at = store_->resume_position();
      BR_EXPECT_OK(FeedBinlogFile(maria.substr(0, cut), "mariadb-bin.000001",
                                  at ? at->offset : 4, *store_));
      BR_EXPECT_OK(store_->Flush());
    }
    done = true;
  });
  int checked = 0;
  while (!done || checked == 0) {
    AdminReply st = Ask("SHOW MASTER STATUS");
    ASSERT_EQ(st.kind, AdminReply::Kind::kResultSet);
    if (st.result.rows.empty()) continue;
    const protocol::TextRow& row = st.result.rows[0];
    AdminReply pos = Ask(absl::StrCat("SELECT binlog_gtid_pos('", *row[0], "',", *row[1], ")"));
    ASSERT_EQ(pos.kind, AdminReply::Kind::kResultSet) << pos.message;
    EXPECT_TRUE(pos.result.rows[0][0].has_value()) << *row[0] << ":" << *row[1];
    EXPECT_TRUE(Value("SELECT @@gtid_binlog_pos").has_value());
    ++checked;
  }
  writer.join();
  EXPECT_EQ(Value("SELECT binlog_gtid_pos('mariadb-bin.000001', 1074)"), "0-1-2");
}

// Guards: a server_uuid that changes across restarts (replicas would see a
// new source) or a uuid file that the store takes for a foreign file.
TEST_F(RelayAdminTest, ServerUuidIsPersistedInTheStoreDirectory) {
  OpenStore();
  RelayAdminOptions o;
  o.server_id = kServerId;
  BR_ASSERT_OK_AND_ASSIGN(std::unique_ptr<RelayAdmin> first,
                          RelayAdmin::Create(store_.get(), nullptr, o));
  const std::string uuid = first->server_uuid();
  ASSERT_EQ(uuid.size(), 36u);
  EXPECT_EQ(uuid[14], '4');  // version 4
  EXPECT_NE(std::string("89ab").find(uuid[19]), std::string::npos) << uuid;  // RFC variant
  BR_ASSERT_OK_AND_ASSIGN(std::unique_ptr<RelayAdmin> second,
                          RelayAdmin::Create(store_.get(), nullptr, o));
  EXPECT_EQ(second->server_uuid(), uuid);
  EXPECT_EQ(second->SystemVariable("server_uuid"), uuid);
  store_.reset();
  OpenStore();  // the hidden file is not taken for a binlog
  {
    std::ofstream out(dir_ + "/.binrelay-server-uuid", std::ios::trunc);
    out << "not-a-uuid\n";
  }
  auto bad = RelayAdmin::Create(store_.get(), nullptr, o);
  EXPECT_TRUE(absl::IsDataLoss(bad.status())) << bad.status();
}

}  // namespace
}  // namespace binrelay::proxy
