// The same-length rewrites a MariaDB primary sends old replicas
// (sql/log_event_server.cc dummy_event / begin_event). The live comparison
// with a MariaDB source is serve_dump_parity_test; these pin the edges:
// every size from the smallest replaceable event up, with and without CRC.
#include "protocol/compat_events.h"

#include <gtest/gtest.h>

#include "protocol/checksum.h"
#include "protocol/event_header.h"
#include "protocol/event_type.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::protocol {
namespace {

std::string Event(uint8_t type, size_t size, uint16_t flags, bool crc) {
  std::string e(size, 'x');
  for (int i = 0; i < 4; ++i) e[i] = static_cast<char>(0x11 * (i + 1));  // timestamp
  e[4] = static_cast<char>(type);
  for (int i = 0; i < 4; ++i) e[5 + i] = static_cast<char>(i == 0 ? 7 : 0);  // server_id 7
  for (int i = 0; i < 4; ++i) e[9 + i] = static_cast<char>((size >> (8 * i)) & 0xFF);
  for (int i = 0; i < 4; ++i) e[13 + i] = static_cast<char>(((1000 + size) >> (8 * i)) & 0xFF);
  e[17] = static_cast<char>(flags & 0xFF);
  e[18] = static_cast<char>(flags >> 8);
  if (crc) {
    uint32_t c = Crc32(std::string_view(e).substr(0, size - 4));
    for (int i = 0; i < 4; ++i) e[size - 4 + i] = static_cast<char>((c >> (8 * i)) & 0xFF);
  }
  return e;
}

// Guards: a dummy of another length (every later position would be wrong
// for a replica that counts bytes), a header that changed, a stale CRC, or
// the wrong replacement kind at the 34-byte boundary.
TEST(CompatEventsTest, DummyKeepsLengthHeaderAndPositionsAtEverySize) {
  for (bool crc : {false, true}) {
    for (size_t data_len = 25; data_len < 200; ++data_len) {
      const size_t size = data_len + (crc ? 4 : 0);
      std::string e = Event(kAnnotateRowsEvent, size, kFlagThreadSpecific | 0x8000, crc);
      const std::string before = e;
      BR_ASSERT_OK(RewriteAsDummyEvent(&e, crc));
      ASSERT_EQ(e.size(), size);
      BR_ASSERT_OK_AND_ASSIGN(EventHeader h, ParseEventHeader(e));
      EXPECT_EQ(h.event_size, size);
      EXPECT_EQ(h.log_pos, 1000 + size);
      EXPECT_EQ(h.server_id, 7u);
      EXPECT_EQ(e.substr(0, 4), before.substr(0, 4)) << "timestamp kept";
      EXPECT_EQ(h.flags & kFlagThreadSpecific, 0) << "not thread-specific";
      EXPECT_NE(h.flags & kFlagSuppressUse, 0);
      EXPECT_NE(h.flags & 0x8000, 0) << "other flags kept";
      if (crc) {
        EXPECT_TRUE(EventCrcMatches(e)) << data_len;
      }
      if (data_len < 34) {
        EXPECT_EQ(h.type, kUserVarEvent) << data_len;
        const uint32_t name_len = static_cast<uint8_t>(e[19]);
        EXPECT_EQ(name_len, data_len - 24);
        EXPECT_EQ(e.substr(23, name_len), std::string("!dummyvar").substr(0, name_len));
        EXPECT_EQ(e[23 + name_len], 1) << "NULL value";
      } else {
        EXPECT_EQ(h.type, kQueryEvent) << data_len;
        const std::string comment = e.substr(19 + 14, data_len - 33);
        const std::string full = "# Dummy event replacing event type 160 that slave cannot handle.";
        if (comment.size() <= full.size()) {
          EXPECT_EQ(comment, full.substr(0, comment.size()));
        } else {
          EXPECT_EQ(comment.substr(0, full.size()), full);
          EXPECT_EQ(comment.substr(full.size()), std::string(comment.size() - full.size(), ' '));
        }
      }
    }
  }
  std::string tiny = Event(kAnnotateRowsEvent, 24, 0, false);
  EXPECT_TRUE(absl::IsFailedPrecondition(RewriteAsDummyEvent(&tiny, false)));
}

// Guards: a GTID replaced by something other than a BEGIN of the same
// length, a standalone GTID turned into BEGIN (its group has no COMMIT), and
// an XA GTID silently mangled.
TEST(CompatEventsTest, GtidBecomesBeginOrDummyOrIsDropped) {
  for (bool crc : {false, true}) {
    for (size_t data_len : {38u, 40u}) {
      std::string e = Event(kMariaGtidEvent, data_len + (crc ? 4 : 0), 0, crc);
      e[19 + 12] = 0x0c;  // flags2: transactional, allow parallel
      if (crc) {
        uint32_t c = Crc32(std::string_view(e).substr(0, data_len));
        for (int i = 0; i < 4; ++i) e[data_len + i] = static_cast<char>((c >> (8 * i)) & 0xFF);
      }
      bool drop = true;
      BR_ASSERT_OK(RewriteGtidForOldReplica(&e, crc, /*need_dummy=*/false, &drop));
      EXPECT_FALSE(drop);
      EXPECT_EQ(e[4], kQueryEvent);
      EXPECT_EQ(e.substr(data_len - 5, 5), "BEGIN");
      EXPECT_EQ(e[19 + 13 + (data_len == 40 ? 2 : 0)], '\0') << "empty database";
      if (data_len == 40) {
        EXPECT_EQ(e[19 + 11], 2) << "status variables: an empty time zone";
      }
      if (crc) {
        EXPECT_TRUE(EventCrcMatches(e));
      }
    }
    std::string standalone = Event(kMariaGtidEvent, 38 + (crc ? 4 : 0), 0, crc);
    standalone[19 + 12] = 0x01;
    std::string copy = standalone;
    bool drop = false;
    BR_ASSERT_OK(RewriteGtidForOldReplica(&copy, crc, /*need_dummy=*/false, &drop));
    EXPECT_TRUE(drop) << "a replica tolerating holes gets nothing";
    BR_ASSERT_OK(RewriteGtidForOldReplica(&standalone, crc, /*need_dummy=*/true, &drop));
    EXPECT_FALSE(drop);
    EXPECT_EQ(standalone[4], kQueryEvent);
    // 38 bytes leave room for five characters of the comment.
    EXPECT_NE(standalone.find("# Dum"), std::string::npos);
  }
  std::string xa = Event(kMariaGtidEvent, 60, 0, false);
  xa[19 + 12] = 0x40;  // PREPARED_XA: carries the XID
  bool drop = false;
  EXPECT_TRUE(absl::IsDataLoss(RewriteGtidForOldReplica(&xa, false, false, &drop)));
}

// Guards the group ends the GTID skip relies on.
TEST(CompatEventsTest, CommitAndRollbackAreReadFromTheQueryTail) {
  std::string commit = Event(kQueryEvent, 19 + 13 + 1 + 6 + 4, 0, true);
  commit.replace(19 + 13, 7, std::string("\0COMMIT", 7));
  EXPECT_TRUE(QueryIsCommitOrRollback(commit, true));
  std::string rollback = Event(kQueryEvent, 19 + 13 + 1 + 8, 0, false);
  rollback.replace(19 + 13, 9, std::string("\0ROLLBACK", 9));
  EXPECT_TRUE(QueryIsCommitOrRollback(rollback, false));
  std::string other = Event(kQueryEvent, 60, 0, false);
  EXPECT_FALSE(QueryIsCommitOrRollback(other, false));
  EXPECT_TRUE(IsPartOfEventGroup(kTableMapEvent));
  EXPECT_TRUE(IsPartOfEventGroup(kAnnotateRowsEvent));
  EXPECT_FALSE(IsPartOfEventGroup(kQueryEvent));
  EXPECT_FALSE(IsPartOfEventGroup(kXidEvent));
}

}  // namespace
}  // namespace binrelay::protocol
