// GtidState's floor (replication/gtid_state.h): in the first file of a store
// era the new source's state event and its repeats of stored transactions
// must not move the state back.
#include "replication/gtid_state.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "protocol/artificial_events.h"
#include "protocol/byte_cursor.h"
#include "protocol/event_header.h"
#include "protocol/event_type.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::replication {
namespace {

// A MariaDB GTID event (no checksum): seq_no, domain, flags2 = standalone.
std::string MariaGtidEvent(uint32_t server_id, uint32_t domain, uint64_t seq) {
  std::string body;
  for (int i = 0; i < 8; ++i) body.push_back(static_cast<char>(seq >> (8 * i)));
  for (int i = 0; i < 4; ++i) body.push_back(static_cast<char>(domain >> (8 * i)));
  body.push_back(1);
  std::string ev;
  auto put = [&ev](uint64_t v, int n) {
    for (int i = 0; i < n; ++i) ev.push_back(static_cast<char>(v >> (8 * i)));
  };
  put(0, 4);                               // timestamp
  put(protocol::kMariaGtidEvent, 1);       // type
  put(server_id, 4);                       // server_id
  put(protocol::kEventHeaderLen + body.size(), 4);  // event_size
  put(0, 4);                               // log_pos
  put(0, 2);                               // flags
  return ev + body;
}

absl::Status Feed(GtidState& state, const std::string& bytes) {
  BR_ASSIGN_OR_RETURN(protocol::EventView ev, protocol::MakeEventView(bytes, false, 4));
  return state.OnEvent(ev);
}

SourceGtids Maria(std::string_view text) {
  return SourceGtids::Parse(GtidFlavour::kMariaDb, text).value();
}

// Guards against the state going back when the new source's first file
// opens before the store's end (its GTID_LIST is older) and repeats
// transactions the store holds: /status and a GTID dump's position check
// would see a store that lost transactions.
TEST(GtidStateTest, FloorKeepsMariaDbStateFromGoingBack) {
  GtidState s;
  s.SetFloor(Maria("0-1-100"));
  EXPECT_EQ(s.gtids().PositionText(), "0-1-100");
  // The new primary (server 2) opened this file when it had 0-1-90.
  BR_ASSERT_OK(Feed(s, protocol::BuildFakeGtidList(2, {{0, 1, 90}}, 4, false)));
  EXPECT_EQ(s.gtids().PositionText(), "0-1-100");
  BR_ASSERT_OK(Feed(s, MariaGtidEvent(1, 0, 95)));  // a repeat
  EXPECT_TRUE(s.PendingIsBelowFloor());
  s.Commit();
  EXPECT_EQ(s.gtids().PositionText(), "0-1-100");
  BR_ASSERT_OK(Feed(s, MariaGtidEvent(2, 0, 101)));  // the new primary's first
  EXPECT_FALSE(s.PendingIsBelowFloor());
  s.Commit();
  EXPECT_EQ(s.gtids().PositionText(), "0-2-101");
  // The era's next file opens with its own state, merged over the floor.
  BR_ASSERT_OK(Feed(s, protocol::BuildFakeGtidList(2, {{0, 1, 100}, {0, 2, 101}}, 4, false)));
  EXPECT_EQ(s.gtids().StateText(), "0-1-100,0-2-101");
  // A later file that repeats a stored transaction (the new source logged
  // one of its own before it) leaves the state alone too.
  BR_ASSERT_OK(Feed(s, MariaGtidEvent(1, 0, 99)));
  EXPECT_TRUE(s.PendingIsBelowFloor());
  s.Commit();
  EXPECT_EQ(s.gtids().PositionText(), "0-2-101");
}

// Guards against an era file chosen as the start of a GTID position its
// readers cannot serve from: the state a file opens with, as they see it,
// has the era's floor under it.
TEST(GtidStateTest, FloorMergedPutsTheFloorUnderTheOpeningState) {
  EXPECT_EQ(FloorMerged(Maria("0-1-100"), Maria("")).StateText(), "0-1-100");
  EXPECT_EQ(FloorMerged(Maria("0-1-100"), Maria("0-1-80,1-2-5")).PositionText(), "0-1-100,1-2-5");
  EXPECT_EQ(FloorMerged(Maria("0-1-100"), Maria("0-2-120")).PositionText(), "0-2-120");
  EXPECT_EQ(FloorMerged(SourceGtids(), Maria("0-1-80")).PositionText(), "0-1-80");
  const SourceGtids a = SourceGtids::Parse(GtidFlavour::kMysql,
                                           "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-100").value();
  const SourceGtids b = SourceGtids::Parse(GtidFlavour::kMysql,
                                           "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-80,"
                                           "4e11fa47-71ca-11e1-9e33-c80aa9429562:1-3").value();
  EXPECT_EQ(FloorMerged(a, b).PositionText(),
            "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-100,4e11fa47-71ca-11e1-9e33-c80aa9429562:1-3");
}

// Guards against a domain the new source's list adds being dropped, or a
// domain only the floor knows being lost.
TEST(GtidStateTest, FloorMergesDomainsOfBothSides) {
  GtidState s;
  s.SetFloor(Maria("0-1-100,1-1-7"));
  BR_ASSERT_OK(Feed(s, protocol::BuildFakeGtidList(2, {{0, 1, 90}, {2, 2, 3}}, 4, false)));
  EXPECT_EQ(s.gtids().PositionText(), "0-1-100,1-1-7,2-2-3");
}

// Guards against a state without a floor being changed by SetFloor of an
// unknown state (a store era begun on a store with no GTIDs is refused, but
// recovery passes kNone for every ordinary file).
TEST(GtidStateTest, NoFloorLeavesTheStateEventInCharge) {
  GtidState s;
  s.SetFloor(SourceGtids());
  BR_ASSERT_OK(Feed(s, protocol::BuildFakeGtidList(2, {{0, 1, 90}}, 4, false)));
  BR_ASSERT_OK(Feed(s, MariaGtidEvent(1, 0, 85)));
  EXPECT_FALSE(s.PendingIsBelowFloor());
  s.Commit();
  EXPECT_EQ(s.gtids().PositionText(), "0-1-85");
}

}  // namespace
}  // namespace binrelay::replication
