// MariaBinlogState: MariaDB's binlog state, whose order is part of what a
// GTID_LIST built from it holds (rpl_binlog_state::get_gtid_list).
#include "replication/maria_binlog_state.h"

#include <gtest/gtest.h>

namespace binrelay::replication {
namespace {

// Guards: a failover history lost (a replica at 0-1-100 refused because the
// domain's last GTID is 0-2-150), and a GTID_LIST in another order than
// MariaDB's (domains and servers by first appearance, each domain's last
// GTID last).
TEST(MariaBinlogStateTest, KeepsEveryServerOfADomainInMariaDbsOrder) {
  MariaBinlogState s;
  s.Update({0, 1, 100});
  s.Update({2, 1, 5});
  s.Update({0, 2, 150});
  s.Update({0, 1, 101});  // server 1 again: domain 0's last
  EXPECT_EQ(s.Find(0, 1), 101u);
  EXPECT_EQ(s.Find(0, 2), 150u);
  EXPECT_FALSE(s.Find(0, 3).has_value());
  EXPECT_FALSE(s.Find(1, 1).has_value());
  ASSERT_TRUE(s.LastInDomain(0).has_value());
  EXPECT_EQ(s.LastInDomain(0)->server_id, 1u);
  EXPECT_EQ(s.ToString(), "0-2-150,0-1-101,2-1-5");
  EXPECT_EQ(s.PositionString(), "0-1-101,2-1-5");
  EXPECT_EQ(s.ToPosition().ToString(), s.PositionString());
  MariaBinlogState loaded;
  loaded.Load(s.ToGtidList());
  EXPECT_EQ(loaded.ToString(), s.ToString());
}

TEST(MariaBinlogStateTest, ParsesEntriesAndRefusesGarbage) {
  auto e = MariaBinlogState::ParseEntries(" 0-1-5 , 0-2-7,3-4-5");
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->size(), 3u);
  EXPECT_EQ((*e)[1].server_id, 2u);
  EXPECT_TRUE(MariaBinlogState::ParseEntries("").ok());
  for (const char* bad : {"0-1", "a-b-c", "0-1-2,", "0-1-2-3", "-1-1-1"}) {
    EXPECT_FALSE(MariaBinlogState::ParseEntries(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace binrelay::replication
