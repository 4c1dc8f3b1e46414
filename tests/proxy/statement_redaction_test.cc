#include "proxy/statement_redaction.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"

namespace binrelay::proxy {
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
       }) {
    std::string shown = RedactedStatement(sql, 1024);
    EXPECT_FALSE(absl::StrContains(shown, "hunter2")) << sql << " -> " << shown;
    EXPECT_NE(shown.find(kRedactedLiteral), std::string::npos) << sql << " -> " << shown;
  }
  EXPECT_EQ(RedactedStatement("CREATE USER `bob` IDENTIFIED BY 'hunter2'", 1024),
            "CREATE USER `bob` IDENTIFIED BY '<secret>'");
}

// Guards the cases where the end of a literal is uncertain (a backslash means
// an escape or itself depending on NO_BACKSLASH_ESCAPES; an unterminated
// quote): everything after such a literal is hidden, so no reading of the
// statement can leave a secret in view.
TEST(StatementRedactionTest, UncertainLiteralEndsHideTheRest) {
  EXPECT_EQ(RedactedStatement("SET PASSWORD = 'a\\' , 'hunter2'", 1024),
            "SET PASSWORD = '<secret>'");
  EXPECT_EQ(RedactedStatement("SET PASSWORD = 'hunter2", 1024), "SET PASSWORD = '<secret>'");
}

// Guards the other direction: statements that name no credential are shown
// as sent (PROCESSLIST is for reading them), truncated to the bound, and a
// quoted 'password' is data, not a keyword.
TEST(StatementRedactionTest, OtherStatementsAreShownAsSentWithinTheBound) {
  EXPECT_EQ(RedactedStatement("SELECT * FROM t WHERE note = 'password'", 1024),
            "SELECT * FROM t WHERE note = 'password'");
  EXPECT_EQ(RedactedStatement("SHOW BINARY LOGS", 4), "SHOW");
  EXPECT_FALSE(NamesCredential("SELECT `password` FROM users"));
  EXPECT_TRUE(NamesCredential("select old_password('x')"));
  EXPECT_EQ(RedactedStatement(std::string(2000, 'x') + " PASSWORD 'a'", 1024).size(), 1024u);
}

}  // namespace
}  // namespace binrelay::proxy
