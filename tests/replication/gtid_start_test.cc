// FirstTransactionNotIn: where a consumer holding a GTID position starts in
// the store, for MariaDB positions and MySQL sets, from recorded binlogs.
#include "replication/gtid_start.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "protocol/binlog_file_reader.h"
#include "protocol/event_type.h"
#include "protocol/gtid_events.h"
#include "replication/binlog_store.h"
#include "tests/harness/binlog_fixtures.h"
#include "tests/harness/fixtures.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/store_feed.h"
#include "tests/harness/temp_dir.h"

namespace binrelay::replication {
namespace {

using testing::FixturePath;
using testing::ReadFileOrDie;

class GtidStartTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTestTempDir("gtid_start"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

// Where the GTID event of MySQL transaction `gno` starts in `data` (0: none).
uint64_t MysqlGtidOffset(const std::string& data, int64_t gno) {
  auto reader = protocol::BinlogFileReader::Open(data);
  if (!reader.ok()) return 0;
  protocol::EventView ev;
  while (true) {
    const uint64_t at = reader->position();
    auto more = reader->Next(&ev);
    if (!more.ok() || !*more) return 0;
    if (ev.type() != protocol::kGtidEvent) continue;
    auto g = protocol::ParseMysqlGtid(ev);
    if (g.ok() && g->gno == gno) return at;
  }
}

// Guards: a start at the transaction the position already holds (applied
// twice is harmless, but a start past the first missing one loses it), a
// server_id compared where MariaDB compares only domain and seq_no, and a
// position holding everything not landing at the committed end.
TEST_F(GtidStartTest, MariaDbPositionStartsAtTheFirstTransactionItLacks) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMariaBinlog);
  const std::string data = ReadFileOrDie(FixturePath(testing::kMariaBinlog));
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
  BR_ASSERT_OK(testing::FeedBinlogFile(data, "mariadb-bin.000001", 4, *store));
  BR_ASSERT_OK(store->Flush());
  // An empty GTID_LIST, then GTIDs 0-1-1 at 330 and 0-1-2 at 702.
  const std::string at_1 = "mariadb-bin.000001:330";
  const std::string at_2 = "mariadb-bin.000001:702";
  auto start = [&](const char* gtid) {
    return FirstTransactionNotIn(*store, gtid).value_or(BinlogPosition{}).ToString();
  };
  EXPECT_EQ(start("1-1-5"), at_1) << "domain 0 is not in the position: all of it is needed";
  EXPECT_EQ(start("0-1-1"), at_2);
  EXPECT_EQ(start("0-1-1,"), at_2) << "read as the config check reads it: an empty entry is no "
                                      "domain, not an error the pipeline retries forever";
  EXPECT_EQ(start("0-9-1"), at_2) << "MariaDB compares seq_no within the domain, any server";
  EXPECT_EQ(start("0-1-2"), store->committed().position.ToString());
  EXPECT_TRUE(absl::IsInvalidArgument(FirstTransactionNotIn(*store, "junk").status()));
  // The stored stream's flavour decides how the text is read: a MySQL set
  // against a MariaDB store is refused by name, not taken for no position.
  auto mysql = FirstTransactionNotIn(*store, "396e294c-1ca4-11f1-9ae7-00155da79c6b:1-4");
  EXPECT_TRUE(absl::IsInvalidArgument(mysql.status()));
  EXPECT_NE(mysql.status().message().find("not a mariadb GTID position"), std::string::npos)
      << mysql.status();
}

// Guards: MySQL sets checked by interval (a gap in the set must be read),
// and the scan not following into the next file.
TEST_F(GtidStartTest, MysqlSetStartsAtTheFirstTransactionItLacks) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  const std::string one = ReadFileOrDie(FixturePath(testing::kMysqlBinlog1));
  const std::string two = ReadFileOrDie(FixturePath(testing::kMysqlBinlog2));
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
  BR_ASSERT_OK(testing::FeedBinlogFile(one, "binlog.000001", 4, *store));
  BR_ASSERT_OK(testing::FeedBinlogFile(two, "binlog.000002", 4, *store));
  BR_ASSERT_OK(store->Flush());
  const std::string uuid = testing::kMysqlBinlogUuid;
  const uint64_t gno3 = MysqlGtidOffset(one, 3);
  const uint64_t gno2 = MysqlGtidOffset(one, 2);
  ASSERT_NE(gno3, 0u);
  ASSERT_NE(gno2, 0u);
  EXPECT_EQ(FirstTransactionNotIn(*store, uuid + ":1-2").value_or(BinlogPosition{}).ToString(),
            (BinlogPosition{"binlog.000001", gno3}).ToString());
  EXPECT_EQ(FirstTransactionNotIn(*store, uuid + ":1:3-4").value_or(BinlogPosition{}).ToString(),
            (BinlogPosition{"binlog.000001", gno2}).ToString())
      << "transaction 2 is not in the set: reading must start there";
  // binlog.000002 opens with uuid:1-4; its first transaction is the next.
  const uint64_t gno5 = MysqlGtidOffset(two, 5);
  if (gno5 != 0) {
    EXPECT_EQ(FirstTransactionNotIn(*store, uuid + ":1-4").value_or(BinlogPosition{}).ToString(),
              (BinlogPosition{"binlog.000002", gno5}).ToString());
  } else {
    EXPECT_EQ(FirstTransactionNotIn(*store, uuid + ":1-4").value_or(BinlogPosition{}).ToString(),
              store->committed().position.ToString());
  }
}

}  // namespace
}  // namespace binrelay::replication
