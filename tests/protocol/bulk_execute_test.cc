#include "protocol/bulk_execute.h"

#include <cmath>
#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace binrelay::protocol {
namespace {

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

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
