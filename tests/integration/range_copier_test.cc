// RangeCopier between two real MariaDB 10.11 servers, writing multi-row
// INSERT IGNORE text and bulk commands: every column type arrives exactly
// (CHECKSUM TABLE), a row already on the target is left as it is (INSERT
// IGNORE), statements respect their size limit, and a row the target
// changes or refuses fails the copy.
#include "apply/move_session.h"
#include "apply/range_copier.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "apply/key_range_chunker.h"
#include "apply/range_checksum.h"
#include "apply/table_shape.h"
#include "apply/target_session.h"
#include "protocol/status_macros.h"
#include "replication/connection_sql_source.h"
#include "tests/harness/every_type_table.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/shared_sandbox.h"
#include "tests/harness/replica_fixture.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::apply {
namespace {

using testing::ServerSandbox;

constexpr char kUser[] = "copier";
constexpr char kPassword[] = "copier-pw";

class RangeCopierTest : public testing::SourceTargetSandboxTest<RangeCopierTest> {
 public:
  static constexpr testing::SandboxAccount kAccount{kUser, kPassword};

 protected:
  // Copies db.t from source to target in ranges of `rows`, with statements
  // of at most `batch_bytes`, as bulk commands or text; returns the rows
  // copied. `error` (if given) receives the first failure instead of it
  // failing the test.
  // `source` and `target` default to the suite's servers.
  static uint64_t CopyAll(const std::string& db, uint64_t rows, size_t batch_bytes, bool bulk,
                          absl::Status* error = nullptr, uint64_t* unique_conflicts = nullptr,
                          ServerSandbox* source = nullptr, ServerSandbox* target = nullptr) {
    if (source == nullptr) source = source_;
    if (target == nullptr) target = target_;
    replication::ConnectionSqlSource src(apply::InMoveSession(source->ClientOptions(kUser, kPassword)));
    replication::ConnectionSqlSource dst(apply::InMoveSession(target->ClientOptions(kUser, kPassword)));
    auto from = LoadTableShape(src, db, "t");
    auto to = LoadTableShape(dst, db, "t");
    EXPECT_TRUE(from.ok() && to.ok()) << from.status() << to.status();
    if (!from.ok() || !to.ok()) return 0;
    auto chunker = KeyRangeChunker::Create(*from);
    auto copier = RangeCopier::Create(*from, *to, bulk);
    EXPECT_TRUE(chunker.ok() && copier.ok()) << chunker.status() << copier.status();
    if (!chunker.ok() || !copier.ok()) return 0;
    TargetSession session(target->ClientOptions(kUser, kPassword), 5);
    uint64_t copied = 0;
    for (int guard = 0; guard < 100000; ++guard) {
      auto next = chunker->Next(src, rows);
      EXPECT_TRUE(next.ok()) << next.status();
      if (!next.ok() || !next->has_value()) break;
      auto n = copier->Copy(src, session, **next, *chunker, batch_bytes);
      if (!n.ok() && error != nullptr) {
        *error = n.status();
        break;
      }
      EXPECT_TRUE(n.ok()) << n.status();
      if (!n.ok()) break;
      copied += n->rows;
      if (unique_conflicts != nullptr) *unique_conflicts += n->unique_conflicts;
    }
    return copied;
  }

  // Two MySQL 9.7 servers (server_id 1 and 2), each with the copier's
  // account: source and target of the MySQL tests.
  static absl::Status StartMySqlPair(std::unique_ptr<ServerSandbox> (&servers)[2]) {
    for (uint32_t id : {1u, 2u}) {
      testing::ServerSandboxOptions o;
      o.flavour = "mysql-9.7";
      o.server_id = id;
      BR_ASSIGN_OR_RETURN(servers[id - 1], ServerSandbox::Start(o));
      BR_RETURN_IF_ERROR(servers[id - 1]->CreateUser(kUser, kPassword, kAccount.grants));
    }
    return absl::OkStatus();
  }

  static uint64_t TargetCounter(const std::string& name, ServerSandbox* to = nullptr) {
    auto r = (to ? to : target_)->Query("SHOW GLOBAL STATUS LIKE '" + name + "'");
    if (!r.ok() || r->empty() || !(*r)[0][1]) return 0;
    return std::stoull(*(*r)[0][1]);
  }
};

// The copy's two ways of writing, each test run with both.
class RangeCopierModes : public RangeCopierTest, public ::testing::WithParamInterface<bool> {
 protected:
  bool bulk() const { return GetParam(); }
  std::string Db(const std::string& base) const { return base + (bulk() ? "_bulk" : "_text"); }
};
INSTANTIATE_TEST_SUITE_P(Writes, RangeCopierModes, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Bulk" : "Text"; });

// Guards: any column type copied inexactly (a character set conversion, a
// rounded FLOAT (7 digits: 16777215) or DOUBLE, a TIMESTAMP shifted by a time zone, a trimmed
// BINARY, BIT, ENUM or SET written by name or bytes wrongly, GEOMETRY or
// JSON altered), with ranges of one and two rows and one row per
// statement; and a bulk setting that does not change what is sent (bulk
// commands need a prepared statement on the target, text none).
TEST_P(RangeCopierModes, EveryColumnTypeArrivesExactly) {
  using testing::RowValues;
  const std::string db = Db("rc_types");
  for (ServerSandbox* s : {source_, target_}) {
    BR_ASSERT_OK(s->Execute("CREATE DATABASE " + db + " CHARACTER SET utf8mb4"));
    BR_ASSERT_OK(s->Execute(testing::EveryTypeTableDdl(db + ".t")));
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
      "INSERT INTO ", db, ".t VALUES ", RowValues(1, testing::kMins), ", ",
      RowValues(2, testing::kMaxes), ", ", RowValues(3, testing::kMisc), ", ",
      RowValues(4, nulls), ", ", RowValues(5, testing::kOther), ", ", RowValues(6, floats),
      ", ", RowValues(7, floats2))));
  // Sessions the copier opens default to another time zone: TIMESTAMP
  // text must still be read in UTC.
  BR_ASSERT_OK(source_->Execute("SET GLOBAL time_zone = '-07:00'"));
  const uint64_t prepares = TargetCounter("Com_stmt_prepare");
  const uint64_t copied = CopyAll(db, 2, 1, bulk());
  BR_ASSERT_OK(source_->Execute("SET GLOBAL time_zone = SYSTEM"));
  EXPECT_EQ(copied, 7u);
  if (bulk()) {
    EXPECT_GT(TargetCounter("Com_stmt_prepare"), prepares);
  } else {
    EXPECT_EQ(TargetCounter("Com_stmt_prepare"), prepares);
  }
  auto want = testing::ChecksumAllTables(*source_, db);
  auto got = testing::ChecksumAllTables(*target_, db);
  BR_ASSERT_OK(want.status());
  BR_ASSERT_OK(got.status());
  EXPECT_EQ(*want, *got);
  // Again, every row in one statement or command: a NULL row among typed
  // ones (a bulk parameter's type is set by its first non-NULL value).
  BR_ASSERT_OK(target_->Execute("DELETE FROM " + db + ".t"));
  EXPECT_EQ(CopyAll(db, 100, 1 << 20, bulk()), 7u);
  auto got_whole = testing::ChecksumAllTables(*target_, db);
  BR_ASSERT_OK(got_whole.status());
  EXPECT_EQ(*want, *got_whole);
  // The range checksum agrees too, across two servers whose sessions
  // default to different time zones.
  replication::ConnectionSqlSource src(apply::InMoveSession(source_->ClientOptions(kUser, kPassword)));
  replication::ConnectionSqlSource dst(apply::InMoveSession(target_->ClientOptions(kUser, kPassword)));
  BR_ASSERT_OK(source_->Execute("SET GLOBAL time_zone = '-07:00'"));
  auto shape = LoadTableShape(src, db, "t");
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

// Guards the copy into a MySQL target, which has no bulk command: rows go
// as prepared multi-row INSERT IGNOREs (COM_STMT_EXECUTE), and every column
// type must arrive exactly (CHECKSUM TABLE, MySQL on both sides): JSON as
// text (as a binary string it is error 3144), a batch of 37 rows cut into
// statements of 32, 4 and 1 rows without a row skipped or repeated, NULLs
// at every offset. The setting must take effect: statements executed on
// the target, and none with bulk off.
TEST_F(RangeCopierTest, OnMySqlEveryColumnTypeArrivesExactlyThroughPreparedInserts) {
  BINRELAY_REQUIRE_FLAVOUR("mysql-9.7");
  using testing::RowValues;
  std::unique_ptr<ServerSandbox> servers[2];
  BR_ASSERT_OK(StartMySqlPair(servers));
  ServerSandbox* from = servers[0].get();
  ServerSandbox* to = servers[1].get();
  for (ServerSandbox* s : {from, to}) {
    BR_ASSERT_OK(s->Execute("CREATE DATABASE rc_my CHARACTER SET utf8mb4"));
    BR_ASSERT_OK(s->Execute(testing::EveryTypeTableDdl("rc_my.t")));
  }
  BR_ASSERT_OK(from->Execute("SET NAMES utf8mb4"));
  BR_ASSERT_OK(from->Execute("SET sql_mode = ''"));
  std::vector<std::string> nulls(testing::Columns().size(), "NULL");
  std::string values = absl::StrCat(RowValues(1, testing::kMins), ", ",
                                    RowValues(2, testing::kMaxes), ", ",
                                    RowValues(3, testing::kMisc), ", ", RowValues(4, nulls));
  for (int id = 5; id <= 37; ++id) {
    absl::StrAppend(&values, ", ", RowValues(id, id % 5 == 0 ? nulls : testing::kOther));
  }
  BR_ASSERT_OK(from->Execute("INSERT INTO rc_my.t VALUES " + values));
  auto want = testing::ChecksumAllTables(*from, "rc_my");
  BR_ASSERT_OK(want.status());
  for (const bool bulk : {true, false}) {
    BR_ASSERT_OK(to->Execute("DELETE FROM rc_my.t"));
    const uint64_t executes = TargetCounter("Com_stmt_execute", to);
    EXPECT_EQ(CopyAll("rc_my", 100, 1 << 20, bulk, nullptr, nullptr, from, to), 37u);
    if (bulk) {
      EXPECT_GE(TargetCounter("Com_stmt_execute", to), executes + 3) << "32, 4 and 1 rows";
    } else {
      EXPECT_EQ(TargetCounter("Com_stmt_execute", to), executes);
    }
    auto got = testing::ChecksumAllTables(*to, "rc_my");
    BR_ASSERT_OK(got.status());
    EXPECT_EQ(*want, *got) << (bulk ? "prepared" : "text");
  }
  // The move's range checksum in MySQL's form (BIT_XOR of binary strings)
  // sums every type to what its integer form (MariaDB's) does, so a move
  // between flavours compares like with like; a changed row changes it; no
  // rows sum to 0 in both forms.
  replication::ConnectionSqlSource src(apply::InMoveSession(from->ClientOptions(kUser, kPassword)));
  replication::ConnectionSqlSource dst(apply::InMoveSession(to->ClientOptions(kUser, kPassword)));
  auto shape = LoadTableShape(src, "rc_my", "t");
  BR_ASSERT_OK(shape.status());
  RangeChecksum numeric(*shape, RangeChecksum::Server::kMariaDb);
  RangeChecksum binary(*shape, RangeChecksum::Server::kMySql);
  BR_ASSERT_OK_AND_ASSIGN(RangeSum as_numbers, numeric.Sum(src, "TRUE"));
  BR_ASSERT_OK_AND_ASSIGN(RangeSum as_bytes, binary.Sum(src, "TRUE"));
  EXPECT_EQ(as_numbers.rows, 37u);
  EXPECT_NE(as_numbers.hash, 0u);
  EXPECT_EQ(as_numbers, as_bytes);
  BR_ASSERT_OK_AND_ASSIGN(RangeSum on_target, binary.Sum(dst, "TRUE"));
  EXPECT_EQ(on_target, as_bytes);
  for (const RangeChecksum* form : {&numeric, &binary}) {
    BR_ASSERT_OK_AND_ASSIGN(RangeSum none, form->Sum(src, "FALSE"));
    EXPECT_EQ(none, (RangeSum{0, 0}));
  }
  BR_ASSERT_OK(to->Execute("UPDATE rc_my.t SET id = 100 WHERE id = 3"));
  BR_ASSERT_OK_AND_ASSIGN(RangeSum changed, binary.Sum(dst, "TRUE"));
  EXPECT_EQ(changed.rows, 37u);
  EXPECT_NE(changed.hash, as_bytes.hash);
}

// Guards the copy's sql_mode on a MySQL target. Bound values must reach
// MySQL's statement text (what its logs and audit see) copied, not escaped
// character by character: the general log shows 'a\b' as sent, which only
// NO_BACKSLASH_ESCAPES gives. A text copy on the same session afterwards
// must switch the mode back: its literals escape backslashes, and under
// NO_BACKSLASH_ESCAPES 'a\\b' would store two of them (CHECKSUM TABLE).
TEST_F(RangeCopierTest, OnMySqlBoundCopyIsLoggedUnescapedAndATextCopyAfterItStaysExact) {
  BINRELAY_REQUIRE_FLAVOUR("mysql-9.7");
  std::unique_ptr<ServerSandbox> servers[2];
  BR_ASSERT_OK(StartMySqlPair(servers));
  ServerSandbox* from = servers[0].get();
  ServerSandbox* to = servers[1].get();
  for (ServerSandbox* s : {from, to}) {
    BR_ASSERT_OK(s->Execute("CREATE DATABASE rc_esc CHARACTER SET utf8mb4"));
    BR_ASSERT_OK(s->Execute(
        "CREATE TABLE rc_esc.t (id INT PRIMARY KEY, s VARCHAR(64), b VARBINARY(64))"));
  }
  BR_ASSERT_OK(from->Execute("SET NAMES utf8mb4"));
  BR_ASSERT_OK(from->Execute(
      "INSERT INTO rc_esc.t VALUES (1, 'a\\\\b', X'00275C22'), (2, 'it''s \"q\"', NULL), "
      "(3, 'line\\nnext\\\\', X'5C'), (4, '\xC3\xA9\\\\\xC3\xA9', X'E95C27')"));
  auto want = testing::ChecksumAllTables(*from, "rc_esc");
  BR_ASSERT_OK(want.status());
  replication::ConnectionSqlSource src(apply::InMoveSession(from->ClientOptions(kUser, kPassword)));
  replication::ConnectionSqlSource dst(apply::InMoveSession(to->ClientOptions(kUser, kPassword)));
  BR_ASSERT_OK_AND_ASSIGN(TableShape from_shape, LoadTableShape(src, "rc_esc", "t"));
  BR_ASSERT_OK_AND_ASSIGN(TableShape to_shape, LoadTableShape(dst, "rc_esc", "t"));
  BR_ASSERT_OK_AND_ASSIGN(KeyRangeChunker chunker, KeyRangeChunker::Create(from_shape));
  BR_ASSERT_OK_AND_ASSIGN(auto range, chunker.Next(src, 100));
  ASSERT_TRUE(range.has_value());
  TargetSession session(to->ClientOptions(kUser, kPassword), 5);
  auto mode = [&] {
    auto r = session.Query("SELECT @@session.sql_mode");
    EXPECT_TRUE(r.ok() && r->rows.size() == 1 && r->rows[0][0]) << r.status();
    return r.ok() && r->rows.size() == 1 ? r->rows[0][0].value_or("") : std::string("?");
  };
  BR_ASSERT_OK(to->Execute("SET GLOBAL log_output = 'TABLE', GLOBAL general_log = ON"));
  BR_ASSERT_OK_AND_ASSIGN(RangeCopier bound, RangeCopier::Create(from_shape, to_shape, true));
  BR_ASSERT_OK_AND_ASSIGN(CopyResult n, bound.Copy(src, session, *range, chunker, 1 << 20));
  BR_ASSERT_OK(to->Execute("SET GLOBAL general_log = OFF"));
  EXPECT_EQ(n.rows, 4u);
  EXPECT_TRUE(absl::StrContains(mode(), "NO_BACKSLASH_ESCAPES")) << mode();
  // 'a\b' as sent (27 61 5C 62 27), not 'a\\b'.
  auto logged = to->Query(
      "SELECT SUM(LOCATE(X'27615C6227', argument) > 0), SUM(LOCATE(X'27615C5C6227', argument) > 0) "
      "FROM mysql.general_log WHERE command_type = 'Execute' AND argument LIKE 'INSERT IGNORE%'");
  BR_ASSERT_OK(logged.status());
  ASSERT_EQ(logged->size(), 1u);
  EXPECT_EQ((*logged)[0][0].value_or("NULL"), "1");
  EXPECT_EQ((*logged)[0][1].value_or("NULL"), "0");
  auto got = testing::ChecksumAllTables(*to, "rc_esc");
  BR_ASSERT_OK(got.status());
  EXPECT_EQ(*want, *got) << "bound";

  BR_ASSERT_OK(to->Execute("DELETE FROM rc_esc.t"));
  BR_ASSERT_OK_AND_ASSIGN(RangeCopier text, RangeCopier::Create(from_shape, to_shape, false));
  BR_ASSERT_OK_AND_ASSIGN(n, text.Copy(src, session, *range, chunker, 1 << 20));
  EXPECT_EQ(n.rows, 4u);
  EXPECT_FALSE(absl::StrContains(mode(), "NO_BACKSLASH_ESCAPES")) << mode();
  got = testing::ChecksumAllTables(*to, "rc_esc");
  BR_ASSERT_OK(got.status());
  EXPECT_EQ(*want, *got) << "text after bound, same session";
}

// Guards: a copy overwriting a row a change already put on the target
// (the copy's image is older: copy_watermarks.h relies on INSERT IGNORE),
// and rows lost between statements cut by size.
TEST_P(RangeCopierModes, RowsAlreadyOnTheTargetAreKept) {
  const std::string db = Db("rc_keep");
  for (ServerSandbox* s : {source_, target_}) {
    BR_ASSERT_OK(s->Execute("CREATE DATABASE " + db));
    BR_ASSERT_OK(s->Execute("CREATE TABLE " + db + ".t (id INT PRIMARY KEY, v VARCHAR(100))"));
  }
  BR_ASSERT_OK(source_->Execute("INSERT INTO " + db + ".t SELECT seq, REPEAT('s', seq % 100) FROM " +
                                db + ".seq_1_to_2000"));
  BR_ASSERT_OK(target_->Execute("INSERT INTO " + db + ".t VALUES (1500, 'newer')"));
  EXPECT_EQ(CopyAll(db, 300, 4096, bulk()), 2000u);
  auto rows = target_->Query("SELECT COUNT(*), MAX(IF(id = 1500, v, NULL)) FROM " + db + ".t");
  BR_ASSERT_OK(rows.status());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0][0].value_or(""), "2000");
  EXPECT_EQ((*rows)[0][1].value_or(""), "newer");
}

// Guards: INSERT IGNORE hiding an inexact copy. A row the target stores
// changed (1265: a value truncated to a narrower target column, which the
// shape check would refuse; the copier must not rely on it) fails the copy
// with the target's warning; a row refused on a secondary unique key (1062
// on `u`, not the primary key) is counted for the move's checksum, and
// the rest of the range still arrives.
TEST_P(RangeCopierModes, RowTheTargetChangesFailsTheCopyAndATakenUniqueValueIsCounted) {
  const std::string db = Db("rc_warn");
  for (ServerSandbox* s : {source_, target_}) {
    BR_ASSERT_OK(s->Execute("CREATE DATABASE " + db));
  }
  BR_ASSERT_OK(source_->Execute("CREATE TABLE " + db +
                                ".t (id INT PRIMARY KEY, u INT, v VARCHAR(20), UNIQUE KEY u (u))"));
  BR_ASSERT_OK(target_->Execute("CREATE TABLE " + db +
                                ".t (id INT PRIMARY KEY, u INT, v VARCHAR(20), UNIQUE KEY u (u))"));
  BR_ASSERT_OK(source_->Execute("INSERT INTO " + db +
                                ".t VALUES (1, 1, 'abc'), (2, 2, 'b'), (3, 3, 'c')"));
  BR_ASSERT_OK(target_->Execute("INSERT INTO " + db + ".t VALUES (9, 2, 'taken')"));
  absl::Status error;
  uint64_t conflicts = 0;
  EXPECT_EQ(CopyAll(db, 100, 1 << 20, bulk(), &error, &conflicts), 3u);
  BR_EXPECT_OK(error);
  EXPECT_EQ(conflicts, 1u);
  auto rows = target_->Query("SELECT GROUP_CONCAT(id ORDER BY id) FROM " + db + ".t");
  BR_ASSERT_OK(rows.status());
  EXPECT_EQ((*rows)[0][0].value_or(""), "1,3,9");

  BR_ASSERT_OK(target_->Execute("DELETE FROM " + db + ".t"));
  BR_ASSERT_OK(target_->Execute("ALTER TABLE " + db + ".t MODIFY v VARCHAR(1)"));
  error = absl::OkStatus();
  CopyAll(db, 100, 1 << 20, bulk(), &error);
  EXPECT_EQ(error.code(), absl::StatusCode::kDataLoss) << error;
  EXPECT_TRUE(absl::StrContains(error.message(), "1265")) << error;
}

// Guards: a repair (kReplace, the checksum's copy of a differing range)
// that leaves a row out because a stale row outside the range still holds
// its UNIQUE value on the target: at the snapshot's position that holder
// is wrong, and the range must become exactly the source's.
TEST_P(RangeCopierModes, RepairTakesAUniqueValueFromAStaleRowOutsideTheRange) {
  const std::string db = Db("rc_replace");
  for (ServerSandbox* s : {source_, target_}) {
    BR_ASSERT_OK(s->Execute("CREATE DATABASE " + db));
    BR_ASSERT_OK(s->Execute("CREATE TABLE " + db +
                            ".t (id INT PRIMARY KEY, u INT, UNIQUE KEY u (u))"));
  }
  BR_ASSERT_OK(source_->Execute("INSERT INTO " + db + ".t VALUES (1, 1), (2, 2), (9, 90)"));
  BR_ASSERT_OK(target_->Execute("INSERT INTO " + db + ".t VALUES (1, 1), (9, 2)"));
  replication::ConnectionSqlSource src(apply::InMoveSession(source_->ClientOptions(kUser, kPassword)));
  BR_ASSERT_OK_AND_ASSIGN(TableShape shape, LoadTableShape(src, db, "t"));
  BR_ASSERT_OK_AND_ASSIGN(KeyRangeChunker chunker, KeyRangeChunker::Create(shape));
  BR_ASSERT_OK_AND_ASSIGN(RangeCopier copier, RangeCopier::Create(shape, shape, bulk()));
  TargetSession session(target_->ClientOptions(kUser, kPassword), 5);
  const KeyRange range{.where = "`id` <= 5"};
  BR_ASSERT_OK(session.Execute("DELETE FROM " + db + ".t WHERE id <= 5"));
  BR_ASSERT_OK_AND_ASSIGN(CopyResult r, copier.Copy(src, session, range, chunker, 1 << 20,
                                                    RangeCopier::Write::kReplace));
  EXPECT_EQ(r.rows, 2u);
  EXPECT_EQ(r.unique_conflicts, 0u);
  auto rows = target_->Query("SELECT GROUP_CONCAT(id, ':', u ORDER BY id) FROM " + db + ".t");
  BR_ASSERT_OK(rows.status());
  EXPECT_EQ((*rows)[0][0].value_or(""), "1:1,2:2");
}

// Guards: a checksum that misses a changed value (a byte of a latin1
// string, the last digit of a DOUBLE, a NULL moved to the next column, the
// same change made to two rows, a '|' moved from one string column to the
// next, also into the last column, whose text carries no length, NULL and
// '' swapped there, a FLOAT's 8th digit) or that differs between identical
// copies; and a repair (delete the target's range, copy it again) that does
// not restore the range.
TEST_F(RangeCopierTest, ChecksumFindsAndRepairsPlantedDifferences) {
  for (ServerSandbox* s : {source_, target_}) {
    BR_ASSERT_OK(s->Execute("CREATE DATABASE rc_sum"));
    BR_ASSERT_OK(s->Execute(
        "CREATE TABLE rc_sum.t (id INT PRIMARY KEY, s VARCHAR(20) CHARACTER SET latin1, "
        "d DOUBLE, f FLOAT, n VARCHAR(5) NULL, m VARCHAR(5) NULL, w VARCHAR(5) NOT NULL, "
        "z VARCHAR(5) NULL)"));
  }
  BR_ASSERT_OK(source_->Execute(
      "INSERT INTO rc_sum.t SELECT seq, CONCAT('caf', CHAR(233), seq), seq / 7, 16777000 + seq, "
      "IF(seq % 3, NULL, 'x'), IF(seq % 3, 'x', NULL), 'w', IF(seq % 2, NULL, '') "
      "FROM rc_sum.seq_1_to_100"));
  BR_ASSERT_OK(source_->Execute("UPDATE rc_sum.t SET n = 'a|', m = 'b' WHERE id = 90"));
  BR_ASSERT_OK(source_->Execute("UPDATE rc_sum.t SET w = 'b', z = '|c' WHERE id = 95"));
  EXPECT_EQ(CopyAll("rc_sum", 100, 1 << 20, true), 100u);
  replication::ConnectionSqlSource src(apply::InMoveSession(source_->ClientOptions(kUser, kPassword)));
  replication::ConnectionSqlSource dst(apply::InMoveSession(target_->ClientOptions(kUser, kPassword)));
  auto shape = LoadTableShape(src, "rc_sum", "t");
  BR_ASSERT_OK(shape.status());
  auto chunker = KeyRangeChunker::Create(*shape);
  BR_ASSERT_OK(chunker.status());
  auto copier = RangeCopier::Create(*shape, *shape, /*bulk=*/true);
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
      {"UPDATE rc_sum.t SET n = 'a', m = '|b' WHERE id = 90", 4},
      // The last column's text has no length: ('b', '|c') and ('b|', 'c')
      // stay apart by the length of the one before it (NOT NULL: its
      // length and bytes stand in the row's CONCAT unwrapped).
      {"UPDATE rc_sum.t SET w = 'b|', z = 'c' WHERE id = 95", 4},
      // NULL and '' in the last column: apart by its NULL flag alone.
      {"UPDATE rc_sum.t SET z = IF(z IS NULL, '', NULL) WHERE id = 70", 3}};
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
