#include "protocol/statement_redaction.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"

namespace binrelay::protocol {
namespace {

// Guards "passwords never appear in logs": each form a client may send a
// credential in comes out without it, and the rest of the statement stays
// readable for the operator.
TEST(StatementRedactionTest, CredentialLiteralsAreHidden) {
  for (const char* sql : {
           "SET PASSWORD = PASSWORD('hunter2')",
           "set password for 'bob'@'%' = 'hunter2'",
           "CREATE USER bob IDENTIFIED BY 'hunter2'",
           "GRANT ALL ON *.* TO bob@'%' IDENTIFIED BY \"hunter2\"",
           "ALTER USER bob IDENTIFIED VIA ed25519 USING PASSWORD('hunter2')",
           "CHANGE MASTER TO MASTER_HOST='db1', MASTER_PASSWORD='hunter2'",
           "CHANGE REPLICATION SOURCE TO SOURCE_PASSWORD = 'hunter2'",
           "/*!80000 SET PASSWORD='hunter2' */",
           "SET PASSWORD = 'it''s hunter2'",
           // Quotes inside comments open no literal; version comments are
           // code; the keyword may sit in a literal or a version comment.
           "/* don't log */ ALTER USER app IDENTIFIED BY 'hunter2'",
           "-- user's pw\nSET PASSWORD = PASSWORD('hunter2')",
           "# user's pw\nSET PASSWORD = PASSWORD('hunter2')",
           "CREATE USER u /*!50700IDENTIFIED BY 'hunter2'*/",
           "CREATE USER u /*M!100500IDENTIFIED BY 'hunter2'*/",
           "PREPARE s FROM 'ALTER USER u IDENTIFIED BY ''hunter2'''",
           "EXECUTE IMMEDIATE 'SET PASSWORD = \"hunter2\"'",
           "CREATE SERVER s FOREIGN DATA WRAPPER mysql OPTIONS (PASSWORD 'hunter2')",
           "SET PASSWORD=--'hunter2'",
       }) {
    std::string shown = RedactedStatement(sql, 1024);
    EXPECT_FALSE(absl::StrContains(shown, "hunter2")) << sql << " -> " << shown;
    EXPECT_NE(shown.find(kRedactedLiteral), std::string::npos) << sql << " -> " << shown;
  }
  EXPECT_EQ(RedactedStatement("CREATE USER `bob` IDENTIFIED BY 'hunter2'", 1024),
            "CREATE USER `bob` IDENTIFIED BY '<secret>'");
  EXPECT_EQ(RedactedStatement("/* don't */ SET PASSWORD = 'x' -- it's y\n# z", 1024),
            "/* */ SET PASSWORD = '<secret>' --\n#");
}

// Guards the cases where the end of a literal, identifier or comment is
// uncertain (a backslash means an escape or itself depending on
// NO_BACKSLASH_ESCAPES; something left open): everything after it is
// hidden, so no reading of the statement can leave a secret in view.
TEST(StatementRedactionTest, UncertainEndsHideTheRest) {
  EXPECT_EQ(RedactedStatement("SET PASSWORD = 'a\\' , 'hunter2'", 1024),
            "SET PASSWORD = '<secret>'");
  EXPECT_EQ(RedactedStatement("SET PASSWORD = 'hunter2", 1024), "SET PASSWORD = '<secret>'");
  // NO_BACKSLASH_ESCAPES: 'dom\' is a whole literal, and then hunter2 is in one.
  EXPECT_EQ(RedactedStatement("CREATE USER 'dom\\'@'%' IDENTIFIED BY 'hunter2'", 1024),
            "CREATE USER '<secret>'");
  EXPECT_EQ(RedactedStatement("SET PASSWORD FOR `bob = 'hunter2'", 1024),
            "SET PASSWORD FOR '<secret>'");
  EXPECT_EQ(RedactedStatement("SET PASSWORD /* x = 'hunter2'", 1024), "SET PASSWORD '<secret>'");
}

// Guards the other direction: statements that name no credential are shown
// as sent (PROCESSLIST is for reading them), truncated to the bound.
TEST(StatementRedactionTest, OtherStatementsAreShownAsSentWithinTheBound) {
  EXPECT_EQ(RedactedStatement("SELECT * FROM t WHERE note = 'it''s -- \\ \"'", 1024),
            "SELECT * FROM t WHERE note = 'it''s -- \\ \"'");
  EXPECT_EQ(RedactedStatement("SHOW BINARY LOGS", 4), "SHOW");
  EXPECT_TRUE(NamesCredential("SELECT `Password` FROM users"));  // errs towards hiding
  EXPECT_TRUE(NamesCredential("select old_password('x')"));
  EXPECT_FALSE(NamesCredential("SELECT 'passwd'"));
  EXPECT_EQ(RedactedStatement(std::string(2000, 'x') + " PASSWORD 'a'", 1024).size(), 1024u);
}

}  // namespace
}  // namespace binrelay::protocol
