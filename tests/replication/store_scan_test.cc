// Store scans: the FDE of a stored file and MariaDB binlog_gtid_pos() at
// every offset of recorded MariaDB binlogs, plus damaged and hostile files.
// Offsets and GTIDs come from the fixtures' event walk (listed below).
#include "replication/store_scan.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "tests/harness/binlog_fixtures.h"
#include "tests/harness/fixtures.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/temp_dir.h"

namespace binrelay::replication {
namespace {

namespace fs = std::filesystem;
using testing::FixturePath;
using testing::ReadFileOrDie;

class StoreScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestTempDir("store_scan");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& data) {
    std::string path = dir_ + "/" + name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    return path;
  }
  std::string dir_;
};

// Guards: the source's flavour or checksum misread from its FDE.
TEST_F(StoreScanTest, ReadsTheFdeOfRecordedFiles) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog2, testing::kMaria10Binlog);
  BR_ASSERT_OK_AND_ASSIGN(protocol::FormatDescription my,
                          ReadStoredFormat(FixturePath(testing::kMysqlBinlog2)));
  EXPECT_EQ(my.server_version, "8.0.45");
  EXPECT_FALSE(my.is_mariadb);
  EXPECT_EQ(my.checksum_alg, protocol::ChecksumAlg::kCrc32);
  BR_ASSERT_OK_AND_ASSIGN(protocol::FormatDescription ma,
                          ReadStoredFormat(FixturePath(testing::kMaria10Binlog)));
  EXPECT_EQ(ma.server_version, "10.0.15-MariaDB-log");
  EXPECT_TRUE(ma.is_mariadb);
  EXPECT_EQ(ma.checksum_alg, protocol::ChecksumAlg::kOff);
}

// Guards: a short, foreign or corrupt file head read as an FDE, or a huge
// event_size allocated.
TEST_F(StoreScanTest, HostileFileHeadsAreErrors) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog2);
  std::string fde = ReadFileOrDie(FixturePath(testing::kMysqlBinlog2)).substr(0, 126);
  EXPECT_TRUE(absl::IsNotFound(ReadStoredFormat(dir_ + "/missing").status()));
  EXPECT_TRUE(absl::IsDataLoss(ReadStoredFormat(Write("a", "GIF89a....")).status()));
  EXPECT_TRUE(absl::IsOutOfRange(ReadStoredFormat(Write("b", fde.substr(0, 4))).status()));
  EXPECT_TRUE(absl::IsOutOfRange(ReadStoredFormat(Write("c", fde.substr(0, 20))).status()));
  EXPECT_TRUE(absl::IsOutOfRange(ReadStoredFormat(Write("d", fde.substr(0, 100))).status()));
  std::string huge = fde;
  std::memcpy(huge.data() + 4 + 9, "\xFF\xFF\xFF\xFF", 4);  // event_size
  EXPECT_TRUE(absl::IsDataLoss(ReadStoredFormat(Write("e", huge)).status()));
  std::string query = fde;
  query[4 + 4] = 2;  // type QUERY
  auto s = ReadStoredFormat(Write("f", query));
  EXPECT_TRUE(absl::IsDataLoss(s.status())) << s.status();
  EXPECT_NE(s.status().message().find(":4"), std::string::npos) << s.status();
}

// Guards: binlog_gtid_pos answering for offsets inside events, counting a
// transaction only at its commit, or ignoring offsets 0..3 (MariaDB: 4).
TEST_F(StoreScanTest, MariaGtidPosAtEveryOffsetOfARecordedBinlog) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMariaBinlog);
  const std::string path = FixturePath(testing::kMariaBinlog);
  const std::map<uint64_t, std::string> boundaries = {
      {4, ""},        {256, ""},      {285, ""},      {330, ""},      {372, "0-1-1"},
      {476, "0-1-1"}, {612, "0-1-1"}, {671, "0-1-1"}, {702, "0-1-1"}, {744, "0-1-2"},
      {848, "0-1-2"}, {984, "0-1-2"}, {1043, "0-1-2"}, {1074, "0-1-2"}};
  for (uint64_t off = 0; off <= 1080; ++off) {
    BR_ASSERT_OK_AND_ASSIGN(std::optional<std::string> got, MariaGtidPosAt(path, off, 1074));
    auto it = boundaries.find(off < 4 ? 4 : off);
    if (it == boundaries.end()) {
      EXPECT_EQ(got, std::nullopt) << off;
    } else {
      EXPECT_EQ(got, it->second) << off;
    }
  }
}

// Guards: bytes past the readable end (not yet durable) being used.
TEST_F(StoreScanTest, MariaGtidPosStopsAtTheReadableEnd) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMariaBinlog);
  const std::string path = FixturePath(testing::kMariaBinlog);
  EXPECT_EQ(MariaGtidPosAt(path, 744, 702).value_or("?"), std::nullopt);
  EXPECT_EQ(MariaGtidPosAt(path, 702, 702).value_or("?"), "0-1-1");
  EXPECT_EQ(MariaGtidPosAt(path, 702, 720).value_or("?"), "0-1-1");  // mid-event end
  EXPECT_EQ(MariaGtidPosAt(path, 744, 720).value_or("?"), std::nullopt);
}

// Guards: a corrupted GTID event trusted (its CRC is checked) or a broken
// event_size chain walked past.
TEST_F(StoreScanTest, DamagedEventsAreDataLossNamingTheOffset) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMariaBinlog);
  std::string data = ReadFileOrDie(FixturePath(testing::kMariaBinlog));
  std::string bad_crc = data;
  bad_crc[702 + 19] ^= 0x01;  // seq_no of GTID 0-1-2
  auto s = MariaGtidPosAt(Write("crc", bad_crc), 744, 1074);
  EXPECT_TRUE(absl::IsDataLoss(s.status())) << s.status();
  EXPECT_EQ(MariaGtidPosAt(Write("crc2", bad_crc), 702, 1074).value_or("?"), "0-1-1");
  std::string bad_size = data;
  std::memcpy(bad_size.data() + 476 + 9, "\x00\x10\x00\x00", 4);  // 4096 bytes
  s = MariaGtidPosAt(Write("size", bad_size), 744, 1074);
  EXPECT_TRUE(absl::IsDataLoss(s.status())) << s.status();
  EXPECT_NE(s.status().message().find("size:476"), std::string::npos) << s.status();
  std::string tiny = data;
  std::memcpy(tiny.data() + 476 + 9, "\x05\x00\x00\x00", 4);  // below a header
  s = MariaGtidPosAt(Write("tiny", tiny), 744, 1074);
  EXPECT_TRUE(absl::IsDataLoss(s.status())) << s.status();
  // Shorter on disk than the caller believes: an error, not a guess.
  s = MariaGtidPosAt(Write("short", data.substr(0, 600)), 744, 1074);
  EXPECT_FALSE(s.ok());
}

// Guards: a GTID_LIST naming one domain twice loaded as "highest seq" or
// "first entry" instead of MariaDB's "last entry wins", in the scan and in
// the index text alike.
TEST_F(StoreScanTest, GtidListWithSeveralServersPerDomainKeepsTheLastEntry) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMaria10Binlog);
  std::string src = ReadFileOrDie(FixturePath(testing::kMaria10Binlog));  // checksum NONE: no CRCs after FDE
  std::string list;
  auto u32 = [](std::string* out, uint32_t v) {
    for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
  };
  // Header of the recorded GTID_LIST with a new size, then 2 entries.
  list = src.substr(248, 19);
  std::string body;
  u32(&body, 2);
  for (auto [d, s, n] : {std::tuple<uint32_t, uint32_t, uint64_t>{0, 1, 20}, {0, 2, 10}}) {
    u32(&body, d);
    u32(&body, s);
    u32(&body, static_cast<uint32_t>(n));
    u32(&body, static_cast<uint32_t>(n >> 32));
  }
  list += body;
  const uint32_t size = static_cast<uint32_t>(list.size());
  std::memcpy(list.data() + 9, &size, 4);
  // FDE, the new GTID_LIST, then GTID 0-3704-2815 and its QUERY (326..627).
  std::string file = src.substr(0, 248) + list + src.substr(326, 627 - 326);
  const std::string path = Write("multi", file);
  const uint64_t list_at = 248, gtid_at = 248 + list.size(), query_at = gtid_at + 38;
  EXPECT_EQ(MariaGtidPosAt(path, list_at, file.size()).value_or("?"), "0-2-10");
  EXPECT_EQ(MariaGtidPosAt(path, gtid_at, file.size()).value_or("?"), "0-2-10");
  EXPECT_EQ(MariaGtidPosAt(path, query_at, file.size()).value_or("?"), "0-3704-2815");
  EXPECT_EQ(MariaGtidPosAt(path, file.size(), file.size()).value_or("?"), "0-3704-2815");
}

// Guards: a MySQL binlog (no GTID_LIST) given a MariaDB state: '' as MariaDB.
TEST_F(StoreScanTest, MysqlBinlogHasNoMariaDbState) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog2);
  const std::string path = FixturePath(testing::kMysqlBinlog2);
  EXPECT_EQ(MariaGtidPosAt(path, 529, 847).value_or("?"), "");
  EXPECT_EQ(MariaGtidPosAt(path, 4, 847).value_or("?"), "");
}

}  // namespace
}  // namespace binrelay::replication
