// Golden bytes are the payloads (after the 4-byte packet header) that msmp
// captured from a real MySQL 8.0.34 replica (fixtures/msmp/*.terms).
#include "replication/dump_commands.h"

#include <gtest/gtest.h>

#include "tests/harness/byte_literals.h"

#include "replication/gtid_set.h"

namespace binrelay::replication {
namespace {

using testing::Bytes;

TEST(DumpCommandsTest, RegisterSlaveMatchesMysqlReplicaCapture) {
  RegisterReplica r;
  r.server_id = 200;
  r.report_port = 3306;
  EXPECT_EQ(BuildRegisterSlave(r),
            Bytes({21, 200, 0, 0, 0, 0, 0, 0, 234, 12, 0, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(DumpCommandsTest, BinlogDumpMatchesMysqlReplicaCapture) {
  EXPECT_EQ(BuildBinlogDump(200, "", 4, kDumpFlag02),
            Bytes({18, 4, 0, 0, 0, 2, 0, 200, 0, 0, 0}));
}

TEST(DumpCommandsTest, BinlogDumpGtidMatchesMysqlReplicaCapture) {
  auto set = MysqlGtidSet::Parse("ae705970-65d8-11ee-989c-0242ac1b0003:1-5");
  ASSERT_TRUE(set.ok()) << set.status();
  std::string expected = Bytes({30, 2, 0, 200, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0,
                                48, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 174, 112, 89, 112, 101,
                                216, 17, 238, 152, 156, 2, 66, 172, 27, 0, 3, 1, 0, 0, 0, 0, 0,
                                0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(BuildBinlogDumpGtid(200, "", 4, kDumpFlag02, set->Encode()), expected);
}

// A report_host longer than 250 bytes must not overflow the 1-byte length.
TEST(DumpCommandsTest, RegisterSlaveTruncatesOverlongStrings) {
  RegisterReplica r;
  r.report_host = std::string(300, 'h');
  std::string p = BuildRegisterSlave(r);
  EXPECT_EQ(static_cast<uint8_t>(p[5]), 250);
  EXPECT_EQ(p.size(), 1u + 4 + 1 + 250 + 1 + 1 + 2 + 4 + 4);
}

}  // namespace
}  // namespace binrelay::replication
