#include "replication/gtid_set.h"

#include <gtest/gtest.h>

namespace binrelay::replication {
namespace {

TEST(MariaGtidPositionTest, ParsesAndPrintsSortedByDomain) {
  auto pos = MariaGtidPosition::Parse("1-2-5, 0-1-100");
  ASSERT_TRUE(pos.ok()) << pos.status();
  EXPECT_EQ(pos->ToString(), "0-1-100,1-2-5");
  pos->Update({0, 3, 101});
  EXPECT_EQ(pos->ToString(), "0-3-101,1-2-5");
}

// A duplicated domain would make the server pick an arbitrary start.
TEST(MariaGtidPositionTest, RejectsDuplicateDomainAndGarbage) {
  EXPECT_FALSE(MariaGtidPosition::Parse("0-1-1,0-1-2").ok());
  EXPECT_FALSE(MariaGtidPosition::Parse("0-1").ok());
  EXPECT_FALSE(MariaGtidPosition::Parse("a-b-c").ok());
}

TEST(MysqlGtidSetTest, MergesIntervalsAndPrintsCanonically) {
  auto set = MysqlGtidSet::Parse(
      "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:7,\n 3e11fa47-71ca-11e1-9e33-c80aa9429562:6");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->ToString(), "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-7");
  set->Add("3e11fa47-71ca-11e1-9e33-c80aa9429562", "", 9);
  EXPECT_EQ(set->ToString(), "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-7:9");
}

// Golden encoding per sql/rpl_gtid_set.cc Gtid_set::encode: end is exclusive
// on the wire.
TEST(MysqlGtidSetTest, EncodesUntaggedSetWithExclusiveEnds) {
  auto set = MysqlGtidSet::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5");
  ASSERT_TRUE(set.ok());
  std::string enc = set->Encode();
  ASSERT_EQ(enc.size(), 8u + 16 + 8 + 16);
  EXPECT_EQ(enc.substr(0, 8), std::string("\x01\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(static_cast<uint8_t>(enc[8]), 0x3E);
  EXPECT_EQ(static_cast<uint8_t>(enc[23]), 0x62);
  EXPECT_EQ(enc.substr(32, 8), std::string("\x01\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(enc.substr(40, 8), std::string("\x06\0\0\0\0\0\0\0", 8));
}

TEST(MysqlGtidSetTest, TaggedSetUsesFormatMarker) {
  auto set = MysqlGtidSet::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562:blue:1-2");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->ToString(), "3e11fa47-71ca-11e1-9e33-c80aa9429562:blue:1-2");
  std::string enc = set->Encode();
  EXPECT_EQ(static_cast<uint8_t>(enc[0]), 1);
  EXPECT_EQ(static_cast<uint8_t>(enc[1]), 1);  // one tsid
  EXPECT_EQ(static_cast<uint8_t>(enc[7]), 1);
  EXPECT_EQ(static_cast<uint8_t>(enc[24]), 4 << 1);
  EXPECT_EQ(enc.substr(25, 4), "blue");
}

TEST(MysqlGtidSetTest, RejectsBadEntries) {
  EXPECT_FALSE(MysqlGtidSet::Parse("nope:1-2").ok());
  EXPECT_FALSE(MysqlGtidSet::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562:5-2").ok());
  EXPECT_FALSE(MysqlGtidSet::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562:0").ok());
}

}  // namespace
}  // namespace binrelay::replication
