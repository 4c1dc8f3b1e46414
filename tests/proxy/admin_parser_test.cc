// Table-driven test of the admin SQL parser: the statements MariaDB 10.x /
// MySQL 8.x IO threads and mysqlbinlog / mariadb-binlog send before dumping
// (MySQL sql/rpl_replica.cc, MariaDB sql/slave.cc, client/mysqlbinlog.cc),
// binrelay's admin statements, and refusals.
#include "proxy/admin_parser.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/harness/status_matchers.h"

#include <chrono>

namespace binrelay::proxy {
namespace {

std::string Canon(const AdminExpr& e) {
  using K = AdminExpr::Kind;
  switch (e.kind) {
    case K::kString:
      return absl::StrCat("'", e.value, "'");
    case K::kNumber:
      return absl::StrCat("#", e.value);
    case K::kUserVar:
      return absl::StrCat("@", e.value);
    case K::kSystemVar:
      return absl::StrCat("@@", e.scope.empty() ? "" : e.scope + ".", e.value);
    case K::kIdentifier:
      return absl::StrCat("id:", e.value);
    case K::kFunction: {
      std::vector<std::string> args;
      for (const auto& a : e.args) args.push_back(Canon(a));
      return absl::StrCat(e.value, "(", absl::StrJoin(args, ","), ")");
    }
  }
  return "?";
}

// One line per statement: kind and every field, so any misparse shows.
std::string Canon(const AdminStatement& s) {
  using K = AdminStatement::Kind;
  switch (s.kind) {
    case K::kSet: {
      std::vector<std::string> parts;
      for (const auto& a : s.assignments) {
        std::string lhs = a.user_variable
                              ? absl::StrCat("@", a.name)
                              : absl::StrCat("@@", a.scope.empty() ? "" : a.scope + ".", a.name);
        parts.push_back(absl::StrCat(lhs, "=", Canon(a.value)));
      }
      return absl::StrCat("SET ", absl::StrJoin(parts, ","));
    }
    case K::kSelect: {
      std::vector<std::string> parts;
      for (const auto& e : s.items) parts.push_back(absl::StrCat(Canon(e), " AS [", e.text, "]"));
      return absl::StrCat("SELECT ", absl::StrJoin(parts, ","));
    }
    case K::kShowVariables:
    case K::kShowStatus: {
      std::string out = absl::StrCat(s.kind == K::kShowStatus ? "SHOW STATUS" : "SHOW VARIABLES",
                                     s.global_scope ? " GLOBAL" : "");
      if (s.has_like) absl::StrAppend(&out, " '", s.argument, "'");
      for (const auto& p : s.where) {
        absl::StrAppend(&out, " ", p.on_value ? "value" : "name",
                        p.op == VariablePredicate::Op::kEquals ? "="
                        : p.op == VariablePredicate::Op::kLike ? "~"
                                                               : " in ",
                        absl::StrJoin(p.operands, "|"));
      }
      return out;
    }
    case K::kShowSlaveStatus:
      return absl::StrCat("SHOW SLAVE STATUS", s.full ? " ALL" : "",
                          s.replica_keyword ? " REPLICA" : "");
    case K::kShowProcesslist:
      return s.full ? "SHOW FULL PROCESSLIST" : "SHOW PROCESSLIST";
    case K::kShowGrants:
      return "SHOW GRANTS";
    case K::kShowWarnings:
      return "SHOW WARNINGS";
    case K::kKill:
      return absl::StrCat("KILL ", s.kill_query ? "QUERY " : "", s.kill_id);
    case K::kUse:
      return absl::StrCat("USE ", s.argument);
    case K::kTransaction:
      return "TRANSACTION";
    case K::kShowMasterStatus:
      return "SHOW MASTER STATUS";
    case K::kShowBinaryLogs:
      return "SHOW BINARY LOGS";
    case K::kShowReplicas:
      return "SHOW REPLICAS";
    case K::kShowRelayStatus:
      return "SHOW RELAY STATUS";
    case K::kShowRelayPipelines:
      return "SHOW RELAY PIPELINES";
    case K::kShowRelayMoves:
      return "SHOW RELAY MOVES";
    case K::kShowRelaySources:
      return s.may_block ? "SHOW RELAY SOURCES (blocking)" : "SHOW RELAY SOURCES";
    case K::kPurgeBinaryLogsTo:
      return absl::StrCat("PURGE TO '", s.argument, "'");
    case K::kCutoverMove:
      return absl::StrCat("CUTOVER MOVE '", s.argument, "'");
    case K::kStopUpstream:
    case K::kStartUpstream:
      return absl::StrCat(s.kind == K::kStopUpstream ? "STOP" : "START", " UPSTREAM",
                          s.io_thread ? " io" : "", s.sql_thread ? " sql" : "",
                          s.connection.empty() ? "" : absl::StrCat(" '", s.connection, "'"),
                          s.may_block ? " (blocking)" : "");
    case K::kChangeSource: {
      std::string out = "CHANGE SOURCE";
      for (const auto& a : s.assignments) {
        absl::StrAppend(&out, " ", a.name, "=",
                        a.value.kind == AdminExpr::Kind::kString   ? "'"
                        : a.value.kind == AdminExpr::Kind::kNumber ? "#"
                                                                   : "",
                        a.value.value);
      }
      if (!s.connection.empty()) absl::StrAppend(&out, " '", s.connection, "'");
      return out;
    }
  }
  return "?";
}

struct Case {
  const char* sql;
  const char* canonical;
};

// Guards each statement form a replica or binlog client sends: a misparse
// here is a replica that stops at connect time.
const Case kAccepted[] = {
    // MySQL 8.x IO thread (sql/rpl_replica.cc).
    {"SELECT UNIX_TIMESTAMP()", "SELECT unix_timestamp() AS [UNIX_TIMESTAMP()]"},
    {"SELECT @@GLOBAL.SERVER_ID", "SELECT @@global.server_id AS [@@GLOBAL.SERVER_ID]"},
    {"SET @master_heartbeat_period = 30000000000, @source_heartbeat_period = 30000000000",
     "SET @master_heartbeat_period=#30000000000,@source_heartbeat_period=#30000000000"},
    {"SET @master_binlog_checksum = @@global.binlog_checksum, @source_binlog_checksum = "
     "@@global.binlog_checksum",
     "SET @master_binlog_checksum=@@global.binlog_checksum,"
     "@source_binlog_checksum=@@global.binlog_checksum"},
    {"SELECT @source_binlog_checksum", "SELECT @source_binlog_checksum AS [@source_binlog_checksum]"},
    {"SELECT @master_binlog_checksum", "SELECT @master_binlog_checksum AS [@master_binlog_checksum]"},
    {"SELECT @@GLOBAL.GTID_MODE", "SELECT @@global.gtid_mode AS [@@GLOBAL.GTID_MODE]"},
    {"SELECT @@GLOBAL.SERVER_UUID", "SELECT @@global.server_uuid AS [@@GLOBAL.SERVER_UUID]"},
    {"SHOW VARIABLES LIKE 'SERVER_UUID'", "SHOW VARIABLES 'SERVER_UUID'"},
    {"SET @slave_uuid = '3e11fa47-71ca-11e1-9e33-c80aa9429562', @replica_uuid = "
     "'3e11fa47-71ca-11e1-9e33-c80aa9429562'",
     "SET @slave_uuid='3e11fa47-71ca-11e1-9e33-c80aa9429562',"
     "@replica_uuid='3e11fa47-71ca-11e1-9e33-c80aa9429562'"},
    {"SELECT @@global.rpl_semi_sync_source_enabled",
     "SELECT @@global.rpl_semi_sync_source_enabled AS [@@global.rpl_semi_sync_source_enabled]"},
    {"SET @rpl_semi_sync_replica = 1, @rpl_semi_sync_slave = 1",
     "SET @rpl_semi_sync_replica=#1,@rpl_semi_sync_slave=#1"},
    // MariaDB 10.x / 11.x IO thread (sql/slave.cc).
    {"SHOW VARIABLES LIKE 'SERVER_ID'", "SHOW VARIABLES 'SERVER_ID'"},
    {"SET @master_heartbeat_period= 1800000000", "SET @master_heartbeat_period=#1800000000"},
    {"SET @master_binlog_checksum= @@global.binlog_checksum",
     "SET @master_binlog_checksum=@@global.binlog_checksum"},
    {"SET skip_replication=1", "SET @@skip_replication=#1"},
    {"SET @mariadb_slave_capability=4", "SET @mariadb_slave_capability=#4"},
    {"SELECT @@GLOBAL.gtid_domain_id", "SELECT @@global.gtid_domain_id AS [@@GLOBAL.gtid_domain_id]"},
    {"SET @slave_connect_state='0-1-100,1-2-5'", "SET @slave_connect_state='0-1-100,1-2-5'"},
    {"SET @slave_connect_state=''", "SET @slave_connect_state=''"},
    {"SET @slave_gtid_strict_mode=1", "SET @slave_gtid_strict_mode=#1"},
    {"SET @slave_gtid_ignore_duplicates=0", "SET @slave_gtid_ignore_duplicates=#0"},
    {"SET @slave_until_gtid='0-1-200'", "SET @slave_until_gtid='0-1-200'"},
    {"SELECT binlog_gtid_pos('mysql-bin.000012',4567)",
     "SELECT binlog_gtid_pos('mysql-bin.000012',#4567) AS [binlog_gtid_pos('mysql-bin.000012',4567)]"},
    {"SHOW VARIABLES LIKE 'rpl_semi_sync_master_enabled'",
     "SHOW VARIABLES 'rpl_semi_sync_master_enabled'"},
    {"SET @rpl_semi_sync_slave= 1", "SET @rpl_semi_sync_slave=#1"},
    // mysqlbinlog / mariadb-binlog (client/mysqlbinlog.cc) and the mariadb CLI.
    {"SELECT VERSION()", "SELECT version() AS [VERSION()]"},
    {"SET @master_binlog_checksum='NONE'", "SET @master_binlog_checksum='NONE'"},
    {"SET @master_binlog_checksum='NONE', @source_binlog_checksum='NONE'",
     "SET @master_binlog_checksum='NONE',@source_binlog_checksum='NONE'"},
    {"select @@version_comment limit 1", "SELECT @@version_comment AS [@@version_comment]"},
    {"SET NAMES utf8mb4", "SET @@names=id:utf8mb4"},
    {"SET NAMES utf8mb4 COLLATE utf8mb4_general_ci", "SET @@names=id:utf8mb4"},
    // binrelay admin statements.
    {"SHOW MASTER STATUS", "SHOW MASTER STATUS"},
    {"show binary log status;", "SHOW MASTER STATUS"},
    {"SHOW BINARY LOGS", "SHOW BINARY LOGS"},
    {"SHOW MASTER LOGS", "SHOW BINARY LOGS"},
    {"SHOW SLAVE HOSTS", "SHOW REPLICAS"},
    {"SHOW REPLICAS", "SHOW REPLICAS"},
    {"SHOW RELAY STATUS", "SHOW RELAY STATUS"},
    {"show relay pipelines", "SHOW RELAY PIPELINES"},
    {"SHOW RELAY MOVES", "SHOW RELAY MOVES"},
    // Probes servers: must run on a worker, never on the io thread.
    {"show relay sources", "SHOW RELAY SOURCES (blocking)"},
    {"PURGE BINARY LOGS TO 'mysql-bin.000003'", "PURGE TO 'mysql-bin.000003'"},
    {"purge master logs to \"mysql-bin.000004\"", "PURGE TO 'mysql-bin.000004'"},
    {"CUTOVER MOVE archive", "CUTOVER MOVE 'archive'"},
    {"cutover move 'shop-orders';", "CUTOVER MOVE 'shop-orders'"},
    // The upstream: MariaDB and MySQL spellings; STOP waits for the IO
    // thread, so both run on a worker.
    {"STOP SLAVE", "STOP UPSTREAM (blocking)"},
    {"stop replica;", "STOP UPSTREAM (blocking)"},
    {"START SLAVE", "START UPSTREAM (blocking)"},
    {"START REPLICA IO_THREAD", "START UPSTREAM io (blocking)"},
    {"STOP SLAVE IO_THREAD, SQL_THREAD", "STOP UPSTREAM io sql (blocking)"},
    {"STOP SLAVE SQL_THREAD", "STOP UPSTREAM sql (blocking)"},
    {"STOP SLAVE 'other'", "STOP UPSTREAM 'other' (blocking)"},
    {"START REPLICA FOR CHANNEL 'ch'", "START UPSTREAM 'ch' (blocking)"},
    {"STOP ALL SLAVES", "STOP UPSTREAM (blocking)"},
    {"start all slaves", "START UPSTREAM (blocking)"},
    {"CHANGE MASTER TO MASTER_HOST='db2', MASTER_PORT=3307",
     "CHANGE SOURCE master_host='db2 master_port=#3307"},
    {"change replication source to SOURCE_USER = 'r', source_password='p w';",
     "CHANGE SOURCE source_user='r source_password='p w"},
    {"CHANGE MASTER 'conn' TO MASTER_USE_GTID = slave_pos",
     "CHANGE SOURCE master_use_gtid=slave_pos 'conn'"},
    {"CHANGE REPLICATION SOURCE TO SOURCE_AUTO_POSITION = 1 FOR CHANNEL 'ch'",
     "CHANGE SOURCE source_auto_position=#1 'ch'"},
    {"SELECT @@server_id, @@gtid_binlog_pos, @@gtid_current_pos",
     "SELECT @@server_id AS [@@server_id],@@gtid_binlog_pos AS [@@gtid_binlog_pos],"
     "@@gtid_current_pos AS [@@gtid_current_pos]"},
    {"SELECT @@gtid_executed, @@global.gtid_purged",
     "SELECT @@gtid_executed AS [@@gtid_executed],@@global.gtid_purged AS [@@global.gtid_purged]"},
    {"SHOW GLOBAL VARIABLES LIKE 'gtid\\_mode'", "SHOW VARIABLES GLOBAL 'gtid\\_mode'"},
    // Monitoring tools, client libraries and connectors.
    {"SHOW VARIABLES", "SHOW VARIABLES"},
    {"SHOW GLOBAL VARIABLES", "SHOW VARIABLES GLOBAL"},
    {"SHOW SESSION VARIABLES LIKE 'binlog%'", "SHOW VARIABLES 'binlog%'"},
    {"SHOW VARIABLES WHERE Variable_name = 'binlog_format' OR Variable_name LIKE 'gtid%'",
     "SHOW VARIABLES name=binlog_format name~gtid%"},
    {"SHOW VARIABLES WHERE Variable_name IN ('a', 'b') OR Value = 'ON'",
     "SHOW VARIABLES name in a|b value=ON"},
    {"SHOW GLOBAL STATUS LIKE 'Uptime'", "SHOW STATUS GLOBAL 'Uptime'"},
    {"SHOW STATUS", "SHOW STATUS"},
    {"SHOW SLAVE STATUS", "SHOW SLAVE STATUS"},
    {"SHOW REPLICA STATUS", "SHOW SLAVE STATUS REPLICA"},
    {"SHOW ALL SLAVES STATUS", "SHOW SLAVE STATUS ALL"},
    {"SHOW PROCESSLIST", "SHOW PROCESSLIST"},
    {"show full processlist", "SHOW FULL PROCESSLIST"},
    {"SHOW GRANTS", "SHOW GRANTS"},
    {"SHOW GRANTS FOR CURRENT_USER()", "SHOW GRANTS"},
    {"SHOW WARNINGS", "SHOW WARNINGS"},
    {"KILL 42", "KILL 42"},
    {"KILL CONNECTION 7", "KILL 7"},
    {"KILL QUERY 7", "KILL QUERY 7"},
    {"KILL HARD QUERY 7", "KILL QUERY 7"},
    {"USE information_schema", "USE information_schema"},
    {"USE `my db`", "USE my db"},
    {"BEGIN", "TRANSACTION"},
    {"START TRANSACTION READ ONLY", "TRANSACTION"},
    {"COMMIT", "TRANSACTION"},
    {"ROLLBACK", "TRANSACTION"},
    {"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", "TRANSACTION"},
    {"SELECT CONNECTION_ID()", "SELECT connection_id() AS [CONNECTION_ID()]"},
    // Case, whitespace, ':=', comments, aliases, session scope, escapes.
    {"  set   @Master_Heartbeat_Period   :=   5  ; ", "SET @master_heartbeat_period=#5"},
    {"/* ping */ SELECT 1 AS one", "SELECT #1 AS [one]"},
    {"SELECT -1, @@session.sql_mode x", "SELECT #-1 AS [-1],@@session.sql_mode AS [x]"},
    {"SET @@SESSION.wait_timeout = 60, GLOBAL max_connections = 10",
     "SET @@session.wait_timeout=#60,@@global.max_connections=#10"},
    {"SET @s = 'it''s \\'quoted\\''", "SET @s='it's 'quoted''"},
    {"SELECT @`Quoted`", "SELECT @quoted AS [@`Quoted`]"},
    {"SELECT 1 FROM DUAL", "SELECT #1 AS [1]"},
};

TEST(AdminParserTest, ParsesEveryReplicaAndAdminStatementForm) {
  for (const Case& c : kAccepted) {
    auto s = ParseAdminStatement(c.sql);
    ASSERT_TRUE(s.ok()) << c.sql << ": " << s.status();
    EXPECT_EQ(Canon(*s), c.canonical) << c.sql;
  }
}

// Anything outside the supported forms must be Unimplemented (answered with
// ER_NOT_SUPPORTED_YET, connection kept), never misread as a supported one.
TEST(AdminParserTest, OtherStatementsAreUnimplemented) {
  for (const char* sql :
       {"", "   ", "INSERT INTO t VALUES (1)", "SHOW TABLES", "SHOW FULL COLUMNS FROM t",
        "SELECT * FROM mysql.user", "SELECT a FROM t", "PURGE BINARY LOGS BEFORE NOW()",
        "CHANGE REPLICATION FILTER REPLICATE_DO_DB = (d)", "SELECT COUNT(*)", "DROP TABLE x", "SHOW MASTER",
        "SET PASSWORD = 'x'", "KILL USER bob", "ROLLBACK TO SAVEPOINT a"}) {
    auto s = ParseAdminStatement(sql);
    EXPECT_TRUE(absl::IsUnimplemented(s.status())) << "'" << sql << "': " << s.status();
  }
}

// A recognised form with broken syntax is a parse error, and hostile text
// (unterminated quotes/comments, a second statement) is refused cleanly.
TEST(AdminParserTest, SyntaxErrorsAreInvalidArgument) {
  for (const char* sql :
       {"SET @a", "SET @a 1", "SET @a='unterminated", "SELECT 'x", "SELECT @@x @@y",
        "SELECT 1; DROP TABLE x", "SELECT f(1", "PURGE BINARY LOGS TO mysql_bin", "/* open",
        "SHOW VARIABLES LIKE x", "SELECT 1 LIMIT x", "SET @`a=1", "KILL", "KILL x",
        "USE", "SHOW VARIABLES WHERE Variable_name", "CUTOVER MOVE", "CUTOVER MOVE a b",
        "STOP SLAVE now", "START REPLICA FOR CHANNEL", "STOP ALL SLAVES x",
        "START SLAVE UNTIL MASTER_LOG_POS = 4", "CHANGE MASTER TO", "CHANGE MASTER MASTER_HOST='x'",
        "CHANGE MASTER TO MASTER_HOST", "CHANGE MASTER TO MASTER_HOST='x',",
        "CHANGE MASTER TO MASTER_PORT=(1)", "STOP SLAVE IO_THREAD,", "STOP SLAVE IO_THREAD, x"}) {
    auto s = ParseAdminStatement(sql);
    EXPECT_TRUE(absl::IsInvalidArgument(s.status())) << "'" << sql << "': " << s.status();
  }
}

// Guards the crash found by reading the code: `SELECT f(f(f(...1...)))`
// nested 30,000 deep in one 90 KB statement overflowed the stack (parser,
// evaluator and destructor all recursed) and copied a growing substring per
// level. Past kMaxExprDepth it is a syntax error, found in linear time.
TEST(AdminParserTest, DeeplyNestedExpressionIsASyntaxErrorNotACrash) {
  std::string sql = "SELECT ";
  for (int i = 0; i < 30000; ++i) sql += "f(";
  sql += "1";
  for (int i = 0; i < 30000; ++i) sql += ")";
  auto started = std::chrono::steady_clock::now();
  auto s = ParseAdminStatement(sql);
  EXPECT_TRUE(absl::IsInvalidArgument(s.status())) << s.status();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  // Just within the limit it parses (kMaxExprDepth calls around a literal).
  std::string ok = "SELECT ";
  for (int i = 0; i < kMaxExprDepth; ++i) ok += "f(";
  ok += "1";
  for (int i = 0; i < kMaxExprDepth; ++i) ok += ")";
  BR_EXPECT_OK(ParseAdminStatement(ok).status());
  // And a few thousand short items stay linear (one name copy per item).
  std::string wide = "SELECT 1";
  for (int i = 0; i < 1500; ++i) wide += ",1";
  EXPECT_TRUE(absl::IsInvalidArgument(ParseAdminStatement(wide + std::string(3000, ',')).status()));
  BR_EXPECT_OK(ParseAdminStatement(wide).status());
}

// Guards SHOW VARIABLES LIKE matching: '%' and '_' are wildcards, '\'
// escapes, names compare without case.
TEST(AdminParserTest, LikeMatchesAsMySql) {
  EXPECT_TRUE(SqlLikeMatch("binlog_format", "binlog%"));
  EXPECT_TRUE(SqlLikeMatch("binlog_format", "BINLOG_FORMAT"));
  EXPECT_TRUE(SqlLikeMatch("binlog_format", "binlog_forma_"));
  EXPECT_TRUE(SqlLikeMatch("binlog_format", "%format"));
  EXPECT_TRUE(SqlLikeMatch("gtid_mode", "gtid\\_mode"));
  EXPECT_FALSE(SqlLikeMatch("gtidxmode", "gtid\\_mode"));
  EXPECT_FALSE(SqlLikeMatch("binlog_format", "binlog"));
  EXPECT_TRUE(SqlLikeMatch("", "%"));
  EXPECT_TRUE(SqlLikeMatch("abcabc", "%b%c"));
  EXPECT_FALSE(SqlLikeMatch("abc", "%b%d"));
}

}  // namespace
}  // namespace binrelay::proxy
