// Rows events: header parsing, table-id peek, row-image JSON decoding checked
// against mysqlbinlog -vv output (### @N= lines), the subscription-filter
// guarantee (RowsEventsDecoded), MariaDB compressed rows, hostile input.
#include "protocol/rows_event.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <map>
#include <set>
#include <sstream>

#include "protocol/event_type.h"
#include "protocol/mariadb_event_compression.h"
#include "protocol/row_decoder.h"
#include "protocol/table_map.h"
#include "tests/harness/fixtures.h"
#include "tests/harness/status_matchers.h"
#include "tests/protocol/binlog_test_util.h"

namespace binrelay::protocol {
namespace {

using test::LoadFixture;

// One image as name -> rendered value (strings unquoted).
using Image = std::map<std::string, std::string>;

// Minimal reader for the flat JSON objects RowDecoder emits.
Image ParseFlatJson(std::string_view j) {
  Image out;
  size_t i = 1;
  auto read_string = [&](std::string* s) {
    ++i;  // opening quote
    while (i < j.size() && j[i] != '"') {
      if (j[i] == '\\') ++i;
      s->push_back(j[i++]);
    }
    ++i;
  };
  while (i < j.size() && j[i] != '}') {
    std::string key, value;
    read_string(&key);
    ++i;  // ':'
    if (j[i] == '"') {
      read_string(&value);
    } else {
      while (i < j.size() && j[i] != ',' && j[i] != '}') value.push_back(j[i++]);
    }
    out[key] = value;
    if (j[i] == ',') ++i;
  }
  return out;
}

// Images from "### INSERT/UPDATE/DELETE" blocks, in event order.
std::vector<Image> DumpImages(const std::string& text) {
  std::vector<Image> images;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line == "### SET" || line == "### WHERE") {
      images.emplace_back();
      continue;
    }
    if (line.rfind("###   @", 0) != 0 || images.empty()) continue;
    const size_t eq = line.find('=');
    std::string key = line.substr(6, eq - 6);
    std::string rest = line.substr(eq + 1);
    std::string value;
    if (!rest.empty() && rest[0] == '\'') {
      value = rest.substr(1, rest.find("' /*") - 1);
    } else {
      value = rest.substr(0, rest.find(' '));
    }
    images.back()[key] = value;
  }
  return images;
}

std::vector<Image> DecodedImages(const std::string& data) {
  std::vector<Image> images;
  std::map<uint64_t, TableDef> maps;
  RowDecoder decoder;
  absl::Status s = test::WalkBinlog(data, "", [&](const EventView& ev, const EventFramer& f) {
    if (ev.type() == kTableMapEvent) {
      auto tm = ParseTableMap(ev, f.format());
      if (!tm.ok()) return tm.status();
      maps[tm->def.table_id] = tm->def;
    } else if (IsRowsEventType(ev.type())) {
      auto rows = ParseRowsEvent(ev, f.format());
      if (!rows.ok()) return rows.status();
      return decoder.Decode(*rows, maps.at(rows->table_id), [&](const DecodedRow& r) {
        if (r.has_before) images.push_back(ParseFlatJson(r.before_json));
        if (r.has_after) images.push_back(ParseFlatJson(r.after_json));
        return absl::OkStatus();
      });
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
  return images;
}

// Golden: every row value mysqlbinlog -vv printed must equal ours.
TEST(RowDecoderTest, ValuesMatchMysqlbinlogVerboseDumps) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"5.7__19_table_map__log.bin", "5.7__19_table_map__dump.txt"},
      {"5.7__29_row_query__log.bin", "5.7__29_row_query__dump.txt"},
      {"5.7__30_write_rows_v2__log.bin", "5.7__30_write_rows_v2__dump.txt"},
      {"5.7__32_delete_rows_v2__log.bin", "5.7__32_delete_rows_v2__dump.txt"},
      {"5.7__33_35_gtid_prev_gtid__log.bin", "5.7__33_35_gtid_prev_gtid__dump.txt"},
      {"5.7__34_anonymous_gtid__log.bin", "5.7__34_anonymous_gtid__dump.txt"},
      {"8.0__19_30_Table_map_event_Write_rows_log_event__binlog.000018",
       "8.0__19_30_Table_map_event_Write_rows_log_event__dump.txt"},
      {"8.0__31_update_rows_v2__binlog.000001", "8.0__31_update_rows_v2__dump.txt"},
      {"8.0__32_delete_rows_v2__binlog.000001", "8.0__32_delete_rows_v2__dump.txt"},
  };
  for (const auto& [bin, dump] : files) {
    BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/" + bin, "mysql-cdc-rs/" + dump);
  }
  size_t compared = 0;
  for (const auto& [bin, dump] : files) {
    SCOPED_TRACE(bin);
    auto expected = DumpImages(test::LoadText("mysql-cdc-rs/" + dump));
    auto got = DecodedImages(LoadFixture("mysql-cdc-rs/" + bin));
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i], expected[i]) << "image " << i;
      compared += expected[i].size();
    }
  }
  EXPECT_GT(compared, 60u);
}

TEST(RowsEventTest, ParsesV2HeaderGolden) {
  BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/5.7__16_xid__log.bin");
  // 5.7__16_xid at 860: "6d0000000000 0100 0200 02 ff | fc 01000000 0b hahhhhhhhhh".
  std::string data = LoadFixture("mysql-cdc-rs/5.7__16_xid__log.bin");
  for (const auto& ev : test::AllEvents(data)) {
    if (ev.type() != kWriteRowsEvent) continue;
    EXPECT_EQ(ev.offset, 860u);
    auto fd = Mysql8FormatDescription();
    auto id = PeekRowsTableId(ev, fd);
    ASSERT_TRUE(id.ok());
    EXPECT_EQ(*id, 109u);
    auto r = ParseRowsEvent(ev, fd);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->version, 2);
    EXPECT_EQ(r->kind, RowsKind::kWrite);
    EXPECT_TRUE(r->stmt_end());
    EXPECT_EQ(r->column_count, 2u);
    EXPECT_EQ(r->columns_after, "\xff");
    EXPECT_TRUE(r->extra_data.empty());
    EXPECT_EQ(r->rows.size(), 1u + 4 + 1 + 11);
  }
}

// Proves the filter path: rows events of unsubscribed tables are identified
// by PeekRowsTableId alone and never reach the row decoder.
TEST(RowDecoderTest, UnsubscribedTablesAreNeverRowDecoded) {
  BINRELAY_REQUIRE_FIXTURE("msmp/binlog.000001");
  std::string data = LoadFixture("msmp/binlog.000001");
  auto walk = [&](const std::set<std::string>& subscribed) {
    std::map<uint64_t, TableDef> maps;  // subscribed tables only
    RowDecoder decoder;
    uint64_t decoded_events = 0;
    absl::Status s = test::WalkBinlog(data, "", [&](const EventView& ev, const EventFramer& f) {
      if (ev.type() == kTableMapEvent) {
        auto ids = PeekTableMapIds(ev, f.format());
        if (!ids.ok()) return ids.status();
        if (!subscribed.count(std::string(ids->table))) return absl::OkStatus();
        auto tm = ParseTableMap(ev, f.format());
        if (!tm.ok()) return tm.status();
        maps[tm->def.table_id] = tm->def;
      } else if (IsRowsEventType(ev.type())) {
        auto id = PeekRowsTableId(ev, f.format());
        if (!id.ok()) return id.status();
        auto it = maps.find(*id);
        if (it == maps.end()) return absl::OkStatus();
        auto rows = ParseRowsEvent(ev, f.format());
        if (!rows.ok()) return rows.status();
        ++decoded_events;
        return decoder.Decode(*rows, it->second, [](const DecodedRow&) { return absl::OkStatus(); });
      }
      return absl::OkStatus();
    });
    EXPECT_TRUE(s.ok()) << s;
    return decoded_events;
  };
  const uint64_t before = RowsEventsDecoded();
  EXPECT_EQ(walk({}), 0u);
  EXPECT_EQ(RowsEventsDecoded(), before);
  std::string first_table;
  for (const auto& ev : test::AllEvents(data)) {
    if (ev.type() != kTableMapEvent) continue;
    first_table = std::string(PeekTableMapIds(ev, Mysql8FormatDescription())->table);
    break;
  }
  const uint64_t n = walk({first_table});
  EXPECT_GT(n, 0u);
  EXPECT_EQ(RowsEventsDecoded(), before + n);
}

// MariaDB WRITE_ROWS_COMPRESSED_V1 (166): zlib rows section inflated first.
TEST(RowDecoderTest, MariaDbCompressedRowsDecode) {
  BINRELAY_REQUIRE_FIXTURE("zongji/binlog-mariadb118.events.binlog");
  std::string data = LoadFixture("zongji/binlog-mariadb118.events.binlog");
  std::map<uint64_t, TableDef> maps;
  RowDecoder decoder;
  int compressed = 0;
  absl::Status s = test::WalkBinlog(data, "", [&](const EventView& ev, const EventFramer& f) {
    if (ev.type() == kTableMapEvent) {
      auto tm = ParseTableMap(ev, f.format());
      if (!tm.ok()) return tm.status();
      maps[tm->def.table_id] = tm->def;
    } else if (ev.type() == kWriteRowsCompressedEventV1) {
      auto rows = ParseRowsEvent(ev, f.format());
      if (!rows.ok()) return rows.status();
      EXPECT_TRUE(rows->compressed);
      ++compressed;
      return decoder.Decode(*rows, maps.at(rows->table_id), [&](const DecodedRow& r) {
        EXPECT_EQ(r.after_json.substr(0, 6), "{\"@1\":");
        return absl::OkStatus();
      });
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(compressed, 1);
}

// Fixture pieces for hostile cases: the boxercrab TABLE_MAP and WRITE_ROWS.
struct Boxercrab {
  TableDef table;
  std::string rows_event;  // without CRC
};

Boxercrab LoadBoxercrab() {
  Boxercrab b;
  std::string data = LoadFixture("mysql-cdc-rs/5.7__16_xid__log.bin");
  for (const auto& ev : test::AllEvents(data)) {
    if (ev.type() == kTableMapEvent) b.table = ParseTableMap(ev, Mysql8FormatDescription())->def;
    if (ev.type() == kWriteRowsEvent) {
      b.rows_event = std::string(ev.bytes.substr(0, ev.bytes.size() - 4));
      b.rows_event[9] = static_cast<char>(b.rows_event.size());
    }
  }
  return b;
}

absl::Status DecodeRaw(const Boxercrab& b, const std::string& event) {
  auto ev = MakeEventView(event, false, 860);
  if (!ev.ok()) return ev.status();
  auto rows = ParseRowsEvent(*ev, Mysql8FormatDescription());
  if (!rows.ok()) return rows.status();
  RowDecoder d;
  return d.Decode(*rows, b.table, [](const DecodedRow&) { return absl::OkStatus(); });
}

TEST(RowDecoderTest, DecodesBoxercrabRow) {
  BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/5.7__16_xid__log.bin");
  Boxercrab b = LoadBoxercrab();
  auto ev = MakeEventView(b.rows_event, false, 860);
  ASSERT_TRUE(ev.ok()) << ev.status();
  auto rows = ParseRowsEvent(*ev, Mysql8FormatDescription());
  ASSERT_TRUE(rows.ok());
  RowDecoder d;
  std::string got;
  ASSERT_TRUE(d.Decode(*rows, b.table, [&](const DecodedRow& r) {
                 got = std::string(r.after_json);
                 EXPECT_FALSE(r.after_partial);
                 return absl::OkStatus();
               }).ok());
  EXPECT_EQ(got, R"({"@1":1,"@2":"hahhhhhhhhh"})");
}

// Guards the VARCHAR length check: a length past the event must not be read.
TEST(RowDecoderTest, HostileValueLengthNamesTableColumnAndOffset) {
  BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/5.7__16_xid__log.bin");
  Boxercrab b = LoadBoxercrab();
  std::string ev = b.rows_event;
  ev[19 + 10 + 1 + 1 + 1 + 4] = static_cast<char>(0x7f);  // VARCHAR length 127 > 11 left
  absl::Status s = DecodeRaw(b, ev);
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << s;
  EXPECT_NE(s.message().find("`default`.`boxercrab` row 0 after image: column 2 (VARCHAR) at file offset 896"),
            std::string::npos) << s;
}

TEST(RowDecoderTest, TruncatedRowIsOutOfRange) {
  BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/5.7__16_xid__log.bin");
  Boxercrab b = LoadBoxercrab();
  std::string ev = b.rows_event.substr(0, b.rows_event.size() - 5);
  ev[9] = static_cast<char>(ev.size());
  EXPECT_EQ(DecodeRaw(b, ev).code(), absl::StatusCode::kOutOfRange);
}

// Guards bitmap sizing from a hostile column count.
TEST(RowsEventTest, HostileColumnCountIsDataLoss) {
  BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/5.7__16_xid__log.bin");
  Boxercrab b = LoadBoxercrab();
  std::string ev = b.rows_event.substr(0, 19 + 10);
  ev += std::string("\xfe\xff\xff\xff\xff\xff\xff\xff\x0f", 9);
  ev[9] = static_cast<char>(ev.size());
  absl::Status s = DecodeRaw(b, ev);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("WRITE_ROWS event at offset 860: column count"), std::string::npos) << s;
}

TEST(RowsEventTest, ExtraDataLengthBeyondEventIsDataLoss) {
  BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/5.7__16_xid__log.bin");
  Boxercrab b = LoadBoxercrab();
  std::string ev = b.rows_event;
  ev[19 + 8] = static_cast<char>(0xF0);  // extra-data length 240
  EXPECT_EQ(DecodeRaw(b, ev).code(), absl::StatusCode::kDataLoss);
  ev[19 + 8] = 1;  // below its own 2 bytes
  EXPECT_EQ(DecodeRaw(b, ev).code(), absl::StatusCode::kDataLoss);
}

// A rows event must not be decoded with another table's map.
TEST(RowDecoderTest, TableIdMismatchIsInvalidArgument) {
  BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/5.7__16_xid__log.bin");
  Boxercrab b = LoadBoxercrab();
  b.table.table_id = 110;
  EXPECT_EQ(DecodeRaw(b, b.rows_event).code(), absl::StatusCode::kInvalidArgument);
}

TEST(RowDecoderTest, MoreColumnsThanTableMapIsDataLoss) {
  BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/5.7__16_xid__log.bin");
  Boxercrab b = LoadBoxercrab();
  b.table.columns.pop_back();
  EXPECT_EQ(DecodeRaw(b, b.rows_event).code(), absl::StatusCode::kDataLoss);
}

// Found by rows_event_fuzz: a 51-byte compressed rows event whose header
// declared about 1 GiB made the decoder allocate (and zero) all of it before
// zlib failed. Guards that such a claim is refused from the header, and that
// an honest field still inflates.
TEST(MariadbEventCompressionTest, DeclaredLengthBeyondDeflatesLimitIsRefusedBeforeAllocating) {
  // h = 0x84: zlib, 4 length bytes; 0x3fffffff bytes declared; 5 bytes of "stream".
  const std::string bogus("\x84\x3f\xff\xff\xff\x78\x9c\x03\x00\x00", 10);
  std::string out;
  absl::Status s = UncompressMariadbEventField(bogus, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("from only 5 compressed bytes"), std::string::npos) << s;
  EXPECT_LT(out.capacity(), size_t{1} << 20);

  // 3000 'a's deflate to a handful of bytes: within the ratio, inflated.
  const std::string plain(3000, 'a');
  uLongf n = compressBound(plain.size());
  std::string z(n, '\0');
  ASSERT_EQ(compress(reinterpret_cast<Bytef*>(z.data()), &n,
                     reinterpret_cast<const Bytef*>(plain.data()), plain.size()),
            Z_OK);
  z.resize(n);
  const std::string field = std::string("\x82\x0b\xb8", 3) + z;  // 3000 = 0x0bb8
  BR_ASSERT_OK(UncompressMariadbEventField(field, &out));
  EXPECT_EQ(out, plain);
}

}  // namespace
}  // namespace binrelay::protocol
