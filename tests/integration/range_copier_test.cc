// RangeCopier between two real MariaDB 10.11 servers: every column type
// arrives exactly (CHECKSUM TABLE), a row already on the target is left as
// it is (INSERT IGNORE), and statements respect their size limit.
#include "apply/range_copier.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "apply/key_range_chunker.h"
#include "apply/range_checksum.h"
#include "apply/table_shape.h"
#include "apply/target_session.h"
#include "replication/connection_sql_source.h"
#include "tests/harness/every_type_table.h"
#include "tests/harness/mariadb_sandbox.h"
#include "tests/harness/shared_sandbox.h"
#include "tests/harness/replica_fixture.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::apply {
namespace {

using testing::MariaDbSandbox;

constexpr char kUser[] = "copier";
constexpr char kPassword[] = "copier-pw";

class RangeCopierTest : public testing::SourceTargetSandboxTest<RangeCopierTest> {
 public:
  static constexpr testing::SandboxAccount kAccount{kUser, kPassword};

 protected:
  // Copies db.t from source to target in ranges of `rows`, with statements
  // of at most `batch_bytes`; returns the rows copied.
  static uint64_t CopyAll(const std::string& db, uint64_t rows, size_t batch_bytes) {
    replication::ConnectionSqlSource src(source_->ClientOptions(kUser, kPassword));
    replication::ConnectionSqlSource dst(target_->ClientOptions(kUser, kPassword));
    auto from = LoadTableShape(src, db, "t");
    auto to = LoadTableShape(dst, db, "t");
    EXPECT_TRUE(from.ok() && to.ok()) << from.status() << to.status();
    if (!from.ok() || !to.ok()) return 0;
    auto chunker = KeyRangeChunker::Create(*from);
    auto copier = RangeCopier::Create(*from, *to);
    EXPECT_TRUE(chunker.ok() && copier.ok()) << chunker.status() << copier.status();
    if (!chunker.ok() || !copier.ok()) return 0;
    TargetSession session(target_->ClientOptions(kUser, kPassword), 5);
    uint64_t copied = 0;
    for (int guard = 0; guard < 100000; ++guard) {
      auto next = chunker->Next(src, rows);
      EXPECT_TRUE(next.ok()) << next.status();
      if (!next.ok() || !next->has_value()) break;
      auto n = copier->Copy(src, session, **next, *chunker, batch_bytes);
      EXPECT_TRUE(n.ok()) << n.status();
      if (!n.ok()) break;
      copied += *n;
    }
    return copied;
  }
};

// Guards: any column type copied inexactly (a character set conversion, a
// rounded FLOAT (7 digits: 16777215) or DOUBLE, a TIMESTAMP shifted by a time zone, a trimmed
// BINARY, BIT, ENUM or SET written by name or bytes wrongly, GEOMETRY or
// JSON altered), with ranges of one and two rows and one row per
// statement.
TEST_F(RangeCopierTest, EveryColumnTypeArrivesExactly) {
  using testing::RowValues;
  for (MariaDbSandbox* s : {source_, target_}) {
    BR_ASSERT_OK(s->Execute("CREATE DATABASE rc_types CHARACTER SET utf8mb4"));
    BR_ASSERT_OK(s->Execute(testing::EveryTypeTableDdl("rc_types.t")));
  }
  BR_ASSERT_OK(source_->Execute("SET NAMES utf8mb4"));
  BR_ASSERT_OK(source_->Execute("SET time_zone = '+05:30'"));  // not the copier's
  BR_ASSERT_OK(source_->Execute("SET sql_mode = ''"));
  std::vector<std::string> nulls(testing::Columns().size(), "NULL");
  // FLOATs of 7 and more significant digits (the server prints a FLOAT
  // column with 6: a copy of its text would round them).
  std::vector<std::string> floats = testing::kOther;
  for (size_t i = 0; i < testing::Columns().size(); ++i) {
    if (std::string(testing::Columns()[i].name) == "f") floats[i] = "16777215";
  }
  std::vector<std::string> floats2 = testing::kOther;
  for (size_t i = 0; i < testing::Columns().size(); ++i) {
    if (std::string(testing::Columns()[i].name) == "f") floats2[i] = "1.2345678";
  }
  BR_ASSERT_OK(source_->Execute(absl::StrCat(
      "INSERT INTO rc_types.t VALUES ", RowValues(1, testing::kMins), ", ",
      RowValues(2, testing::kMaxes), ", ", RowValues(3, testing::kMisc), ", ",
      RowValues(4, nulls), ", ", RowValues(5, testing::kOther), ", ", RowValues(6, floats),
      ", ", RowValues(7, floats2))));
  // Sessions the copier opens default to another time zone: TIMESTAMP
  // text must still be read in UTC.
  BR_ASSERT_OK(source_->Execute("SET GLOBAL time_zone = '-07:00'"));
  const uint64_t copied = CopyAll("rc_types", 2, 1);
  BR_ASSERT_OK(source_->Execute("SET GLOBAL time_zone = SYSTEM"));
  EXPECT_EQ(copied, 7u);
  auto want = testing::ChecksumAllTables(*source_, "rc_types");
  auto got = testing::ChecksumAllTables(*target_, "rc_types");
  BR_ASSERT_OK(want.status());
  BR_ASSERT_OK(got.status());
  EXPECT_EQ(*want, *got);
  // The range checksum agrees too, across two servers whose sessions
  // default to different time zones.
  replication::ConnectionSqlSource src(source_->ClientOptions(kUser, kPassword));
  replication::ConnectionSqlSource dst(target_->ClientOptions(kUser, kPassword));
  BR_ASSERT_OK(source_->Execute("SET GLOBAL time_zone = '-07:00'"));
  auto shape = LoadTableShape(src, "rc_types", "t");
  BR_ASSERT_OK(shape.status());
  RangeChecksum sum(*shape);
  auto a = sum.Sum(src, "TRUE");
  auto b = sum.Sum(dst, "TRUE");
  BR_ASSERT_OK(source_->Execute("SET GLOBAL time_zone = SYSTEM"));
  BR_ASSERT_OK(a.status());
  BR_ASSERT_OK(b.status());
  EXPECT_EQ(a->rows, 7u);
  EXPECT_EQ(a->hash, b->hash);
}

// Guards: a copy overwriting a row a change already put on the target
// (the copy's image is older: copy_watermarks.h relies on INSERT IGNORE),
// and rows lost between statements cut by size.
TEST_F(RangeCopierTest, RowsAlreadyOnTheTargetAreKept) {
  for (MariaDbSandbox* s : {source_, target_}) {
    BR_ASSERT_OK(s->Execute("CREATE DATABASE rc_keep"));
    BR_ASSERT_OK(s->Execute("CREATE TABLE rc_keep.t (id INT PRIMARY KEY, v VARCHAR(100))"));
  }
  BR_ASSERT_OK(source_->Execute(
      "INSERT INTO rc_keep.t SELECT seq, REPEAT('s', seq % 100) FROM rc_keep.seq_1_to_2000"));
  BR_ASSERT_OK(target_->Execute("INSERT INTO rc_keep.t VALUES (1500, 'newer')"));
  EXPECT_EQ(CopyAll("rc_keep", 300, 4096), 2000u);
  auto rows = target_->Query("SELECT COUNT(*), MAX(IF(id = 1500, v, NULL)) FROM rc_keep.t");
  BR_ASSERT_OK(rows.status());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0][0].value_or(""), "2000");
  EXPECT_EQ((*rows)[0][1].value_or(""), "newer");
}

// Guards: a checksum that misses a changed value (a byte of a latin1
// string, the last digit of a DOUBLE, a NULL moved to the next column, the
// same change made to two rows, a '|' moved from one string column to the
// next, a FLOAT's 8th digit) or that differs between identical copies; and a repair (delete the
// target's range, copy it again) that does not restore the range.
TEST_F(RangeCopierTest, ChecksumFindsAndRepairsPlantedDifferences) {
  for (MariaDbSandbox* s : {source_, target_}) {
    BR_ASSERT_OK(s->Execute("CREATE DATABASE rc_sum"));
    BR_ASSERT_OK(s->Execute(
        "CREATE TABLE rc_sum.t (id INT PRIMARY KEY, s VARCHAR(20) CHARACTER SET latin1, "
        "d DOUBLE, n VARCHAR(5) NULL, m VARCHAR(5) NULL, f FLOAT)"));
  }
  BR_ASSERT_OK(source_->Execute(
      "INSERT INTO rc_sum.t SELECT seq, CONCAT('caf', CHAR(233), seq), seq / 7, "
      "IF(seq % 3, NULL, 'x'), IF(seq % 3, 'x', NULL), 16777000 + seq FROM rc_sum.seq_1_to_100"));
  BR_ASSERT_OK(source_->Execute("UPDATE rc_sum.t SET n = 'a|', m = 'b' WHERE id = 90"));
  EXPECT_EQ(CopyAll("rc_sum", 100, 1 << 20), 100u);
  replication::ConnectionSqlSource src(source_->ClientOptions(kUser, kPassword));
  replication::ConnectionSqlSource dst(target_->ClientOptions(kUser, kPassword));
  auto shape = LoadTableShape(src, "rc_sum", "t");
  BR_ASSERT_OK(shape.status());
  auto chunker = KeyRangeChunker::Create(*shape);
  BR_ASSERT_OK(chunker.status());
  auto copier = RangeCopier::Create(*shape, *shape);
  BR_ASSERT_OK(copier.status());
  std::vector<KeyRange> ranges;
  while (true) {
    auto next = chunker->Next(src, 20);
    BR_ASSERT_OK(next.status());
    if (!next->has_value()) break;
    ranges.push_back(**next);
  }
  ASSERT_EQ(ranges.size(), 6u);  // 5 of 20 rows and the (empty) rest
  RangeChecksum sum(*shape);
  auto same = [&](const KeyRange& r) {
    auto a = sum.Sum(src, r.where);
    auto b = sum.Sum(dst, r.where);
    EXPECT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
    return a.ok() && b.ok() && *a == *b;
  };
  for (const KeyRange& r : ranges) EXPECT_TRUE(same(r)) << r.where;
  // Each change planted on the target, and the range (of 20 ids) it is in.
  const std::vector<std::pair<std::string, size_t>> plants = {
      {"UPDATE rc_sum.t SET s = CONCAT('caf', CHAR(234), id) WHERE id = 3", 0},
      {"UPDATE rc_sum.t SET d = d + 1e-15 WHERE id = 30", 1},
      // Both print as 1.67770e7: a FLOAT's own text has 6 digits.
      {"UPDATE rc_sum.t SET f = f + 1 WHERE id = 35", 1},
      {"UPDATE rc_sum.t SET n = 'x', m = NULL WHERE id = 55", 2},  // was (NULL, 'x')
      {"DELETE FROM rc_sum.t WHERE id = 80", 3},
      // The same change to two rows: cancels out in a XOR of CRC32s.
      {"UPDATE rc_sum.t SET m = 'y' WHERE id IN (85, 86)", 4},
      // ('a|', 'b') and ('a', '|b') join to the same 'a|b'.
      {"UPDATE rc_sum.t SET n = 'a', m = '|b' WHERE id = 90", 4}};
  TargetSession session(target_->ClientOptions(kUser, kPassword), 5);
  for (const auto& [plant, i] : plants) {
    BR_ASSERT_OK(target_->Execute(plant));
    EXPECT_FALSE(same(ranges[i])) << "missed: " << plant;
    for (size_t j = 0; j < ranges.size(); ++j) {
      if (j != i) {
        EXPECT_TRUE(same(ranges[j])) << plant << " leaked into range " << j;
      }
    }
    BR_ASSERT_OK(session.Execute(absl::StrCat("DELETE FROM rc_sum.t WHERE ", ranges[i].where)));
    BR_ASSERT_OK(copier->Copy(src, session, ranges[i], *chunker, 1 << 20).status());
    EXPECT_TRUE(same(ranges[i])) << "not repaired: " << plant;
  }
  auto want = testing::ChecksumAllTables(*source_, "rc_sum");
  auto got = testing::ChecksumAllTables(*target_, "rc_sum");
  BR_ASSERT_OK(want.status());
  BR_ASSERT_OK(got.status());
  EXPECT_EQ(*want, *got);
}

}  // namespace
}  // namespace binrelay::apply
