// DeferredRows: the changes a drain holds back while a move's copier copies
// their chunk, and the checkpoint floor they impose.

#include "apply/deferred_rows.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "apply/ordered_key.h"
#include "protocol/column_type.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::apply {
namespace {

// A one-column table keyed by an INT; images are its full row images
// (null bitmap, then the little-endian value).
ApplyTable IntTable() {
  ApplyTable t;
  t.def.columns.resize(1);
  t.def.columns[0].type = protocol::kTypeLong;
  t.def.primary_key = {0};
  return t;
}

std::string Image(int32_t id) {
  std::string image(1, '\0');
  for (int i = 0; i < 4; ++i) image.push_back(static_cast<char>(static_cast<uint32_t>(id) >> (8 * i)));
  return image;
}

std::string Key(const ApplyTable& t, int32_t id) {
  std::string scratch, key;
  EXPECT_TRUE(EncodeOrderedKey(Image(id), t.def, t.def.primary_key, &scratch, &key).ok());
  return key;
}

int32_t IdOf(const BufferedRow* r) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(r->image[1 + i])) << (8 * i);
  return static_cast<int32_t>(v);
}

replication::BinlogPosition At(uint64_t offset) { return {"mysql-bin.000001", offset}; }

// Guards: a delete applied while its chunk is being copied (the copy then
// brings the row back), a held change never released once the chunk is on
// the target, and a checkpoint written past a change not yet applied.
TEST(DeferredRowsTest, ChangeToAChunkInFlightWaitsUntilItIsCopied) {
  ApplyTable t = IntTable();
  TableCopyGate gate{CopyWatermarks(true)};
  auto chunk = gate.Dispatch(Key(t, 100));  // (start, 100] is being copied
  ASSERT_TRUE(chunk.ok());
  std::vector<std::string> images = {Image(50), Image(150)};
  std::vector<BufferedRow> rows = {{true, images[0], 5}, {false, images[1], 5}};
  DeferredRows held;
  std::vector<const BufferedRow*> now;
  held.BeginDrain();
  BR_ASSERT_OK(held.Sift(t, gate, &rows, At(1000), &now));
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(IdOf(now[0]), 150);  // not handed out yet: applied
  EXPECT_EQ(held.rows(), 1u);
  ASSERT_TRUE(held.floor().has_value());
  EXPECT_EQ(*held.floor(), At(1000));

  // Still in flight at the next drain: still held.
  now.clear();
  held.BeginDrain();
  BR_ASSERT_OK(held.Sift(t, gate, nullptr, At(2000), &now));
  EXPECT_TRUE(now.empty());

  gate.Complete(*chunk);
  now.clear();
  held.BeginDrain();
  BR_ASSERT_OK(held.Sift(t, gate, nullptr, At(3000), &now));
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(IdOf(now[0]), 50);
  EXPECT_TRUE(now[0]->is_delete);
  EXPECT_TRUE(held.empty());
  EXPECT_FALSE(held.floor().has_value());
}

// Guards: an older held image released after (and over) a newer one, and a
// floor kept at the superseded change's older position for good.
TEST(DeferredRowsTest, LaterChangeToAHeldKeyReplacesIt) {
  ApplyTable t = IntTable();
  TableCopyGate gate{CopyWatermarks(true)};
  auto chunk = gate.Dispatch(Key(t, 100));
  ASSERT_TRUE(chunk.ok());
  DeferredRows held;
  std::vector<const BufferedRow*> now;
  std::string first = Image(7);
  std::vector<BufferedRow> drain1 = {{true, first, 5}};
  BR_ASSERT_OK(held.Sift(t, gate, &drain1, At(1000), &now));
  std::string second = Image(7);  // the same key, now an upsert
  std::vector<BufferedRow> drain2 = {{false, second, 5}};
  held.BeginDrain();
  BR_ASSERT_OK(held.Sift(t, gate, &drain2, At(2000), &now));
  EXPECT_TRUE(now.empty());
  EXPECT_EQ(held.rows(), 1u);
  EXPECT_EQ(*held.floor(), At(2000));
  gate.Complete(*chunk);
  held.BeginDrain();
  BR_ASSERT_OK(held.Sift(t, gate, nullptr, At(3000), &now));
  ASSERT_EQ(now.size(), 1u);
  EXPECT_FALSE(now[0]->is_delete);
}

// Guards: changes of a table whose key order is inexact (a collation)
// reordered or collapsed while held: they are released all at once, in
// binlog order, before the next drain's own.
TEST(DeferredRowsTest, InexactOrderHoldsEveryChangeInBinlogOrder) {
  ApplyTable t = IntTable();
  TableCopyGate gate{CopyWatermarks(false)};
  auto chunk = gate.Dispatch(std::string("m"));
  ASSERT_TRUE(chunk.ok());
  DeferredRows held;
  std::vector<const BufferedRow*> now;
  std::vector<std::string> images = {Image(3), Image(1), Image(3)};
  std::vector<BufferedRow> drain1 = {{false, images[0], 5}, {true, images[1], 5}};
  BR_ASSERT_OK(held.Sift(t, gate, &drain1, At(1000), &now));
  EXPECT_TRUE(now.empty());
  gate.Complete(*chunk);
  std::vector<BufferedRow> drain2 = {{true, images[2], 5}};
  held.BeginDrain();
  BR_ASSERT_OK(held.Sift(t, gate, &drain2, At(2000), &now));
  ASSERT_EQ(now.size(), 3u);
  EXPECT_EQ(IdOf(now[0]), 3);
  EXPECT_FALSE(now[0]->is_delete);
  EXPECT_EQ(IdOf(now[1]), 1);
  EXPECT_EQ(IdOf(now[2]), 3);
  EXPECT_TRUE(now[2]->is_delete);
  EXPECT_TRUE(held.empty());
}

// Guards: a checkpoint floor taken from the latest held change instead of
// the earliest (a crash would then lose the earlier one).
TEST(DeferredRowsTest, FloorIsTheEarliestHeldChange) {
  ApplyTable t = IntTable();
  TableCopyGate gate{CopyWatermarks(true)};
  auto a = gate.Dispatch(Key(t, 100));
  auto b = gate.Dispatch(Key(t, 200));
  ASSERT_TRUE(a.ok() && b.ok());
  DeferredRows held;
  std::vector<const BufferedRow*> now;
  std::vector<std::string> images = {Image(150), Image(50)};
  std::vector<BufferedRow> drain1 = {{false, images[0], 5}};
  std::vector<BufferedRow> drain2 = {{false, images[1], 5}};
  BR_ASSERT_OK(held.Sift(t, gate, &drain1, At(1000), &now));
  held.BeginDrain();
  BR_ASSERT_OK(held.Sift(t, gate, &drain2, At(2000), &now));
  EXPECT_EQ(*held.floor(), At(1000));
  gate.Complete(*b);  // 150's chunk: released, the floor moves to 50's
  held.BeginDrain();
  BR_ASSERT_OK(held.Sift(t, gate, nullptr, At(3000), &now));
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(IdOf(now[0]), 150);
  EXPECT_EQ(*held.floor(), At(2000));
}

}  // namespace
}  // namespace binrelay::apply
