// SourceGtids and CompareGtids: the typed GTID state and the check a
// failover makes of a candidate source against what binrelay stored.
#include "replication/source_gtids.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

#include "tests/harness/status_matchers.h"

namespace binrelay::replication {
namespace {

constexpr char kA[] = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
constexpr char kB[] = "4ad9cb1f-9c33-11e1-aa2a-c80aa9429562";

SourceGtids Maria(std::string_view text) {
  return SourceGtids::Parse(GtidFlavour::kMariaDb, text).value();
}
SourceGtids Mysql(const std::string& text) {
  return SourceGtids::Parse(GtidFlavour::kMysql, text).value();
}

// Guards: the flavour read from the text's shape instead of carried, and a
// MariaDB state losing its other servers when printed as a position.
TEST(SourceGtidsTest, CarriesItsFlavourAndPrintsPositionAndState) {
  SourceGtids none;
  EXPECT_FALSE(none.known());
  EXPECT_EQ(none.PositionText(), "");
  SourceGtids m = Maria("0-1-20,0-2-25,1-1-3");
  EXPECT_TRUE(m.is_mariadb());
  EXPECT_EQ(m.PositionText(), "0-2-25,1-1-3");  // @@gtid_binlog_pos
  EXPECT_EQ(m.StateText(), "0-1-20,0-2-25,1-1-3");  // @@gtid_binlog_state
  SourceGtids y = Mysql(absl::StrCat(kA, ":1-5:7"));
  EXPECT_TRUE(y.is_mysql());
  EXPECT_EQ(y.PositionText(), absl::StrCat(kA, ":1-5:7"));
  // An empty state of a flavour is known (a GTID_LIST with no entries).
  SourceGtids empty_maria = Maria("");
  EXPECT_TRUE(empty_maria.known());
  EXPECT_TRUE(empty_maria.empty());
  EXPECT_NE(empty_maria, none);
  EXPECT_EQ(Maria(m.StateText()), m);
  EXPECT_FALSE(SourceGtids::Parse(GtidFlavour::kMariaDb, kA).ok());
  EXPECT_FALSE(SourceGtids::Parse(GtidFlavour::kMysql, "0-1-2").ok());
  EXPECT_FALSE(SourceGtids::Parse(GtidFlavour::kNone, "0-1-2").ok());
}

// Guards: set difference dropping or inventing GTIDs at interval edges.
TEST(MysqlGtidSetTest, MinusCutsIntervalsAtTheirEdges) {
  auto set = [](const std::string& t) { return MysqlGtidSet::Parse(t).value(); };
  const std::string a = kA;
  EXPECT_EQ(set(a + ":1-10").Minus(set(a + ":3-4:8")).ToString(), a + ":1-2:5-7:9-10");
  EXPECT_EQ(set(a + ":1-10").Minus(set(a + ":1-10")).ToString(), "");
  EXPECT_EQ(set(a + ":1-3:5-9").Minus(set(a + ":2-6")).ToString(), a + ":1:7-9");
  EXPECT_EQ(set(a + ":5").Minus(set(a + ":1-4:6-9")).ToString(), a + ":5");
  EXPECT_EQ(set(a + ":1-5," + kB + ":1-2").Minus(set(a + ":1-5")).ToString(),
            absl::StrCat(kB, ":1-2"));
  EXPECT_EQ(set(a + ":tag1:1-3").Minus(set(a + ":1-3")).ToString(), a + ":tag1:1-3")
      << "a tagged GTID is not the untagged one";
  EXPECT_EQ(set(a + ":18446744073709551614-18446744073709551615")
                .Minus(set(a + ":18446744073709551615"))
                .ToString(),
            a + ":18446744073709551614");
}

// Guards: a failover following a candidate that lacks stored transactions
// (the replicas of binrelay would have a gap) or refusing one that has all
// of them (a promoted replica that already took writes).
TEST(CompareGtidsTest, MysqlCandidateMustHoldTheStoredSet) {
  const std::string a = kA, b = kB;
  GtidComparison ok = CompareGtids(Mysql(a + ":1-100"), Mysql(a + ":1-100," + b + ":1-3"));
  EXPECT_TRUE(ok.contains_stored);
  EXPECT_EQ(ok.candidate_lacks, "");
  EXPECT_EQ(ok.store_lacks, b + ":1-3");
  GtidComparison behind = CompareGtids(Mysql(a + ":1-100"), Mysql(a + ":1-97"));
  EXPECT_FALSE(behind.contains_stored);
  EXPECT_EQ(behind.candidate_lacks, a + ":98-100");
  // The old primary back with transactions never stored, after binrelay
  // followed the new one: errant on both sides.
  GtidComparison errant =
      CompareGtids(Mysql(a + ":1-100," + b + ":1-5"), Mysql(a + ":1-104"));
  EXPECT_FALSE(errant.contains_stored);
  EXPECT_EQ(errant.candidate_lacks, b + ":1-5");
  EXPECT_EQ(errant.store_lacks, a + ":101-104");
}

// Guards: MariaDB compared by position only (a candidate at 0-1-150 taken
// for containing 0-2-145), or a promoted replica refused because its last
// GTID is its own.
TEST(CompareGtidsTest, MariaDbCandidateMustReachEachStoredDomainsLastGtid) {
  // Promoted replica: it replicated 0-1-1..140 and wrote 0-2-141.. itself.
  GtidComparison promoted = CompareGtids(Maria("0-1-140"), Maria("0-1-140,0-2-143"));
  EXPECT_TRUE(promoted.contains_stored);
  EXPECT_EQ(promoted.store_lacks, "0-2-143");
  // Old primary returning: it has 0-1-141..150 that were never stored, and
  // lacks what the new primary wrote.
  GtidComparison old = CompareGtids(Maria("0-1-140,0-2-145"), Maria("0-1-150"));
  EXPECT_FALSE(old.contains_stored);
  EXPECT_EQ(old.candidate_lacks, "0-2-145");
  EXPECT_EQ(old.store_lacks, "0-1-150");
  // The same after the new primary wrote more than the old one ever did:
  // its errant 0-1-141..150 are past what the store has of server 1,
  // though below the domain's last seq_no.
  GtidComparison old_behind = CompareGtids(Maria("0-1-140,0-2-9000"), Maria("0-1-150"));
  EXPECT_FALSE(old_behind.contains_stored);
  EXPECT_EQ(old_behind.candidate_lacks, "0-2-9000");
  EXPECT_EQ(old_behind.store_lacks, "0-1-150");
  // A server's older entry the store has as well is not errant.
  GtidComparison promoted_again = CompareGtids(Maria("0-1-140,0-2-145"), Maria("0-1-140,0-2-150"));
  EXPECT_TRUE(promoted_again.contains_stored);
  EXPECT_EQ(promoted_again.store_lacks, "0-2-150");
  // A lagging replica.
  GtidComparison lag = CompareGtids(Maria("0-1-140,1-1-7"), Maria("0-1-139,1-1-7"));
  EXPECT_FALSE(lag.contains_stored);
  EXPECT_EQ(lag.candidate_lacks, "0-1-140");
  EXPECT_EQ(lag.store_lacks, "");
}

// Guards: a store of one flavour following a server of the other.
TEST(CompareGtidsTest, FlavoursNeverContainEachOther) {
  GtidComparison c = CompareGtids(Maria("0-1-5"), Mysql(absl::StrCat(kA, ":1-5")));
  EXPECT_FALSE(c.contains_stored);
  EXPECT_NE(c.candidate_lacks.find("mariadb stream"), std::string::npos) << c.candidate_lacks;
  EXPECT_TRUE(CompareGtids(SourceGtids(), Maria("0-1-5")).contains_stored)
      << "an empty store can follow anything";
}

}  // namespace
}  // namespace binrelay::replication
