// Column names, signedness, charsets and ENUM/SET members from TABLE_MAP
// optional metadata (MariaDB binlog_row_metadata=FULL) rather than from
// information_schema.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/harness/binrelay_process.h"
#include "tests/harness/json_lite.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

using std::chrono::seconds;

// Guards the optional-metadata path end to end: with FULL metadata binrelay
// needs no schema lookup, and the values still decode exactly (unsigned
// maximum, latin1 text, ENUM/SET names); a metadata parse that shifted one
// field would misname or misread columns here.
TEST(TailMetadataTest, FullRowMetadataNeedsNoSchemaLookups) {
  ServerSandboxOptions o;
  o.extra_args = {"--binlog-row-metadata=FULL"};
  BR_ASSERT_OK_AND_ASSIGN(auto sb, ServerSandbox::Start(o));
  BR_ASSERT_OK(sb->CreateUser("meta", "meta-pw", "REPLICATION SLAVE, BINLOG MONITOR, SELECT"));
  BR_ASSERT_OK(sb->Execute("CREATE DATABASE m"));
  BR_ASSERT_OK(sb->Execute(
      "CREATE TABLE m.t (id BIGINT UNSIGNED PRIMARY KEY, name VARCHAR(20) CHARACTER SET latin1, "
      "e ENUM('small','large'), s SET('a','b','c'), n TINYINT UNSIGNED)"));
  BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(*sb));
  BR_ASSERT_OK(sb->Execute("SET NAMES utf8mb4"));
  BR_ASSERT_OK(sb->Execute(
      "INSERT INTO m.t VALUES (18446744073709551615, 'caf\xC3\xA9', 'large', 'a,c', 255)"));
  std::vector<std::string> args = TailArgs(*sb, "meta", "m.t", {"--start", start, "--until-end"});
  BR_ASSERT_OK_AND_ASSIGN(ProcessResult r,
                          RunBinrelay(args, {{"BINRELAY_SOURCE_PASSWORD", "meta-pw"}},
                                      std::chrono::seconds(60)));
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  BR_ASSERT_OK_AND_ASSIGN(std::vector<JsonValue> lines, ParseJsonLines(r.out));
  ASSERT_EQ(lines.size(), 1u) << r.out;
  const JsonValue* after = lines[0].Find("after");
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->Find("id")->text, "18446744073709551615");
  EXPECT_EQ(after->Find("name")->text, "caf\xC3\xA9");
  EXPECT_EQ(after->Find("e")->text, "large");
  EXPECT_EQ(after->Find("s")->text, "a,c");
  EXPECT_EQ(after->Find("n")->text, "255");
  std::smatch m;
  std::regex re("schema lookups (\\d+)");
  ASSERT_TRUE(std::regex_search(r.err, m, re)) << r.err;
  EXPECT_EQ(m[1].str(), "0") << "names came from information_schema, not the TABLE_MAP";
}

}  // namespace
}  // namespace binrelay::testing
