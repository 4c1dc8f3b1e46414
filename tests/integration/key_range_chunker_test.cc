// KeyRangeChunker against a real MariaDB 10.11: the ranges of a table cover
// every row exactly once, in key order, for single and composite keys of
// every supported type, and resume after a bound.
#include "apply/move_session.h"
#include "apply/key_range_chunker.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "apply/table_shape.h"
#include "replication/connection_sql_source.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/shared_sandbox.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::apply {
namespace {

constexpr char kUser[] = "mover";
constexpr char kPassword[] = "mover-pw";

class KeyRangeChunkerTest : public testing::SharedSandboxTest<KeyRangeChunkerTest> {
 public:
  static constexpr testing::SandboxAccount kAccount{kUser, kPassword};

 protected:
  replication::ConnectionSqlSource Source() {
    return replication::ConnectionSqlSource(apply::InMoveSession(sandbox_->ClientOptions(kUser, kPassword)));
  }

  // Walks `db`.`t` in ranges of `rows` and checks, with the server's own
  // COUNT(*), that the ranges hold every row once; returns the ranges.
  std::vector<KeyRange> Walk(const std::string& db, uint64_t rows,
                             std::optional<KeyBound> after = std::nullopt) {
    auto source = Source();
    auto shape = LoadTableShape(source, db, "t");
    EXPECT_TRUE(shape.ok()) << shape.status();
    if (!shape.ok()) return {};
    auto chunker = KeyRangeChunker::Create(*shape, after);
    EXPECT_TRUE(chunker.ok()) << chunker.status();
    if (!chunker.ok()) return {};
    std::vector<KeyRange> ranges;
    uint64_t total = 0;
    for (int guard = 0; guard < 10000; ++guard) {
      auto next = chunker->Next(source, rows);
      EXPECT_TRUE(next.ok()) << next.status();
      if (!next.ok() || !next->has_value()) break;
      auto count = replication::QueryValue(
          source, absl::StrCat("SELECT COUNT(*) FROM ", chunker->table_sql(), " WHERE ",
                               (*next)->where));
      EXPECT_TRUE(count.ok()) << count.status() << " " << (*next)->where;
      if (count.ok() && *count) {
        total += std::stoull(**count);
        if ((*next)->upper) {
          EXPECT_EQ(std::stoull(**count), rows) << (*next)->where;
        }
      }
      ranges.push_back(std::move(**next));
    }
    std::string where = after ? chunker->After(*after) : "TRUE";
    auto all = replication::QueryValue(
        source, absl::StrCat("SELECT COUNT(*) FROM ", chunker->table_sql(), " WHERE ", where));
    EXPECT_TRUE(all.ok());
    if (all.ok() && *all) {
      EXPECT_EQ(total, std::stoull(**all)) << db;
    }
    return ranges;
  }
};

// Asserts the ranges' upper bounds rise strictly in ordered-key bytes.
void ExpectRisingBounds(const std::vector<KeyRange>& ranges) {
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (!ranges[i].upper || !ranges[i - 1].upper) continue;
    EXPECT_LT(ranges[i - 1].upper->ordered, ranges[i].upper->ordered) << ranges[i].where;
  }
}

// Guards: rows skipped or copied twice at range boundaries (an off-by-one
// in the bound, an exclusive/inclusive mix-up), negative keys ordered
// wrongly, and a last range that stops short of the table's end.
TEST_F(KeyRangeChunkerTest, IntegerKeysAreCoveredOnceInOrder) {
  BR_ASSERT_OK(sandbox_->Execute("CREATE DATABASE ck_int"));
  BR_ASSERT_OK(sandbox_->Execute("CREATE TABLE ck_int.t (id BIGINT PRIMARY KEY, v INT)"));
  BR_ASSERT_OK(sandbox_->Execute(
      "INSERT INTO ck_int.t SELECT CAST(seq AS SIGNED) * 3 - 500, seq FROM ck_int.seq_1_to_1000"));
  auto ranges = Walk("ck_int", 7);
  ASSERT_EQ(ranges.size(), 1000u / 7 + 1);
  EXPECT_FALSE(ranges.back().upper.has_value());
  ExpectRisingBounds(ranges);
  EXPECT_EQ(ranges.front().upper->values[0], "-479");  // the 7th key: 7*3-500
  // A resume after the 10th range covers exactly what is after it.
  auto rest = Walk("ck_int", 50, ranges[9].upper);
  ASSERT_FALSE(rest.empty());
  EXPECT_EQ(rest.front().lower->values, ranges[9].upper->values);
}

// Guards: composite keys compared as a whole tuple (a row with a smaller
// second column but larger first column missed), character keys converted
// through a character set or compared in the wrong collation (rows
// equal under utf8mb4_general_ci but stored with different bytes), and
// DECIMAL and DATETIME bounds written back inexactly.
TEST_F(KeyRangeChunkerTest, CompositeAndCharacterKeysAreCoveredOnce) {
  BR_ASSERT_OK(sandbox_->Execute("CREATE DATABASE ck_mix CHARACTER SET utf8mb4"));
  BR_ASSERT_OK(sandbox_->Execute(
      "CREATE TABLE ck_mix.t (a INT, b VARCHAR(20) COLLATE utf8mb4_general_ci, "
      "c DECIMAL(8,3), d DATETIME(3), v INT, PRIMARY KEY (a, b, c, d))"));
  BR_ASSERT_OK(sandbox_->Execute(
      "INSERT INTO ck_mix.t SELECT seq % 5, CONCAT(IF(seq % 2, 'é', 'E'), seq % 7, "
      "IF(seq % 3, ' x', 'ß')), (seq % 11) - 5.125, "
      "TIMESTAMP('2024-01-01') + INTERVAL ((seq % 13) * 1001000) MICROSECOND, "
      "seq FROM ck_mix.seq_1_to_900 ON DUPLICATE KEY UPDATE v = v"));
  for (uint64_t rows : {1u, 4u, 33u}) {
    auto ranges = Walk("ck_mix", rows);
    ASSERT_GT(ranges.size(), 1u);
  }
  BR_ASSERT_OK(sandbox_->Execute("CREATE DATABASE ck_bin"));
  BR_ASSERT_OK(sandbox_->Execute(
      "CREATE TABLE ck_bin.t (k VARBINARY(16) PRIMARY KEY, v INT)"));
  BR_ASSERT_OK(sandbox_->Execute(
      "INSERT INTO ck_bin.t SELECT UNHEX(HEX(seq * 7919 % 65536)), seq FROM ck_bin.seq_1_to_300 "
      "ON DUPLICATE KEY UPDATE v = v"));
  BR_ASSERT_OK(sandbox_->Execute("INSERT INTO ck_bin.t VALUES (X'00', 1), (X'0000', 2), (X'', 3)"));
  ExpectRisingBounds(Walk("ck_bin", 5));
}

// Guards the second pass over a table (the move's checksum) cut from the
// bounds of the first: ranges that skip or repeat rows where a joined
// range meets the next, or a last range that stops short of the end.
TEST_F(KeyRangeChunkerTest, RangesCutAgainFromEarlierBoundsCoverEveryRowOnce) {
  BR_ASSERT_OK(sandbox_->Execute("CREATE DATABASE ck_again"));
  BR_ASSERT_OK(sandbox_->Execute("CREATE TABLE ck_again.t (id INT PRIMARY KEY, v INT)"));
  BR_ASSERT_OK(sandbox_->Execute(
      "INSERT INTO ck_again.t SELECT seq * 2, seq FROM ck_again.seq_1_to_500"));
  auto first = Walk("ck_again", 9);
  ASSERT_GT(first.size(), 10u);
  auto source = Source();
  BR_ASSERT_OK_AND_ASSIGN(TableShape shape, LoadTableShape(source, "ck_again", "t"));
  BR_ASSERT_OK_AND_ASSIGN(KeyRangeChunker again, KeyRangeChunker::Create(shape));
  std::vector<KeyRange> joined;
  for (size_t i = 3; i < first.size(); i += 4) {
    if (!first[i].upper) break;
    std::optional<KeyRange> r = again.NextTo(first[i].upper);
    ASSERT_TRUE(r.has_value());
    joined.push_back(std::move(*r));
  }
  std::optional<KeyRange> to_end = again.NextTo(std::nullopt);
  ASSERT_TRUE(to_end.has_value());
  EXPECT_FALSE(to_end->upper.has_value());
  joined.push_back(std::move(*to_end));
  EXPECT_FALSE(again.NextTo(std::nullopt).has_value()) << "nothing after the end";
  ExpectRisingBounds(joined);
  uint64_t total = 0;
  for (size_t i = 0; i < joined.size(); ++i) {
    auto count = replication::QueryValue(
        source, absl::StrCat("SELECT COUNT(*) FROM ck_again.t WHERE ", joined[i].where));
    BR_ASSERT_OK(count.status());
    ASSERT_TRUE(count->has_value());
    if (joined[i].upper) {
      EXPECT_EQ(std::stoull(**count), 36u) << joined[i].where;  // 4 ranges of 9
    }
    total += std::stoull(**count);
  }
  EXPECT_EQ(total, 500u);
}

// Guards: a table the copier cannot range over accepted (and copied
// wrongly or not at all later).
TEST_F(KeyRangeChunkerTest, TablesWithoutAnOrderableKeyAreRefusedByName) {
  BR_ASSERT_OK(sandbox_->Execute("CREATE DATABASE ck_bad"));
  BR_ASSERT_OK(sandbox_->Execute("CREATE TABLE ck_bad.nokey (v INT)"));
  BR_ASSERT_OK(sandbox_->Execute("CREATE TABLE ck_bad.fkey (f FLOAT PRIMARY KEY)"));
  auto source = Source();
  auto nokey = LoadTableShape(source, "ck_bad", "nokey");
  BR_ASSERT_OK(nokey.status());
  auto a = KeyRangeChunker::Create(*nokey);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("ck_bad.nokey has no primary key"), std::string::npos)
      << a.status();
  auto fkey = LoadTableShape(source, "ck_bad", "fkey");
  BR_ASSERT_OK(fkey.status());
  auto b = KeyRangeChunker::Create(*fkey);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("`f` is float"), std::string::npos) << b.status();
}

}  // namespace
}  // namespace binrelay::apply
