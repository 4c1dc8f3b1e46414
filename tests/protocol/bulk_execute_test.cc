#include "protocol/bulk_execute.h"

#include <cmath>
#include <cstring>
#include <string>

#include "gtest/gtest.h"
#include "tests/harness/byte_literals.h"

namespace binrelay::protocol {
namespace {

using testing::Bytes;

// Guards the layout mysqld_stmt_bulk_execute reads (sql/sql_prepare.cc):
// command, id, SEND_TYPES flag, one type pair per parameter set by its first
// non-NULL value (unsigned flag 0x80 in the second byte), then per row an
// indicator byte and the value: a wrong byte here is a malformed packet or,
// worse, a value read as another type.
TEST(BulkExecuteBuilderTest, LayoutMatchesWhatTheServerReads) {
  BulkExecuteBuilder b;
  b.Start(0, 3);
  b.AddNull();
  ASSERT_TRUE(b.AddBlob("ab").ok());
  ASSERT_TRUE(b.AddUnsigned(7).ok());
  ASSERT_TRUE(b.EndRow().ok());
  ASSERT_TRUE(b.AddInt(-1).ok()) << "a parameter NULL in the first row takes its type later";
  ASSERT_TRUE(b.AddBlob("").ok());
  b.AddNull();
  ASSERT_TRUE(b.EndRow().ok());
  b.SetStatementId(0x01020304);
  const std::string want =
      Bytes({0xFA, 0x04, 0x03, 0x02, 0x01, 0x80, 0x00}) +  // header
      Bytes({8, 0x00, 252, 0x00, 8, 0x80}) +                 // LONGLONG, BLOB, unsigned LONGLONG
      Bytes({1, 0, 2, 'a', 'b', 0, 7, 0, 0, 0, 0, 0, 0, 0}) +
      Bytes({0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 1});
  EXPECT_EQ(b.payload(), want);
  EXPECT_EQ(b.rows(), 2u);
}

// Guards: a double sent in another byte order or width (the server reads
// float8get, little-endian IEEE 754), and DECIMAL/temporal text without its
// length prefix.
TEST(BulkExecuteBuilderTest, DoublesAndTextValues) {
  BulkExecuteBuilder b;
  b.Start(9, 3);
  ASSERT_TRUE(b.AddDouble(-0.0).ok());
  ASSERT_TRUE(b.AddDecimalText("-1.50").ok());
  ASSERT_TRUE(b.AddString("2024-02-29 10:00:00.5").ok());
  ASSERT_TRUE(b.EndRow().ok());
  std::string_view p = b.payload();
  ASSERT_EQ(p.substr(7, 6), Bytes({5, 0, 246, 0, 254, 0}));
  double d;
  std::memcpy(&d, p.data() + 14, 8);
  EXPECT_TRUE(d == 0 && std::signbit(d)) << "negative zero keeps its sign";
  EXPECT_EQ(p.substr(22, 6), Bytes({0, 5, '-', '1', '.', '5'}));
  EXPECT_EQ(p.substr(29, 2), Bytes({0, 21}));

  // Lengths of 251 and more take the 0xFC / 0xFD prefixes.
  b.Start(9, 2);
  ASSERT_TRUE(b.AddBlob(std::string(300, 'x')).ok());
  ASSERT_TRUE(b.AddBlob(std::string(70000, 'y')).ok());
  ASSERT_TRUE(b.EndRow().ok());
  p = b.payload();
  EXPECT_EQ(p.substr(11, 4), Bytes({0, 0xFC, 0x2C, 0x01}));
  EXPECT_EQ(p.substr(15 + 300, 5), Bytes({0, 0xFD, 0x70, 0x11, 0x01}));
  EXPECT_EQ(p.size(), 15u + 300 + 5 + 70000);
}

// Guards the MYSQL_TIME layouts set_param_date/datetime/time read
// (sql/sql_prepare.cc): a field in the wrong byte, hours of a long TIME not
// carried into days (the server adds days * 24), the sign of a negative
// TIME lost, microseconds dropped.
TEST(BulkExecuteBuilderTest, TemporalLayouts) {
  BulkExecuteBuilder b;
  b.Start(1, 3);
  TemporalParts d;
  d.year = 2024;
  d.month = 2;
  d.day = 29;
  d.hour = 23;
  d.minute = 59;
  d.second = 58;
  d.micro = 123456;
  ASSERT_TRUE(b.AddDate(d).ok());
  ASSERT_TRUE(b.AddDatetime(d).ok());
  TemporalParts t;
  t.negative = true;
  t.hour = 838;
  t.minute = 59;
  t.second = 59;
  t.micro = 500000;
  ASSERT_TRUE(b.AddTime(t).ok());
  ASSERT_TRUE(b.EndRow().ok());
  std::string_view p = b.payload();
  EXPECT_EQ(p.substr(7, 6), Bytes({10, 0, 12, 0, 11, 0}));
  EXPECT_EQ(p.substr(13, 6), Bytes({0, 4, 0xE8, 0x07, 2, 29}));
  EXPECT_EQ(p.substr(19, 13),
            Bytes({0, 11, 0xE8, 0x07, 2, 29, 23, 59, 58, 0x40, 0xE2, 0x01, 0x00}));
  // 838 h = 34 days + 22 h.
  EXPECT_EQ(p.substr(32, 14),
            Bytes({0, 12, 1, 34, 0, 0, 0, 22, 59, 59, 0x20, 0xA1, 0x07, 0x00}));
  EXPECT_EQ(p.size(), 46u);
}

// Guards: a parameter whose type changes between rows (the server would
// read the second row's bytes as the first row's type), rows with too many
// or too few values, and TruncateTo leaving a half row or a wrong count.
TEST(BulkExecuteBuilderTest, RefusesMixedTypesAndWrongRowWidths) {
  BulkExecuteBuilder b;
  b.Start(1, 2);
  ASSERT_TRUE(b.AddInt(1).ok());
  ASSERT_TRUE(b.AddBlob("x").ok());
  ASSERT_TRUE(b.EndRow().ok());
  const BulkExecuteBuilder::Mark m = b.mark();
  EXPECT_TRUE(absl::IsInternal(b.AddUnsigned(1))) << "signed, then unsigned";
  b.TruncateTo(m);
  EXPECT_EQ(b.size(), m.bytes);
  ASSERT_TRUE(b.AddInt(2).ok());
  EXPECT_TRUE(absl::IsInternal(b.AddString("x"))) << "BLOB, then STRING";
  b.TruncateTo(m);
  ASSERT_TRUE(b.AddInt(2).ok());
  EXPECT_TRUE(absl::IsInternal(b.EndRow())) << "one value of two";
  b.TruncateTo(m);
  ASSERT_TRUE(b.AddInt(2).ok());
  ASSERT_TRUE(b.AddBlob("y").ok());
  EXPECT_TRUE(absl::IsInternal(b.AddInt(3))) << "a third value";
  b.TruncateTo(m);
  ASSERT_TRUE(b.AddInt(2).ok());
  ASSERT_TRUE(b.AddBlob("y").ok());
  ASSERT_TRUE(b.EndRow().ok());
  EXPECT_EQ(b.rows(), 2u);
  b.TruncateTo(m);
  EXPECT_EQ(b.rows(), 1u) << "truncating a whole row takes it out of the count";
}

}  // namespace
}  // namespace binrelay::protocol
