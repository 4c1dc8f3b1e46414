// TABLE_MAP parsing against recorded fixtures (golden values from mysqlbinlog
// dumps and the zongji capture schemas) and hostile lengths.
#include "protocol/table_map.h"

#include <gtest/gtest.h>

#include "protocol/column_type.h"
#include "protocol/event_type.h"
#include "tests/harness/fixtures.h"
#include "tests/protocol/binlog_test_util.h"

namespace binrelay::protocol {
namespace {

using test::LoadFixture;

// All TABLE_MAPs of a binlog fixture, parsed.
std::vector<TableMap> TableMapsOf(const std::string& rel) {
  std::vector<TableMap> out;
  std::string data = LoadFixture(rel);
  absl::Status s = test::WalkBinlog(data, rel, [&](const EventView& ev, const EventFramer& f) {
    if (ev.type() != kTableMapEvent) return absl::OkStatus();
    auto tm = ParseTableMap(ev, f.format());
    if (!tm.ok()) return tm.status();
    out.push_back(std::move(*tm));
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

// Golden: mysqlbinlog "Table_map: `default`.`boxercrab` mapped to number 109",
// body "6d0000000000 0100 07 default 00 09 boxercrab 00 02 03 0f 02 a000 00".
TEST(TableMapTest, Parses57BoxercrabGolden) {
  BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/5.7__16_xid__log.bin");
  auto maps = TableMapsOf("mysql-cdc-rs/5.7__16_xid__log.bin");
  ASSERT_EQ(maps.size(), 1u);
  const TableMap& tm = maps[0];
  EXPECT_EQ(tm.def.table_id, 109u);
  EXPECT_EQ(tm.flags, 1);
  EXPECT_EQ(tm.def.db, "default");
  EXPECT_EQ(tm.def.table, "boxercrab");
  ASSERT_EQ(tm.def.columns.size(), 2u);
  EXPECT_EQ(tm.def.columns[0].type, kTypeLong);
  EXPECT_FALSE(tm.def.columns[0].nullable);
  EXPECT_EQ(tm.def.columns[1].type, kTypeVarchar);
  EXPECT_EQ(tm.def.columns[1].meta, 160);  // VARCHAR(40) utf8mb4 = 160 bytes
  EXPECT_FALSE(tm.def.columns[1].nullable);
  EXPECT_FALSE(tm.def.columns[0].unsigned_known);  // 5.7: no optional metadata
  EXPECT_EQ(tm.optional_metadata_seen, 0u);
}

TEST(TableMapTest, PeekReadsIdsOnly) {
  BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/5.7__16_xid__log.bin");
  std::string data = LoadFixture("mysql-cdc-rs/5.7__16_xid__log.bin");
  auto events = test::AllEvents(data);
  for (const auto& ev : events) {
    if (ev.type() != kTableMapEvent) continue;
    auto ids = PeekTableMapIds(ev, Mysql8FormatDescription());
    ASSERT_TRUE(ids.ok()) << ids.status();
    EXPECT_EQ(ids->table_id, 109u);
    EXPECT_EQ(ids->db, "default");
    EXPECT_EQ(ids->table, "boxercrab");
  }
}

// Golden: zongji capture_types with binlog_row_metadata=FULL (schema in the
// capture's tableSchemas): names, PK, ENUM/SET members, charsets, signedness.
TEST(TableMapTest, MySql84FullMetadata) {
  BINRELAY_REQUIRE_FIXTURE("zongji/binlog-mysql84-fullmeta.events.binlog");
  auto maps = TableMapsOf("zongji/binlog-mysql84-fullmeta.events.binlog");
  ASSERT_EQ(maps.size(), 4u);
  const TableMap& tm = maps[0];
  EXPECT_EQ(tm.def.db, "zongji_fixture_capture");
  EXPECT_EQ(tm.def.table, "capture_types");
  ASSERT_EQ(tm.def.columns.size(), 26u);
  EXPECT_TRUE(tm.def.names_known);
  const auto& c = tm.def.columns;
  EXPECT_EQ(c[0].name, "id");
  EXPECT_TRUE(c[0].in_primary_key);
  EXPECT_EQ(tm.def.primary_key, std::vector<uint32_t>{0});
  EXPECT_FALSE(c[0].nullable);
  EXPECT_TRUE(c[2].is_unsigned && c[2].unsigned_known);  // bigint unsigned
  EXPECT_FALSE(c[1].is_unsigned);
  EXPECT_EQ(c[3].type, kTypeNewDecimal);
  EXPECT_EQ(c[3].meta, (30 << 8) | 10);  // decimal(30,10)
  EXPECT_EQ(c[5].type, kTypeString);     // char(5) utf8mb4 = 20 bytes
  EXPECT_EQ(c[5].meta, 20);
  EXPECT_EQ(c[6].collation, kBinaryCollation);  // binary(4)
  EXPECT_EQ(c[4].collation, 255u);              // utf8mb4_0900_ai_ci
  EXPECT_EQ(c[17].type, kTypeEnum);
  EXPECT_EQ(c[17].members, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(c[18].members, (std::vector<std::string>{"a,b", "c'd", "plain"}));
  EXPECT_EQ(c[19].type, kTypeSet);
  EXPECT_EQ(c[19].members, (std::vector<std::string>{"x", "y", "z"}));
  EXPECT_EQ(c[19].collation, 255u);  // from ENUM_AND_SET_DEFAULT_CHARSET
  EXPECT_EQ(c[20].type, kTypeBit);
  EXPECT_EQ(c[20].meta, (1 << 8) | 2);  // bit(10): 1 whole byte + 2 bits
  EXPECT_EQ(c[21].type, kTypeJson);
  EXPECT_EQ(c[22].type, kTypeGeometry);
  EXPECT_EQ(c[22].collation, 0u);  // MySQL does not count GEOMETRY as character
  EXPECT_EQ(c[23].collation, 8u);  // latin1_swedish_ci
  EXPECT_EQ(c[25].collation, 35u);  // ucs2_general_ci
  EXPECT_TRUE(tm.has_optional(kOptColumnVisibility));
  ASSERT_EQ(tm.visible.size(), 26u);
  EXPECT_TRUE(tm.visible[0]);
}

// MariaDB counts GEOMETRY among character columns (sql/log_event_client.cc
// is_character_type) and uses
// uca1400 collation ids above 2047.
TEST(TableMapTest, MariaDb118CharsetsCountGeometry) {
  BINRELAY_REQUIRE_FIXTURE("zongji/binlog-mariadb118.events.binlog");
  auto maps = TableMapsOf("zongji/binlog-mariadb118.events.binlog");
  ASSERT_FALSE(maps.empty());
  const auto& c = maps[0].def.columns;
  ASSERT_EQ(c.size(), 26u);
  EXPECT_EQ(c[22].type, kTypeGeometry);
  EXPECT_EQ(c[22].collation, kBinaryCollation);
  EXPECT_EQ(c[25].collation, 2560u);
  EXPECT_EQ(c[4].collation, 2304u);
  EXPECT_FALSE(maps[0].def.names_known);
}

// Builds a TABLE_MAP event (no CRC) around `body`.
std::string Event(uint8_t type, std::string_view body) {
  std::string ev(19, '\0');
  ev[4] = static_cast<char>(type);
  const uint32_t size = static_cast<uint32_t>(19 + body.size());
  for (int i = 0; i < 4; ++i) ev[9 + i] = static_cast<char>(size >> (8 * i));
  ev.append(body);
  return ev;
}

std::string Header(std::string_view db = "d", std::string_view tbl = "t") {
  std::string b("\x01\x00\x00\x00\x00\x00\x00\x00", 8);
  b.push_back(static_cast<char>(db.size()));
  b.append(db);
  b.push_back('\0');
  b.push_back(static_cast<char>(tbl.size()));
  b.append(tbl);
  b.push_back('\0');
  return b;
}

absl::Status ParseBody(const std::string& body) {
  std::string ev = Event(kTableMapEvent, body);
  auto view = MakeEventView(ev, false, 1000);
  EXPECT_TRUE(view.ok());
  return ParseTableMap(*view, Mysql8FormatDescription()).status();
}

// Guards against allocating a huge column vector from a hostile count.
TEST(TableMapTest, HostileColumnCountIsDataLoss) {
  std::string body = Header() + std::string("\xFE\xFF\xFF\xFF\xFF\xFF\xFF\xFF\x7F", 9);
  absl::Status s = ParseBody(body);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("TABLE_MAP at offset 1000 for `d`.`t`: column count"),
            std::string::npos) << s;
}

TEST(TableMapTest, MetadataLengthBeyondEventIsDataLoss) {
  std::string body = Header() + std::string("\x01\x0f\x40\x10\x00", 5);
  absl::Status s = ParseBody(body);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("metadata block of 64 bytes"), std::string::npos) << s;
}

// Guards the per-column metadata walk: a VARCHAR needs 2 bytes, 1 given.
TEST(TableMapTest, ShortColumnMetadataNamesColumn) {
  std::string body = Header() + std::string("\x02\x03\x0f\x01\xa0\x00", 6);
  absl::Status s = ParseBody(body);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("column 1 (VARCHAR)"), std::string::npos) << s;
}

TEST(TableMapTest, UnknownColumnTypeIsUnimplemented) {
  std::string body = Header() + std::string("\x01\x64\x00\x00", 4);
  absl::Status s = ParseBody(body);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("column 0"), std::string::npos) << s;
}

// A TYPED_ARRAY's metadata names its element type; a run of TYPED_ARRAY
// bytes used to recurse once per byte, and a 1 MiB run overflowed the
// stack. Guards against unbounded recursion driven by the event's bytes.
TEST(TableMapTest, TypedArrayOfTypedArrayIsDataLoss) {
  for (size_t run : {size_t{3}, size_t{1} << 20}) {
    std::string meta(run, '\x14');
    meta.push_back('\x03');  // finally a LONG
    std::string len = meta.size() < 251 ? std::string(1, static_cast<char>(meta.size()))
                                        : std::string("\xfd", 1) +
                                              std::string{static_cast<char>(meta.size() & 0xFF),
                                                          static_cast<char>(meta.size() >> 8 & 0xFF),
                                                          static_cast<char>(meta.size() >> 16)};
    std::string body = Header() + std::string("\x01\x14", 2) + len + meta + std::string(1, '\0');
    absl::Status s = ParseBody(body);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << run << ": " << s;
    EXPECT_NE(s.message().find("TYPED_ARRAY whose element is itself a TYPED_ARRAY"),
              std::string::npos) << s;
  }
}

// Guards the optional-metadata TLV length check.
TEST(TableMapTest, OptionalMetadataLengthBeyondEventIsDataLoss) {
  std::string body = Header() + std::string("\x01\x03\x00\x00" "\x04\x20" "\x02" "id", 9);
  absl::Status s = ParseBody(body);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("optional metadata field 4"), std::string::npos) << s;
}

// Unknown optional-metadata types are TLV and skipped by length.
TEST(TableMapTest, UnknownOptionalMetadataTypeIsSkipped) {
  std::string body = Header() + std::string("\x01\x03\x00\x00" "\x63\x02zz" "\x04\x03\x02id", 13);
  std::string ev = Event(kTableMapEvent, body);
  auto view = MakeEventView(ev, false);
  auto tm = ParseTableMap(*view, Mysql8FormatDescription());
  ASSERT_TRUE(tm.ok()) << tm.status();
  EXPECT_EQ(tm->def.columns[0].name, "id");
}

// Guards a COLUMN_CHARSET list that does not match the character columns.
TEST(TableMapTest, ColumnCharsetCountMismatchIsDataLoss) {
  std::string body = Header() + std::string("\x01\x0f\x02\x10\x00\x00" "\x03\x02\x08\x08", 10);
  absl::Status s = ParseBody(body);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("COLUMN_CHARSET lists 2 entries for 1"), std::string::npos) << s;
}

// A 6-byte TABLE_MAP post-header in the FDE means 4-byte table ids
// (libbinlogevents/src/rows_event.cpp Table_map_event).
TEST(TableMapTest, FourByteTableIdWhenPostHeaderIsSix) {
  FormatDescription fd = Mysql8FormatDescription();
  fd.post_header_len[kTableMapEvent - 1] = 6;
  std::string body("\x07\x00\x00\x00\x00\x00\x01x\x00\x01y\x00\x01\x03\x00\x00", 16);
  std::string ev = Event(kTableMapEvent, body);
  auto view = MakeEventView(ev, false);
  auto tm = ParseTableMap(*view, fd);
  ASSERT_TRUE(tm.ok()) << tm.status();
  EXPECT_EQ(tm->def.table_id, 7u);
  EXPECT_EQ(tm->def.db, "x");
  EXPECT_EQ(tm->def.table, "y");
}

}  // namespace
}  // namespace binrelay::protocol
