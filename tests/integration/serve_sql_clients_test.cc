// What clients send on binrelay's port besides the dump, through
// libmysqlclient as monitoring tools and binlog libraries send it:
// SHOW SLAVE STATUS with a real replica's column names, SHOW VARIABLES
// (LIKE, WHERE, all), KILL and SHOW PROCESSLIST, metadata statements
// forwarded to the source (text and prepared), and refused writes that
// leave the connection usable.
#include <gtest/gtest.h>
#include <mysql.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"
#include "replication/dump_commands.h"
#include "tests/harness/json_lite.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/raw_dump_client.h"
#include "tests/harness/replica_fixture.h"
#include "tests/harness/serve_fixture.h"
#include "tests/harness/sql_conn.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

using std::chrono::seconds;

struct Result {
  unsigned error = 0;
  std::string message;
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
};

// A libmysqlclient connection over TCP, as a client library opens one.
class Client {
 public:
  Client(uint16_t port, const char* user, const char* password) {
    m_ = mysql_init(nullptr);
    unsigned timeout = 20;
    mysql_options(m_, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
    mysql_options(m_, MYSQL_OPT_READ_TIMEOUT, &timeout);
    if (!mysql_real_connect(m_, "127.0.0.1", user, password, nullptr, port, nullptr, 0)) {
      error_ = absl::StrCat(mysql_errno(m_), ": ", mysql_error(m_));
    }
  }
  ~Client() { mysql_close(m_); }
  const std::string& error() const { return error_; }
  uint64_t id() { return mysql_thread_id(m_); }

  Result Query(const std::string& sql) {
    Result r;
    if (mysql_real_query(m_, sql.data(), sql.size()) != 0) {
      r.error = mysql_errno(m_);
      r.message = mysql_error(m_);
      return r;
    }
    MYSQL_RES* res = mysql_store_result(m_);
    if (res == nullptr) return r;
    unsigned n = mysql_num_fields(res);
    MYSQL_FIELD* fields = mysql_fetch_fields(res);
    for (unsigned i = 0; i < n; ++i) r.columns.emplace_back(fields[i].name);
    while (MYSQL_ROW row = mysql_fetch_row(res)) {
      unsigned long* len = mysql_fetch_lengths(res);
      std::vector<std::optional<std::string>> v;
      for (unsigned i = 0; i < n; ++i) {
        v.push_back(row[i] ? std::optional<std::string>(std::string(row[i], len[i])) : std::nullopt);
      }
      r.rows.push_back(std::move(v));
    }
    mysql_free_result(res);
    return r;
  }

  // A prepared statement with string parameters; every column fetched as
  // a string (libmysqlclient converts binary-protocol values).
  Result Prepared(const std::string& sql, const std::vector<std::string>& params) {
    Result r;
    MYSQL_STMT* st = mysql_stmt_init(m_);
    auto fail = [&] {
      r.error = mysql_stmt_errno(st);
      r.message = mysql_stmt_error(st);
      mysql_stmt_close(st);
      return r;
    };
    if (mysql_stmt_prepare(st, sql.data(), sql.size()) != 0) return fail();
    std::vector<MYSQL_BIND> in(params.size());
    std::vector<unsigned long> in_len(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      in[i] = MYSQL_BIND{};
      in[i].buffer_type = MYSQL_TYPE_STRING;
      in[i].buffer = const_cast<char*>(params[i].data());
      in_len[i] = params[i].size();
      in[i].length = &in_len[i];
    }
    if (!params.empty() && mysql_stmt_bind_param(st, in.data()) != 0) return fail();
    if (mysql_stmt_execute(st) != 0) return fail();
    MYSQL_RES* meta = mysql_stmt_result_metadata(st);
    if (meta == nullptr) {
      mysql_stmt_close(st);
      return r;
    }
    unsigned n = mysql_num_fields(meta);
    MYSQL_FIELD* fields = mysql_fetch_fields(meta);
    for (unsigned i = 0; i < n; ++i) r.columns.emplace_back(fields[i].name);
    mysql_free_result(meta);
    std::vector<MYSQL_BIND> out(n);
    std::vector<std::string> buf(n, std::string(4096, '\0'));
    std::vector<unsigned long> len(n);
    std::vector<my_bool> is_null(n);
    for (unsigned i = 0; i < n; ++i) {
      out[i] = MYSQL_BIND{};
      out[i].buffer_type = MYSQL_TYPE_STRING;
      out[i].buffer = buf[i].data();
      out[i].buffer_length = buf[i].size();
      out[i].length = &len[i];
      out[i].is_null = &is_null[i];
    }
    if (mysql_stmt_bind_result(st, out.data()) != 0) return fail();
    while (true) {
      int f = mysql_stmt_fetch(st);
      if (f == MYSQL_NO_DATA) break;
      if (f == 1) return fail();
      std::vector<std::optional<std::string>> row;
      for (unsigned i = 0; i < n; ++i) {
        row.push_back(is_null[i] ? std::nullopt
                                 : std::optional<std::string>(buf[i].substr(0, len[i])));
      }
      r.rows.push_back(std::move(row));
    }
    mysql_stmt_close(st);
    return r;
  }

 private:
  MYSQL* m_ = nullptr;
  std::string error_;
};

std::string Describe(const Result& r) {
  return absl::StrCat("error ", r.error, " ", r.message, "; ", r.rows.size(), " rows");
}

class ServeSqlClientsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto source = StartServeSource();
    ASSERT_TRUE(source.ok()) << source.status();
    source_ = source->release();
    for (const char* sql : {
             "CREATE DATABASE shop",
             "CREATE TABLE shop.orders (id INT PRIMARY KEY, customer VARCHAR(64) NOT NULL, "
             "total DECIMAL(10,2), placed DATETIME(3), KEY by_customer (customer)) "
             "COMMENT 'orders'",
             "INSERT INTO shop.orders VALUES (1, 'ann', 10.50, '2026-01-02 03:04:05.678')",
         }) {
      BR_ASSERT_OK(source_->Execute(sql));
    }
    auto serve = ServeProcess::Create(*source_);
    ASSERT_TRUE(serve.ok()) << serve.status();
    serve_ = serve->release();
    BR_ASSERT_OK(serve_->Start());
    auto reached = WaitStoreReached(*serve_, *source_, std::chrono::seconds(60));
    ASSERT_TRUE(reached.ok()) << reached.status();
  }
  static void TearDownTestSuite() {
    delete serve_;
    delete source_;
  }
  std::unique_ptr<Client> Relay() {
    auto c = std::make_unique<Client>(serve_->listen_port(), kReplUser, kReplPassword);
    EXPECT_EQ(c->error(), "");
    return c;
  }
  std::unique_ptr<Client> Source() {
    auto c = std::make_unique<Client>(source_->Port(), kRelayUser, kRelayPassword);
    EXPECT_EQ(c->error(), "");
    return c;
  }
  static ServerSandbox* source_;
  static ServeProcess* serve_;
};
ServerSandbox* ServeSqlClientsTest::source_ = nullptr;
ServeProcess* ServeSqlClientsTest::serve_ = nullptr;

// Guards: monitoring tools reading binrelay's SHOW SLAVE STATUS by column
// name (a missing or renamed column breaks them) and finding its upstream
// state there; binrelay's own columns only after the server's.
TEST_F(ServeSqlClientsTest, ShowSlaveStatusHasAReplicasColumnsAndTheUpstreamState) {
  // The column set of a real MariaDB 10.11 replica's SHOW SLAVE STATUS.
  BR_ASSERT_OK_AND_ASSIGN(auto replica,
                          StartReplicaOf(ReplicaEndpoint(*serve_, *source_), {.server_id = 21}));
  BR_ASSERT_OK_AND_ASSIGN(auto conn, SqlConn::Open(*replica));
  BR_ASSERT_OK_AND_ASSIGN(std::vector<NamedRow> real, conn->QueryNamed("SHOW SLAVE STATUS"));
  ASSERT_EQ(real.size(), 1u);
  std::vector<std::string> real_columns;
  for (const auto& [name, value] : real[0]) real_columns.push_back(name);

  auto relay = Relay();
  Result r = relay->Query("SHOW SLAVE STATUS");
  ASSERT_EQ(r.error, 0u) << Describe(r);
  ASSERT_EQ(r.rows.size(), 1u);
  // The server's columns, then binrelay's own two (switches to another
  // source after a failover), last so that readers by position see the
  // server's layout.
  ASSERT_GE(r.columns.size(), 2u);
  EXPECT_EQ(r.columns[r.columns.size() - 2], "Binrelay_Source_Switches");
  EXPECT_EQ(r.columns.back(), "Binrelay_Last_Source_Switch");
  std::vector<std::string> ours(r.columns.begin(), r.columns.end() - 2);
  std::sort(ours.begin(), ours.end());
  std::sort(real_columns.begin(), real_columns.end());
  EXPECT_EQ(ours, real_columns);
  auto col = [&](const std::string& name) -> std::string {
    for (size_t i = 0; i < r.columns.size(); ++i) {
      if (r.columns[i] == name) return r.rows[0][i].value_or("NULL");
    }
    return "<missing>";
  };
  EXPECT_EQ(col("Master_Host"), "127.0.0.1");
  EXPECT_EQ(col("Master_Port"), absl::StrCat(source_->Port()));
  EXPECT_EQ(col("Master_User"), kRelayUser);
  EXPECT_EQ(col("Slave_IO_Running"), "Yes");
  EXPECT_EQ(col("Slave_SQL_Running"), "Yes");
  EXPECT_EQ(col("Master_Server_Id"), "1");
  BR_ASSERT_OK_AND_ASSIGN(SqlRows status, source_->Query("SHOW MASTER STATUS"));
  EXPECT_EQ(col("Master_Log_File"), status[0][0].value_or(""));
  EXPECT_EQ(col("Seconds_Behind_Master"), "0");
  BR_ASSERT_OK_AND_ASSIGN(std::string gtid, GtidBinlogPos(*source_));
  EXPECT_EQ(col("Gtid_IO_Pos"), gtid);
  Result replica_names = relay->Query("SHOW REPLICA STATUS");
  EXPECT_EQ(replica_names.columns, r.columns) << "MariaDB names both forms alike";
}

// Guards: SHOW VARIABLES forms client libraries use (LIKE with wildcards,
// WHERE, the full list) answering nothing, or answering the source's
// identity where binrelay's own is what @@ reads return.
TEST_F(ServeSqlClientsTest, ShowVariablesAnswersTheSourceWithBinrelaysOwnValues) {
  auto relay = Relay();
  Result one = relay->Query("SHOW VARIABLES LIKE 'binlog_format'");
  ASSERT_EQ(one.rows.size(), 1u) << Describe(one);
  EXPECT_EQ(one.rows[0][1], "ROW");
  Result like = relay->Query("SHOW GLOBAL VARIABLES LIKE 'binlog%'");
  std::vector<std::string> names;
  for (const auto& row : like.rows) names.push_back(row[0].value_or(""));
  EXPECT_NE(std::find(names.begin(), names.end(), "binlog_checksum"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "binlog_row_image"), names.end());
  Result where = relay->Query(
      "SHOW VARIABLES WHERE Variable_name = 'server_id' OR Variable_name = 'innodb_page_size'");
  ASSERT_EQ(where.rows.size(), 2u) << Describe(where);
  Result all = relay->Query("SHOW VARIABLES");
  EXPECT_GT(all.rows.size(), 300u) << "the source's variables";
  // binrelay's own: its [listen] server_id and its GTID position, as @@ says.
  for (const char* v : {"server_id", "gtid_binlog_pos", "binlog_checksum", "port"}) {
    Result shown = relay->Query(absl::StrCat("SHOW VARIABLES LIKE '", v, "'"));
    Result read = relay->Query(absl::StrCat("SELECT @@", v));
    ASSERT_EQ(shown.rows.size(), 1u) << v;
    ASSERT_EQ(read.rows.size(), 1u) << v;
    EXPECT_EQ(shown.rows[0][1], read.rows[0][0]) << v;
  }
  Result port = relay->Query("SELECT @@port");
  EXPECT_EQ(port.rows[0][0], absl::StrCat(serve_->listen_port()));
}

// Guards: KILL of binrelay's own connections (binlog clients kill their dump
// connection on stop) refused as unsupported, or killing the wrong one; and
// the replication user ending another user's connection or purging.
TEST_F(ServeSqlClientsTest, KillEndsADumpAndProcesslistShowsIt) {
  // A blocking dump on its own connection, in a thread.
  std::optional<DumpCapture> dump;
  std::thread dumper([&] {
    protocol::ConnectOptions o;
    o.port = serve_->listen_port();
    o.user = kReplUser;
    o.password = kReplPassword;
    o.tls = protocol::ConnectOptions::Tls::kDisabled;
    auto files = SourceBinlogFiles(*source_);
    if (!files.ok()) return;
    auto c = CaptureDump(o, {"blocking dump",
                             {"SET @master_binlog_checksum='CRC32'", "SET @mariadb_slave_capability=4"},
                             replication::BuildBinlogDump(7777, files->front(), 4, 0),
                             std::chrono::seconds(30)});
    if (c.ok()) dump = *c;
  });
  auto admin = Relay();
  uint64_t target = 0;
  for (int i = 0; i < 600 && target == 0; ++i) {
    Result list = admin->Query("SHOW PROCESSLIST");
    ASSERT_EQ(list.error, 0u) << Describe(list);
    ASSERT_GE(list.columns.size(), 8u);
    EXPECT_EQ(list.columns[0], "Id");
    EXPECT_EQ(list.columns[4], "Command");
    for (const auto& row : list.rows) {
      if (row[4] == "Binlog Dump") target = std::stoull(row[0].value_or("0"));
    }
    if (target == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_NE(target, 0u) << "the dump never showed in SHOW PROCESSLIST";
  // It is listed once accepted, before it streams: wait until binrelay
  // reports it past the file's header, so the KILL ends a running dump.
  bool streaming = false;
  for (int i = 0; i < 300 && !streaming; ++i) {
    auto json = StatusJson(serve_->http_port());
    const JsonValue* consumers = json.ok() ? json->Find("consumers") : nullptr;
    for (const JsonValue& c : consumers ? consumers->array : std::vector<JsonValue>{}) {
      const JsonValue* name = c.Find("name");
      const JsonValue* offset = c.Find("offset");
      streaming |= name && absl::StrContains(name->text, "7777") && offset &&
                   std::stoull(offset->text) > 4;
    }
    if (!streaming) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(streaming) << HttpGet(serve_->http_port(), "/status");
  Result self = admin->Query("SELECT CONNECTION_ID()");
  EXPECT_EQ(self.rows[0][0], absl::StrCat(admin->id()));
  Result kill = admin->Query(absl::StrCat("KILL ", target));
  EXPECT_EQ(kill.error, 0u) << Describe(kill);
  dumper.join();
  ASSERT_TRUE(dump.has_value());
  ASSERT_TRUE(dump->error.has_value()) << dump->Describe();
  EXPECT_EQ(dump->error->code, 1927) << dump->Describe();
  EXPECT_GT(dump->events.size(), 2u);
  Result unknown = admin->Query("KILL 999999");
  EXPECT_EQ(unknown.error, 1094u) << Describe(unknown);
  EXPECT_EQ(admin->Query("SELECT 1").rows.size(), 1u);

  // Another user's connection: the replication user may not end the admin
  // account's (1095), the admin account may end the replication user's.
  Client root(serve_->listen_port(), kAdminUser, kAdminPassword);
  ASSERT_EQ(root.error(), "");
  Result denied = admin->Query(absl::StrCat("KILL ", root.id()));
  EXPECT_EQ(denied.error, 1095u) << Describe(denied);
  EXPECT_EQ(root.Query("SELECT 1").rows.size(), 1u) << "the refused KILL ended it";
  Result purge = admin->Query("PURGE BINARY LOGS TO 'mysql-bin.000001'");
  EXPECT_EQ(purge.error, 1227u) << Describe(purge);

  // PROCESSLIST, as on a server for a user without PROCESS: the replication
  // user sees its own connections only (the admin's statements are not its
  // to read); the admin account sees everyone's.
  auto users = [](const Result& r) {
    std::set<std::string> out;
    for (const auto& row : r.rows) out.insert(row[1].value_or(""));
    return out;
  };
  EXPECT_EQ(users(admin->Query("SHOW FULL PROCESSLIST")), std::set<std::string>{kReplUser});
  EXPECT_EQ(users(root.Query("SHOW FULL PROCESSLIST")),
            (std::set<std::string>{kReplUser, kAdminUser}));
  // A refused statement carrying a password is logged without it.
  Result set_password = root.Query("SET PASSWORD = PASSWORD('hunter2-for-the-log')");
  EXPECT_NE(set_password.error, 0u);
  for (int i = 0; i < 300 && !absl::StrContains(serve_->Stderr(), "PASSWORD('<secret>')"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the log line on its way
  }
  const std::string log = serve_->StderrTail(400);
  EXPECT_FALSE(absl::StrContains(log, "hunter2-for-the-log")) << log;
  EXPECT_TRUE(absl::StrContains(log, "SET PASSWORD = PASSWORD('<secret>')")) << log;

  Result by_admin = root.Query(absl::StrCat("KILL ", admin->id()));
  EXPECT_EQ(by_admin.error, 0u) << Describe(by_admin);
}

// Guards: metadata statements that binlog libraries send (zongji's
// information_schema lookup, go-mysql's SHOW FULL COLUMNS / SHOW INDEX)
// refused by binrelay, or answered differently than by the source; as
// prepared statements too.
TEST_F(ServeSqlClientsTest, MetadataStatementsAreForwardedTextAndPrepared) {
  auto relay = Relay();
  auto source = Source();
  for (const std::string& sql : std::vector<std::string>{
           std::string("SHOW FULL COLUMNS FROM `shop`.`orders`"),
           std::string("SHOW INDEX FROM shop.orders"),
           std::string("SHOW CREATE TABLE shop.orders"),
           std::string("DESCRIBE shop.orders"),
           std::string("SELECT COLUMN_NAME, COLLATION_NAME, CHARACTER_SET_NAME, COLUMN_COMMENT, "
                       "COLUMN_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA='shop' "
                       "AND TABLE_NAME='orders' ORDER BY ORDINAL_POSITION"),
           std::string("SELECT c.COLUMN_NAME FROM information_schema.COLUMNS c JOIN "
                       "information_schema.TABLES t ON t.TABLE_NAME = c.TABLE_NAME AND "
                       "t.TABLE_SCHEMA = c.TABLE_SCHEMA WHERE t.TABLE_SCHEMA = 'shop'"),
       }) {
    Result a = source->Query(sql);
    Result b = relay->Query(sql);
    ASSERT_EQ(a.error, 0u) << sql << ": " << Describe(a);
    EXPECT_EQ(b.error, 0u) << sql << ": " << Describe(b);
    EXPECT_EQ(b.columns, a.columns) << sql;
    EXPECT_EQ(b.rows, a.rows) << sql;
    EXPECT_FALSE(b.rows.empty()) << sql;
  }
  const std::string by_param =
      "SELECT COLUMN_NAME, COLUMN_TYPE, ORDINAL_POSITION FROM INFORMATION_SCHEMA.COLUMNS WHERE "
      "TABLE_SCHEMA=? AND TABLE_NAME=? ORDER BY ORDINAL_POSITION";
  Result a = source->Prepared(by_param, {"shop", "orders"});
  Result b = relay->Prepared(by_param, {"shop", "orders"});
  ASSERT_EQ(a.error, 0u) << Describe(a);
  EXPECT_EQ(b.error, 0u) << Describe(b);
  EXPECT_EQ(b.columns, a.columns);
  EXPECT_EQ(b.rows, a.rows);
  ASSERT_EQ(b.rows.size(), 4u);
  Result again = relay->Prepared(by_param, {"shop", "nope"});
  EXPECT_EQ(again.error, 0u) << Describe(again);
  EXPECT_TRUE(again.rows.empty());
  Result show = relay->Prepared("SHOW FULL COLUMNS FROM shop.orders", {});
  EXPECT_EQ(show.error, 0u) << Describe(show);
  EXPECT_EQ(show.rows, source->Prepared("SHOW FULL COLUMNS FROM shop.orders", {}).rows);
  // binrelay's own statements prepare too.
  Result own = relay->Prepared("SELECT @@server_id", {});
  EXPECT_EQ(own.error, 0u) << Describe(own);
  ASSERT_EQ(own.rows.size(), 1u);
  EXPECT_EQ(own.rows[0][0], "1");
}

// Guards: a write or an unsupported read being executed or breaking the
// connection; every refusal has a clear code and the session goes on.
TEST_F(ServeSqlClientsTest, RefusedStatementsLeaveTheConnectionUsable) {
  auto relay = Relay();
  struct Refusal {
    const char* sql;
    unsigned code;
  };
  for (Refusal r : {Refusal{"INSERT INTO shop.orders VALUES (2, 'bob', 1, NOW())", 1290},
                    Refusal{"SET GLOBAL max_connections = 10", 1290},
                    Refusal{"DROP TABLE shop.orders", 1290},
                    Refusal{"SELECT * FROM shop.orders", 1235},
                    Refusal{"SELECT SLEEP(5) FROM information_schema.TABLES", 1235},
                    Refusal{"SELECT * FROM information_schema.TABLES FOR UPDATE", 1235},
                    Refusal{"SHOW CREATE TABLE shop.nope", 1146}}) {
    Result got = relay->Query(r.sql);
    EXPECT_EQ(got.error, r.code) << r.sql << ": " << Describe(got);
    Result ok = relay->Query("SELECT 1");
    ASSERT_EQ(ok.rows.size(), 1u) << "after " << r.sql;
  }
  BR_ASSERT_OK_AND_ASSIGN(SqlRows rows, source_->Query("SELECT COUNT(*) FROM shop.orders"));
  EXPECT_EQ(rows[0][0], "1") << "nothing was written";
}

}  // namespace
}  // namespace binrelay::testing
