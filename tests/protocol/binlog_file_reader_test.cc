// Framing tests: common header, FDE, CRC32, file and capture readers, against
// the recorded fixtures (positions and CRCs cross-checked with mysqlbinlog's
// dump.txt output) and hostile inputs.
#include "protocol/binlog_file_reader.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "protocol/checksum.h"
#include "protocol/event_type.h"
#include "protocol/format_description.h"
#include "protocol/packet_capture_reader.h"
#include "tests/harness/fixtures.h"
#include "tests/protocol/binlog_test_util.h"

namespace binrelay::protocol {
namespace {

using test::AllEvents;
using test::LoadFixture;
using test::LoadText;

// Recomputes the CRC32 trailer of the event at `off` after a test patched it.
void FixCrc(std::string* file, size_t off) {
  auto h = ParseEventHeader(std::string_view(*file).substr(off));
  ASSERT_TRUE(h.ok());
  std::string_view ev = std::string_view(*file).substr(off, h->event_size);
  const uint32_t crc = ComputeEventCrc(ev);
  for (int i = 0; i < 4; ++i) (*file)[off + h->event_size - 4 + i] = static_cast<char>(crc >> (8 * i));
}

TEST(EventHeaderTest, ParsesFdeHeaderOf57File) {
  BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/5.7__16_xid__log.bin");
  // Golden: mysqlbinlog hexdump of 5.7__16_xid at 4: "37 b9 23 5f 0f 01000000 77000000 7b000000 0000".
  std::string data = LoadFixture("mysql-cdc-rs/5.7__16_xid__log.bin");
  auto h = ParseEventHeader(std::string_view(data).substr(4));
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->timestamp, 0x5f23b937u);
  EXPECT_EQ(h->type, kFormatDescriptionEvent);
  EXPECT_EQ(h->server_id, 1u);
  EXPECT_EQ(h->event_size, 119u);
  EXPECT_EQ(h->log_pos, 123u);
  EXPECT_EQ(h->flags, 0);
}

// Guards against reading a header from fewer than 19 bytes.
TEST(EventHeaderTest, ShortHeaderIsOutOfRange) {
  std::string bytes(18, '\0');
  EXPECT_EQ(ParseEventHeader(bytes).status().code(), absl::StatusCode::kOutOfRange);
}

// Guards against an event_size that cannot even hold the header (would loop forever).
TEST(EventHeaderTest, EventSizeSmallerThanHeaderIsDataLoss) {
  std::string bytes(19, '\0');
  bytes[9] = 10;  // event_size = 10
  auto h = ParseEventHeader(bytes);
  EXPECT_EQ(h.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(h.status().message().find("smaller than the 19-byte header"), std::string::npos);
}

TEST(FormatDescriptionTest, Parses57FdeFields) {
  BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/5.7__16_xid__log.bin");
  std::string data = LoadFixture("mysql-cdc-rs/5.7__16_xid__log.bin");
  auto fd = ParseFormatDescription(std::string_view(data).substr(4, 119));
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_EQ(fd->binlog_version, 4);
  EXPECT_EQ(fd->server_version, "5.7.30-log");
  EXPECT_EQ(fd->create_timestamp, 0x5f23b937u);
  EXPECT_EQ(fd->common_header_len, 19);
  EXPECT_TRUE(fd->checksum_aware);
  EXPECT_EQ(fd->checksum_alg, ChecksumAlg::kCrc32);
  EXPECT_FALSE(fd->is_mariadb);
  // 119 - 19 - 57 - 5 = 38 entries; values from the dump's hex.
  const std::vector<uint8_t> expected = {56, 13, 0, 8, 0, 18, 0, 4, 4, 4, 4, 18, 0, 0, 95, 0, 4, 26, 8,
                                         0,  0,  0, 8, 8, 8,  2, 0, 0, 0, 10, 10, 10, 42, 42, 0, 18, 52, 0};
  EXPECT_EQ(fd->post_header_len, expected);
  EXPECT_EQ(fd->PostHeaderLen(kTableMapEvent), 8);
  EXPECT_EQ(fd->PostHeaderLen(kQueryEvent), 13);
}

// Guards the pre-5.6.1 rule: no checksum trailer, so the array runs to the end.
TEST(FormatDescriptionTest, Pre561ServerHasNoChecksumTrailer) {
  BINRELAY_REQUIRE_FIXTURE("canal/mysql-bin.000001");
  std::string data = LoadFixture("canal/mysql-bin.000001");
  auto h = ParseEventHeader(std::string_view(data).substr(4));
  ASSERT_TRUE(h.ok());
  auto fd = ParseFormatDescription(std::string_view(data).substr(4, h->event_size));
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_EQ(fd->server_version, "5.1.34sp1-enterprise-gpl-advanced-log");
  EXPECT_FALSE(fd->checksum_aware);
  EXPECT_EQ(fd->post_header_len.size(), h->event_size - 19u - 57u);
  EXPECT_EQ(fd->checksum_alg, ChecksumAlg::kOff);
}

TEST(FormatDescriptionTest, MariaDb10ChecksumOff) {
  BINRELAY_REQUIRE_FIXTURE("binlog-parser/mysql-bin.07");
  std::string data = LoadFixture("binlog-parser/mysql-bin.07");
  auto h = ParseEventHeader(std::string_view(data).substr(4));
  ASSERT_TRUE(h.ok());
  auto fd = ParseFormatDescription(std::string_view(data).substr(4, h->event_size));
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_TRUE(fd->is_mariadb);
  EXPECT_TRUE(fd->checksum_aware);
  EXPECT_EQ(fd->checksum_alg, ChecksumAlg::kOff);
  EXPECT_GE(fd->post_header_len.size(), 163u);  // covers MariaDB's 16x types
}

TEST(FormatDescriptionTest, VersionProduct) {
  EXPECT_EQ(VersionProduct("5.6.1"), (5u << 16) | (6u << 8) | 1u);
  EXPECT_EQ(VersionProduct("8.0.35-log"), (8u << 16) | (0u << 8) | 35u);
  EXPECT_EQ(VersionProduct("myserver-1.0"), 0u);  // do_server_version_split: digit first
}

TEST(FormatDescriptionTest, StartEventV3) {
  std::string ev(19 + 56, '\0');
  ev[4] = kStartEventV3;
  ev[9] = static_cast<char>(ev.size());
  ev[19] = 3;
  std::string ver = "4.0.20-log";
  ev.replace(21, ver.size(), ver);
  auto fd = ParseStartEventV3(ev);
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_EQ(fd->binlog_version, 3);
  EXPECT_EQ(fd->server_version, ver);
  EXPECT_EQ(fd->PostHeaderLen(kQueryEvent), 11);
  EXPECT_EQ(fd->PostHeaderLen(kRotateEvent), 8);
}

// Golden: every "# at N ... end_log_pos M CRC32 0xC" block of mysqlbinlog's
// dumps must match the walked offset, log_pos and stored CRC.
TEST(BinlogFileReaderTest, PositionsAndCrcsMatchMysqlbinlogDumps) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"5.7__02_query__log.bin", "5.7__02_query__dump.txt"},
      {"5.7__05_intvar__log.bin", "5.7__05_intvar__dump.txt"},
      {"5.7__13_rand__log.bin", "5.7__13_rand__dump.txt"},
      {"5.7__14_user_var__log.bin", "5.7__14_user_var__dump.txt"},
      {"5.7__16_xid__log.bin", "5.7__16_xid__dump.txt"},
      {"5.7__17_18_load__log.bin", "5.7__17_18_load__dump.txt"},
      {"5.7__29_row_query__log.bin", "5.7__29_row_query__dump.txt"},
      {"5.7__32_delete_rows_v2__log.bin", "5.7__32_delete_rows_v2__dump.txt"},
      {"8.0__02_query__binlog.000001", "8.0__02_query__dump.txt"},
      {"8.0__31_update_rows_v2__binlog.000001", "8.0__31_update_rows_v2__dump.txt"},
      {"8.0__32_delete_rows_v2__binlog.000001", "8.0__32_delete_rows_v2__dump.txt"},
  };
  const std::regex at_re(R"(^# at (\d+)$)");
  const std::regex end_re(R"(end_log_pos (\d+) CRC32 0x([0-9a-f]+))");
  for (const auto& [bin, dump] : files) {
    BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/" + bin, "mysql-cdc-rs/" + dump);
  }
  for (const auto& [bin, dump] : files) {
    SCOPED_TRACE(bin);
    std::string data = LoadFixture("mysql-cdc-rs/" + bin);
    std::vector<EventView> events = AllEvents(data);
    // mysqlbinlog prints INTVAR/RAND/USER_VAR headers together with the next
    // QUERY, so "# at" lines and end_log_pos lines are compared as sequences.
    std::vector<uint64_t> ats, ends, crcs;
    std::istringstream text(LoadText("mysql-cdc-rs/" + dump));
    std::string line;
    while (std::getline(text, line)) {
      std::smatch m;
      if (std::regex_match(line, m, at_re)) ats.push_back(std::stoull(m[1]));
      if (std::regex_search(line, m, end_re)) {
        ends.push_back(std::stoull(m[1]));
        crcs.push_back(std::stoull(m[2], nullptr, 16));
      }
    }
    // A trailing "# at" (end of file) is printed unless the file ends in ROTATE.
    ASSERT_GE(ats.size(), events.size());
    ASSERT_LE(ats.size(), events.size() + 1);
    ASSERT_EQ(ends.size(), events.size());
    int checked = 0;
    for (size_t i = 0; i < events.size(); ++i) {
      const EventView& ev = events[i];
      EXPECT_EQ(ev.offset, ats[i]);
      EXPECT_EQ(ev.header.log_pos, ends[i]) << "at " << ev.offset;
      ASSERT_TRUE(ev.has_checksum);
      std::string_view crc = ev.bytes.substr(ev.bytes.size() - 4);
      uint64_t stored = 0;
      for (int k = 3; k >= 0; --k) stored = stored << 8 | static_cast<uint8_t>(crc[k]);
      EXPECT_EQ(stored, crcs[i]) << "at " << ev.offset;
      ++checked;
    }
    EXPECT_GE(checked, 3);
  }
}

// INDEX.md counts for mysql-bin.checksum-crc32 (303 events, all CRC-checked).
TEST(BinlogFileReaderTest, EventCountsMatchIndexForChecksumCrc32File) {
  BINRELAY_REQUIRE_FIXTURE("mysql-binlog-connector-java/mysql-bin.checksum-crc32");
  std::string data = LoadFixture("mysql-binlog-connector-java/mysql-bin.checksum-crc32");
  auto reader = BinlogFileReader::Open(data, "mysql-bin.checksum-crc32");
  ASSERT_TRUE(reader.ok());
  std::map<uint8_t, int> counts;
  EventView ev;
  while (true) {
    auto more = reader->Next(&ev);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    ++counts[ev.type()];
  }
  std::map<uint8_t, int> expected = {{2, 60}, {4, 1},  {15, 1}, {16, 60}, {19, 60},
                                     {30, 34}, {31, 20}, {32, 6}, {34, 60}, {35, 1}};
  EXPECT_EQ(counts, expected);
  EXPECT_EQ(reader->framer().crc_checked(), 303u);
  EXPECT_EQ(reader->position(), data.size());
}

// Checksum NONE: only the FDE (checksum-aware server) carries a CRC.
TEST(BinlogFileReaderTest, ChecksumNoneFileHasCrcOnlyOnFde) {
  BINRELAY_REQUIRE_FIXTURE("mysql-binlog-connector-java/mysql-bin.checksum-none");
  std::string data = LoadFixture("mysql-binlog-connector-java/mysql-bin.checksum-none");
  auto events = AllEvents(data);
  ASSERT_EQ(events.size(), 1u + 40 + 1 + 36 + 36 + 34 + 2 + 40 + 1);
  EXPECT_TRUE(events[0].has_checksum);
  for (size_t i = 1; i < events.size(); ++i) EXPECT_FALSE(events[i].has_checksum);
}

// Aurora's type-100 padding carries IGNORABLE: skipped, not an error.
TEST(BinlogFileReaderTest, SkipsIgnorableUnknownAuroraEvent) {
  BINRELAY_REQUIRE_FIXTURE("mysql-binlog-connector-java/mysql-bin.aurora-padding");
  std::string data = LoadFixture("mysql-binlog-connector-java/mysql-bin.aurora-padding");
  auto reader = BinlogFileReader::Open(data);
  ASSERT_TRUE(reader.ok());
  EventView ev;
  std::vector<uint8_t> types;
  while (true) {
    auto more = reader->Next(&ev);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    types.push_back(ev.type());
  }
  EXPECT_EQ(types, (std::vector<uint8_t>{15, 35, 34, 2}));
  EXPECT_EQ(reader->skipped_events(), 1u);
}

// Guards against silently skipping an unknown event that is NOT ignorable.
TEST(BinlogFileReaderTest, UnknownTypeWithoutIgnorableFlagIsUnimplemented) {
  BINRELAY_REQUIRE_FIXTURE("mysql-binlog-connector-java/mysql-bin.aurora-padding");
  std::string data = LoadFixture("mysql-binlog-connector-java/mysql-bin.aurora-padding");
  data[281 + 17] = 0;  // clear IGNORABLE on the type-100 event at 281
  FixCrc(&data, 281);
  auto reader = BinlogFileReader::Open(data, "aurora");
  ASSERT_TRUE(reader.ok());
  EventView ev;
  absl::Status st;
  while (true) {
    auto more = reader->Next(&ev);
    if (!more.ok()) { st = more.status(); break; }
    ASSERT_TRUE(*more) << "walked past the unknown event";
  }
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(st.message().find("unknown event type 100 (928 bytes) at offset 281 in a binlog written by server 5.7.12-log"), std::string::npos) << st;
}

absl::Status WalkError(const std::string& data, const std::string& name = "f") {
  absl::Status s = test::WalkBinlog(data, name, [](const EventView&, const EventFramer&) {
    return absl::OkStatus();
  });
  return s;
}

// Guards the truncation message: file offset, declared size, bytes left.
TEST(BinlogFileReaderTest, TruncatedEventNamesOffsetAndSizes) {
  BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/5.7__16_xid__log.bin");
  std::string data = LoadFixture("mysql-cdc-rs/5.7__16_xid__log.bin");
  data.resize(802 + 20);  // cut the TABLE_MAP at 802 (58 bytes) after 20 bytes
  absl::Status s = WalkError(data, "xid.bin");
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(),
            "xid.bin: truncated TABLE_MAP event at offset 802: header says 58 bytes, 20 remain");
}

TEST(BinlogFileReaderTest, TruncatedFixturesFromMysqlTestSuite) {
  BINRELAY_REQUIRE_FIXTURE("rust_mysql_common/binlog_truncated_event.000001",
                           "rust_mysql_common/binlog_truncated_prev_gtid_event.000001");
  absl::Status s1 = WalkError(LoadFixture("rust_mysql_common/binlog_truncated_event.000001"));
  EXPECT_EQ(s1.code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(s1.message().find("truncated event header at offset 4: 10 bytes remain"),
            std::string::npos) << s1;
  absl::Status s2 = WalkError(LoadFixture("rust_mysql_common/binlog_truncated_prev_gtid_event.000001"));
  EXPECT_EQ(s2.code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(s2.message().find("offset 120: 9 bytes remain"), std::string::npos) << s2;
}

// Guards CRC verification: one flipped body bit must be caught and located.
TEST(BinlogFileReaderTest, FlippedCrcByteIsDataLossWithOffset) {
  BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/5.7__16_xid__log.bin");
  std::string data = LoadFixture("mysql-cdc-rs/5.7__16_xid__log.bin");
  data[802 + 30] ^= 0x01;
  absl::Status s = WalkError(data);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("CRC32 mismatch in TABLE_MAP event at offset 802: stored 0x60ae5d62"),
            std::string::npos) << s;
}

// The FDE's CRC is computed with BINLOG_IN_USE cleared; a live file has it set.
TEST(BinlogFileReaderTest, FdeCrcIgnoresInUseFlag) {
  BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/5.7__16_xid__log.bin");
  std::string data = LoadFixture("mysql-cdc-rs/5.7__16_xid__log.bin");
  data[4 + 17] |= kFlagBinlogInUse;
  EXPECT_TRUE(WalkError(data).ok());
  data[4 + 17] |= 0x02;  // any other flag is covered by the CRC
  EXPECT_EQ(WalkError(data).code(), absl::StatusCode::kDataLoss);
}

// A source with binlog_checksum=NONE rewrites the FDE it sends when a dump
// starts mid-file (log_pos 0) without refreshing the FDE's CRC field (seen
// live with MariaDB 10.11): an FDE that declares checksums OFF must not be
// refused for it. An FDE that declares CRC32 still must.
TEST(BinlogFileReaderTest, FdeCrcIsCheckedOnlyWhenTheFdeDeclaresCrc32) {
  BINRELAY_REQUIRE_FIXTURE("mysql-binlog-connector-java/mysql-bin.checksum-none",
                           "mysql-cdc-rs/5.7__16_xid__log.bin");
  std::string off = LoadFixture("mysql-binlog-connector-java/mysql-bin.checksum-none");
  off[4 + 13] ^= 0x7F;  // the FDE's log_pos, as the dump thread rewrites it
  EXPECT_TRUE(WalkError(off).ok()) << WalkError(off);
  std::string crc32 = LoadFixture("mysql-cdc-rs/5.7__16_xid__log.bin");
  crc32[4 + 13] ^= 0x7F;
  EXPECT_EQ(WalkError(crc32).code(), absl::StatusCode::kDataLoss);
}

TEST(BinlogFileReaderTest, EventSizeBelowHeaderInFileIsDataLoss) {
  BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/5.7__16_xid__log.bin");
  std::string data = LoadFixture("mysql-cdc-rs/5.7__16_xid__log.bin");
  data[123 + 9] = 5;
  data[123 + 10] = data[123 + 11] = data[123 + 12] = 0;
  absl::Status s = WalkError(data);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("event at offset 123"), std::string::npos) << s;
}

TEST(BinlogFileReaderTest, MissingMagicIsDataLoss) {
  auto r = BinlogFileReader::Open("\xFE" "bim....", "x");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
}

// Stream capture: fake ROTATE (with CRC, before any FDE) and a second FDE.
TEST(BinlogFileReaderTest, CaptureFileWithArtificialRotateAndSecondFde) {
  BINRELAY_REQUIRE_FIXTURE("zongji/binlog-mysql84.events.binlog");
  std::string data = LoadFixture("zongji/binlog-mysql84.events.binlog");
  auto events = AllEvents(data);
  ASSERT_EQ(events.size(), 28u);
  EXPECT_EQ(events[0].type(), kRotateEvent);
  EXPECT_TRUE(events[0].header.artificial());
  EXPECT_TRUE(events[0].has_checksum);
  EXPECT_EQ(events[0].body.substr(8), "mysql-bin.000001");
  int fdes = 0;
  for (const auto& ev : events) fdes += ev.type() == kFormatDescriptionEvent;
  EXPECT_EQ(fdes, 2);
}

// The packets.bin capture must yield the same events as the binlog form.
TEST(PacketCaptureReaderTest, YieldsSameEventsAsBinlogForm) {
  const std::vector<std::string> names = {"binlog-mysql84", "binlog-mysql84-fullmeta",
                                          "binlog-mariadb118"};
  for (const std::string& name : names) {
    BINRELAY_REQUIRE_FIXTURE("zongji/" + name + ".events.binlog", "zongji/" + name + ".packets.bin");
  }
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    std::string bin = LoadFixture("zongji/" + name + ".events.binlog");
    std::string pkt = LoadFixture("zongji/" + name + ".packets.bin");
    auto expected = AllEvents(bin);
    PacketCaptureReader reader(pkt, name);
    EventView ev;
    size_t i = 0;
    while (true) {
      auto more = reader.Next(&ev);
      ASSERT_TRUE(more.ok()) << more.status();
      if (!*more) break;
      ASSERT_LT(i, expected.size());
      EXPECT_EQ(ev.bytes, expected[i].bytes);
      EXPECT_EQ(ev.has_checksum, expected[i].has_checksum);
      ++i;
    }
    EXPECT_EQ(i, expected.size());
    EXPECT_EQ(reader.packets(), expected.size());
  }
}

TEST(PacketCaptureReaderTest, TruncatedRecordIsOutOfRange) {
  BINRELAY_REQUIRE_FIXTURE("zongji/binlog-mysql84.packets.bin");
  std::string pkt = LoadFixture("zongji/binlog-mysql84.packets.bin");
  pkt.resize(pkt.size() - 3);
  PacketCaptureReader reader(pkt, "cap");
  EventView ev;
  absl::Status st;
  while (true) {
    auto more = reader.Next(&ev);
    if (!more.ok()) { st = more.status(); break; }
    ASSERT_TRUE(*more);
  }
  EXPECT_EQ(st.code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("truncated packet at offset"), std::string::npos) << st;
}

// Guards the 0x00 marker check: a stream byte that is not OK/EOF/ERR is corrupt.
TEST(PacketCaptureReaderTest, BadMarkerIsDataLoss) {
  BINRELAY_REQUIRE_FIXTURE("zongji/binlog-mysql84.packets.bin");
  std::string pkt = LoadFixture("zongji/binlog-mysql84.packets.bin");
  pkt[4] = 0x07;
  PacketCaptureReader reader(pkt);
  EventView ev;
  EXPECT_EQ(reader.Next(&ev).status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace binrelay::protocol
