#include "protocol/stmt_execute.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/harness/byte_literals.h"

namespace binrelay::protocol {
namespace {

using testing::Bytes;

// Guards the layout mysqld_stmt_execute reads (sql/sql_prepare.cc, without
// CLIENT_QUERY_ATTRIBUTES): flags and iteration count, one NULL bit per
// marker of the whole multi-row statement (not per row), the type pairs
// repeated for every row, then the non-NULL values without the bulk
// command's indicators. A wrong byte is a malformed packet, or a value bound
// to its neighbour's marker.
TEST(StmtExecuteTest, RowsOfABulkCommandBecomeOneExecuteOfEveryMarker) {
  BulkExecuteBuilder b;
  b.Start(0, 3);
  b.AddNull();
  ASSERT_TRUE(b.AddBlob("ab").ok());
  ASSERT_TRUE(b.AddUnsigned(7).ok());
  ASSERT_TRUE(b.EndRow().ok());
  ASSERT_TRUE(b.AddInt(-1).ok());
  ASSERT_TRUE(b.AddBlob("").ok());
  b.AddNull();
  ASSERT_TRUE(b.EndRow().ok());
  std::string out = "stale";
  ASSERT_TRUE(BuildStmtExecute(b, 0, 2, 0x01020304, &out).ok());
  const std::string types = Bytes({8, 0x00, 252, 0x00, 8, 0x80});
  const std::string want =
      Bytes({0x17, 0x04, 0x03, 0x02, 0x01, 0x00, 1, 0, 0, 0}) +  // id, no cursor, 1 iteration
      Bytes({0b00100001}) +                                       // markers 0 and 5 are NULL
      Bytes({1}) + types + types +                                // types bound, per row
      Bytes({2, 'a', 'b', 7, 0, 0, 0, 0, 0, 0, 0}) +
      Bytes({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0});
  EXPECT_EQ(out, want);
}

// Guards the pieces a short batch is cut into: a piece starting past the
// first row must bind that row's values, with its NULL bits counted from
// the piece's own first marker, and long length prefixes and temporal
// values must be carried whole.
TEST(StmtExecuteTest, APieceOfLaterRowsCarriesTheirValuesWhole) {
  BulkExecuteBuilder b;
  b.Start(0, 2);
  const std::string big(70000, 'x');  // a 0xFD three-byte length prefix
  for (int r = 0; r < 3; ++r) {
    TemporalParts t;
    t.year = 2026;
    t.month = 12;
    t.day = 5 + r;
    ASSERT_TRUE(b.AddDate(t).ok());
    if (r == 1) {
      b.AddNull();
    } else {
      ASSERT_TRUE(b.AddBlob(r == 2 ? big : "s").ok());
    }
    ASSERT_TRUE(b.EndRow().ok());
  }
  std::string out;
  ASSERT_TRUE(BuildStmtExecute(b, 1, 2, 5, &out).ok());
  const std::string types = Bytes({10, 0, 252, 0});
  std::string want = Bytes({0x17, 5, 0, 0, 0, 0, 1, 0, 0, 0}) + Bytes({0b0010}) + Bytes({1}) +
                     types + types + Bytes({4, 0xEA, 0x07, 12, 6}) +
                     Bytes({4, 0xEA, 0x07, 12, 7}) + Bytes({0xFD, 0x70, 0x11, 0x01}) + big;
  EXPECT_EQ(out.size(), want.size());
  EXPECT_TRUE(out == want);
}

// Guards: a truncated batch (the row that did not fit) must not leave its
// values in the command.
TEST(StmtExecuteTest, RowsCutOffByTruncateAreNotSent) {
  BulkExecuteBuilder b;
  b.Start(0, 1);
  ASSERT_TRUE(b.AddInt(1).ok());
  ASSERT_TRUE(b.EndRow().ok());
  const BulkExecuteBuilder::Mark m = b.mark();
  ASSERT_TRUE(b.AddInt(2).ok());
  ASSERT_TRUE(b.EndRow().ok());
  b.TruncateTo(m);
  ASSERT_EQ(b.rows(), 1u);
  std::string out;
  ASSERT_TRUE(BuildStmtExecute(b, 0, 1, 1, &out).ok());
  EXPECT_EQ(out, Bytes({0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 8, 0, 1, 0, 0, 0, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace binrelay::protocol
