// Server-side parsers of COM_REGISTER_SLAVE / COM_BINLOG_DUMP(_GTID) against
// binrelay's own client builders (replication/dump_commands.h).
#include "proxy/replication_commands.h"

#include <gtest/gtest.h>

#include "replication/dump_commands.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::proxy {
namespace {

// Field order and widths must agree with what binrelay sends upstream.
TEST(ReplicationCommandsTest, RegisterSlaveRoundTrip) {
  std::string p = replication::BuildRegisterSlave({42, "replica-1", "u", "pw", 3307});
  BR_ASSERT_OK_AND_ASSIGN(ReplicaRegistration r, ParseRegisterSlave(p));
  EXPECT_EQ(r.server_id, 42u);
  EXPECT_EQ(r.report_host, "replica-1");
  EXPECT_EQ(r.report_user, "u");
  EXPECT_EQ(r.report_password, "pw");
  EXPECT_EQ(r.report_port, 3307);
}

// A 1-byte length >= 251 is a lenenc marker real clients never send.
TEST(ReplicationCommandsTest, RegisterSlaveRefusesLongLengthMarker) {
  std::string p = replication::BuildRegisterSlave({42, "", "", "", 1});
  p[5] = static_cast<char>(0xFC);
  EXPECT_TRUE(absl::IsOutOfRange(ParseRegisterSlave(p).status()));
}

TEST(ReplicationCommandsTest, BinlogDumpRoundTrip) {
  BR_ASSERT_OK_AND_ASSIGN(DumpRequest d,
                          ParseBinlogDump(replication::BuildBinlogDump(
                              9, "mysql-bin.000012", 4567, replication::kDumpNonBlock)));
  EXPECT_EQ(d.kind, DumpRequest::Kind::kFilePosition);
  EXPECT_EQ(d.server_id, 9u);
  EXPECT_EQ(d.file, "mysql-bin.000012");
  EXPECT_EQ(d.position, 4567u);
  EXPECT_TRUE(d.NonBlocking());
}

// Every truncation of the fixed 11-byte header is OutOfRange.
TEST(ReplicationCommandsTest, BinlogDumpTruncatedHeader) {
  std::string p = replication::BuildBinlogDump(9, "f", 4, 0);
  for (size_t n = 0; n < 11; ++n) {
    EXPECT_TRUE(absl::IsOutOfRange(ParseBinlogDump(p.substr(0, n)).status())) << n;
  }
}

// The wrong command byte is the caller's bug, reported as such.
TEST(ReplicationCommandsTest, WrongCommandByteIsInvalidArgument) {
  EXPECT_TRUE(absl::IsInvalidArgument(
      ParseBinlogDump(replication::BuildRegisterSlave({1, "", "", "", 1})).status()));
}

// The name and GTID-data lengths are hostile 4-byte fields.
TEST(ReplicationCommandsTest, BinlogDumpGtidRoundTripAndHostileLengths) {
  std::string set(48, '\x07');
  std::string p = replication::BuildBinlogDumpGtid(7, "binlog.000002", 1 << 20, 0x04, set);
  BR_ASSERT_OK_AND_ASSIGN(DumpRequest d, ParseBinlogDumpGtid(p));
  EXPECT_EQ(d.kind, DumpRequest::Kind::kMySqlGtid);
  EXPECT_EQ(d.server_id, 7u);
  EXPECT_EQ(d.flags, 0x04);
  EXPECT_EQ(d.file, "binlog.000002");
  EXPECT_EQ(d.position, 1u << 20);
  EXPECT_EQ(d.encoded_gtid_set, set);

  std::string bad_name = p;
  bad_name[7] = static_cast<char>(0xFF);  // name length 255 + ...
  bad_name[10] = static_cast<char>(0x7F);
  EXPECT_TRUE(absl::IsOutOfRange(ParseBinlogDumpGtid(bad_name).status()));
  std::string bad_data = p;
  size_t data_len_at = 1 + 2 + 4 + 4 + 13 + 8;
  bad_data[data_len_at + 3] = static_cast<char>(0x40);  // 1 GiB of GTID data announced
  EXPECT_TRUE(absl::IsOutOfRange(ParseBinlogDumpGtid(bad_data).status()));
}

}  // namespace
}  // namespace binrelay::proxy
