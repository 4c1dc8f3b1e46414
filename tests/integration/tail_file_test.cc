// `binrelay tail --file` on local binlogs: good files, gzip, and files that
// are cut or corrupt in the middle.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "tests/harness/binrelay_process.h"
#include "tests/harness/fixtures.h"
#include "tests/harness/json_lite.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// Guards: a corrupt event making the whole file print nothing, or printing
// half a transaction: complete transactions before the damage are printed,
// then one error line naming the offset, and the exit code is non-zero.
TEST(TailFileTest, CorruptEventMidFilePrintsEarlierTransactionsThenFails) {
  BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/8.0__32_delete_rows_v2__binlog.000001");
  const std::string good =
      ReadFileOrDie(FixturePath("mysql-cdc-rs/8.0__32_delete_rows_v2__binlog.000001"));
  BR_ASSERT_OK_AND_ASSIGN(ProcessResult whole,
                          RunBinrelay({"tail", "--file", WriteTemp("whole.bin", good),
                                       "--tables", "*.*"},
                                      {}, std::chrono::seconds(30)));
  ASSERT_EQ(whole.exit_code, 0) << whole.Describe();
  BR_ASSERT_OK_AND_ASSIGN(std::vector<JsonValue> all, ParseJsonLines(whole.out));
  ASSERT_EQ(all.size(), 3u);  // insert, update, delete in three transactions
  // Flip one byte inside the last rows event (the DELETE): its CRC fails.
  const uint64_t delete_end = std::stoull(all[2].Find("pos")->text);
  std::string bad = good;
  bad[delete_end - 10] ^= 0x5A;
  BR_ASSERT_OK_AND_ASSIGN(ProcessResult r,
                          RunBinrelay({"tail", "--file", WriteTemp("bad.bin", bad), "--tables",
                                       "*.*"},
                                      {}, std::chrono::seconds(30)));
  EXPECT_NE(r.exit_code, 0) << r.Describe();
  BR_ASSERT_OK_AND_ASSIGN(std::vector<JsonValue> lines, ParseJsonLines(r.out));
  ASSERT_EQ(lines.size(), 2u) << r.out;  // the insert and the update, whole
  EXPECT_EQ(lines[0].Find("op")->text, "insert");
  EXPECT_EQ(lines[1].Find("op")->text, "update");
  std::vector<std::string> err = r.ErrLines();
  ASSERT_FALSE(err.empty());
  EXPECT_TRUE(absl::StrContains(err.back(), "CRC32 mismatch")) << err.back();
  EXPECT_TRUE(absl::StrContains(err.back(), "offset")) << err.back();
}

// Guards: a binlog cut inside a transaction (copied while the server wrote
// it) printing that transaction's first rows.
TEST(TailFileTest, FileCutInsideATransactionPrintsOnlyCompleteOnes) {
  BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/8.0__32_delete_rows_v2__binlog.000001");
  const std::string good =
      ReadFileOrDie(FixturePath("mysql-cdc-rs/8.0__32_delete_rows_v2__binlog.000001"));
  BR_ASSERT_OK_AND_ASSIGN(ProcessResult whole,
                          RunBinrelay({"tail", "--file", WriteTemp("w2.bin", good), "--tables",
                                       "*.*"},
                                      {}, std::chrono::seconds(30)));
  BR_ASSERT_OK_AND_ASSIGN(std::vector<JsonValue> all, ParseJsonLines(whole.out));
  ASSERT_EQ(all.size(), 3u);
  // End the file right after the DELETE rows event, before its XID.
  const uint64_t delete_end = std::stoull(all[2].Find("pos")->text);
  BR_ASSERT_OK_AND_ASSIGN(
      ProcessResult r,
      RunBinrelay({"tail", "--file", WriteTemp("cut.bin", good.substr(0, delete_end)),
                   "--tables", "*.*"},
                  {}, std::chrono::seconds(30)));
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  BR_ASSERT_OK_AND_ASSIGN(std::vector<JsonValue> lines, ParseJsonLines(r.out));
  EXPECT_EQ(lines.size(), 2u) << r.out;
}

TEST(TailFileTest, GzipCompressedBinlogIsRead) {
  BINRELAY_REQUIRE_FIXTURE("mysql-binlog-connector-java/mysql-bin.sakila.gz");
  BR_ASSERT_OK_AND_ASSIGN(
      ProcessResult r,
      RunBinrelay({"tail", "--file",
                   FixturePath("mysql-binlog-connector-java/mysql-bin.sakila.gz"), "--tables",
                   "sakila.actor"},
                  {}, std::chrono::seconds(60)));
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(r.OutLines().size(), 200u);
}

}  // namespace
}  // namespace binrelay::testing
