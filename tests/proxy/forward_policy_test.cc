// Table-driven test of what binrelay forwards to its source, refuses as a
// write, or does not support. A wrong "forward" sends a client's statement to
// a production primary; a wrong "refuse" breaks a binlog library's metadata
// lookup.
#include "proxy/forward_policy.h"

#include <gtest/gtest.h>

namespace binrelay::proxy {
namespace {

using K = ForwardDecision::Kind;

struct Case {
  const char* sql;
  K kind;
  const char* db = "";
};

const Case kCases[] = {
    // What binlog libraries send (zongji, go-mysql, canal, Debezium).
    {"SELECT COLUMN_NAME, COLLATION_NAME, CHARACTER_SET_NAME, COLUMN_COMMENT, COLUMN_TYPE "
     "FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA=? AND TABLE_NAME=? "
     "ORDER BY ORDINAL_POSITION",
     K::kForward},
    {"show full columns from `db`.`t`", K::kForward},
    {"show index from `db`.`t`", K::kForward},
    {"SHOW CREATE TABLE db.t", K::kForward},
    {"SHOW CREATE DATABASE db", K::kForward},
    {"SHOW FULL TABLES FROM db", K::kForward},
    {"SHOW DATABASES", K::kForward},
    {"SHOW TABLE STATUS LIKE 't'", K::kForward},
    {"SHOW CHARACTER SET", K::kForward},
    {"SHOW COLLATION WHERE Charset = 'utf8mb4'", K::kForward},
    {"DESCRIBE db.t", K::kForward},
    {"DESC t id", K::kForward},
    {"EXPLAIN db.t", K::kForward},
    {"SELECT c.COLUMN_NAME FROM information_schema.COLUMNS c JOIN information_schema.TABLES t "
     "ON t.TABLE_NAME = c.TABLE_NAME WHERE t.TABLE_SCHEMA = 'db'",
     K::kForward},
    {"SELECT a.x FROM information_schema.A a, information_schema.B AS b WHERE a.y = b.y",
     K::kForward},
    {"SELECT * FROM TABLES WHERE TABLE_SCHEMA='db'", K::kForward, "information_schema"},
    {"SELECT * FROM information_schema.TABLES WHERE TABLE_NAME IN "
     "(SELECT TABLE_NAME FROM information_schema.COLUMNS)",
     K::kForward},
    {"SELECT 1 + 1", K::kForward},
    {"SELECT CONCAT('a', 'b')", K::kForward},
    // Reads of user data, locks, waits and variables stay at binrelay.
    {"SELECT * FROM db.t", K::kUnsupported},
    {"SELECT * FROM t", K::kUnsupported, "db"},
    {"SELECT * FROM information_schema.TABLES, db.t", K::kUnsupported},
    {"SELECT * FROM information_schema.TABLES JOIN mysql.user", K::kUnsupported},
    {"SELECT * FROM information_schema.TABLES WHERE x IN (SELECT a FROM db.t)", K::kUnsupported},
    {"SELECT * FROM information_schema.TABLES FOR UPDATE", K::kUnsupported},
    {"SELECT * FROM information_schema.TABLES LOCK IN SHARE MODE", K::kUnsupported},
    {"SELECT * FROM information_schema.TABLES INTO OUTFILE '/tmp/x'", K::kUnsupported},
    {"SELECT SLEEP(10) FROM information_schema.TABLES", K::kUnsupported},
    {"SELECT GET_LOCK('a', 10)", K::kUnsupported},
    // The source's threads (and their statements) through forward_user.
    {"SELECT * FROM information_schema.PROCESSLIST", K::kUnsupported},
    {"SELECT INFO FROM processlist", K::kUnsupported, "information_schema"},
    {"SELECT LOAD_FILE('/etc/passwd')", K::kUnsupported},
    {"SELECT MASTER_POS_WAIT('f', 4)", K::kUnsupported},
    {"SELECT @@server_id + 0", K::kUnsupported},
    {"SELECT 1; SELECT 2", K::kUnsupported},
    {"SHOW SLAVE STATUS", K::kUnsupported},  // binrelay's own (admin_parser)
    {"SHOW GRANTS FOR root", K::kUnsupported},
    {"SHOW ENGINE INNODB STATUS", K::kUnsupported},
    {"EXPLAIN SELECT * FROM db.t", K::kUnsupported},
    {"WITH x AS (SELECT 1) SELECT * FROM x", K::kUnsupported},
    {"", K::kUnsupported},
    // Writes.
    {"INSERT INTO db.t VALUES (1)", K::kWrite},
    {"update db.t set a = 1", K::kWrite},
    {"DELETE FROM db.t", K::kWrite},
    {"REPLACE INTO t VALUES (1)", K::kWrite},
    {"CREATE TABLE t (a INT)", K::kWrite},
    {"DROP DATABASE db", K::kWrite},
    {"ALTER TABLE t ADD b INT", K::kWrite},
    {"TRUNCATE t", K::kWrite},
    {"GRANT ALL ON *.* TO x", K::kWrite},
    {"LOAD DATA INFILE 'x' INTO TABLE t", K::kWrite},
    {"CALL p()", K::kWrite},
    {"FLUSH TABLES", K::kWrite},
    {"LOCK TABLES t WRITE", K::kWrite},
    {"CHANGE MASTER TO MASTER_HOST='x'", K::kWrite},
    {"SET PASSWORD = 'x'", K::kWrite},
    {"BINLOG 'AAAA'", K::kWrite},
    {"XA START 'x'", K::kWrite},
};

TEST(ForwardPolicyTest, ForwardsMetadataReadsOnlyAndRecognisesWrites) {
  for (const Case& c : kCases) {
    ForwardDecision d = ClassifyStatement(c.sql, c.db);
    EXPECT_EQ(static_cast<int>(d.kind), static_cast<int>(c.kind))
        << "'" << c.sql << "' (db " << c.db << "): " << d.reason;
  }
}

// Guards refusals that do not say why (an operator must learn what binrelay
// forwards).
TEST(ForwardPolicyTest, UnsupportedSelectsSayWhy) {
  ForwardDecision d = ClassifyStatement("SELECT * FROM shop.orders", "");
  EXPECT_NE(d.reason.find("shop.orders"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("information_schema"), std::string::npos) << d.reason;
  d = ClassifyStatement("SELECT SLEEP(1)", "");
  EXPECT_NE(d.reason.find("SLEEP"), std::string::npos) << d.reason;
}

}  // namespace
}  // namespace binrelay::proxy
