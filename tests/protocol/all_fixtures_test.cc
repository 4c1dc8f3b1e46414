// Walks EVERY binlog-shaped fixture end to end (gunzipped sakila, zongji
// captures in both forms): frames every event, verifies every CRC, parses
// every TABLE_MAP. Guards against any fixture tripping the decoders.
#include <gtest/gtest.h>

#include <map>

#include "protocol/control_events.h"
#include "protocol/event_type.h"
#include "protocol/gtid_events.h"
#include "protocol/query_event.h"
#include "protocol/transaction_payload.h"
#include "protocol/row_decoder.h"
#include "protocol/rows_event.h"
#include "protocol/table_map.h"
#include "protocol/status_macros.h"
#include "tests/harness/fixtures.h"
#include "tests/protocol/binlog_test_util.h"

namespace binrelay::protocol {
namespace {

struct WalkStats {
  uint64_t events = 0;
  uint64_t table_maps = 0;
  uint64_t rows_events = 0;
  uint64_t rows = 0;
  uint64_t orphan_rows_events = 0;  // no TABLE_MAP for the id (pre-GA files)
  uint64_t inner_events = 0;        // inside TRANSACTION_PAYLOAD
  std::string scratch;
  std::map<uint64_t, TableDef> maps;
  RowDecoder decoder;
};

absl::Status VisitEvent(const EventView& ev, const FormatDescription& fd, WalkStats* stats);

// Every other event type must parse with its own parser.
absl::Status ParseOther(const EventView& ev, const FormatDescription& fd, WalkStats* stats) {
  switch (ev.type()) {
    case kQueryEvent:
    case kQueryCompressedEvent: return ParseQueryEvent(ev, fd, &stats->scratch).status();
    case kRotateEvent: return ParseRotate(ev).status();
    case kXidEvent: return ParseXid(ev).status();
    case kIntvarEvent: return ParseIntvar(ev).status();
    case kRandEvent: return ParseRand(ev).status();
    case kUserVarEvent: return ParseUserVar(ev).status();
    case kIncidentEvent: return ParseIncident(ev).status();
    case kXaPrepareEvent: return ParseXaPrepare(ev).status();
    case kRowsQueryEvent:
    case kAnnotateRowsEvent: return ParseRowsQuery(ev).status();
    case kHeartbeatEvent:
    case kHeartbeatEventV2: return ParseHeartbeat(ev, fd.is_mariadb).status();
    case kAppendBlockEvent:
    case kBeginLoadQueryEvent:
    case kDeleteFileEvent: return ParseLoadBlock(ev).status();
    case kExecuteLoadQueryEvent: return ParseExecuteLoadQuery(ev, fd).status();
    case kGtidEvent:
    case kAnonymousGtidEvent:
    case kGtidTaggedEvent: return ParseMysqlGtid(ev).status();
    case kPreviousGtidsEvent: return DecodeGtidSetText(ev.body).status();
    case kMariaGtidEvent: return ParseMariaGtid(ev).status();
    case kGtidListEvent: return ParseMariaGtidList(ev).status();
    case kBinlogCheckpointEvent: return ParseBinlogCheckpoint(ev).status();
    case kTransactionPayloadEvent: {
      auto tp = ParseTransactionPayload(ev);
      if (!tp.ok()) return tp.status();
      std::string inflated;
      BR_RETURN_IF_ERROR(DecompressTransactionPayload(*tp, &inflated));
      PayloadEventIterator it(inflated, ev.offset);
      EventView inner;
      while (true) {
        auto more = it.Next(&inner);
        if (!more.ok()) return more.status();
        if (!*more) return absl::OkStatus();
        if (inner.header.log_pos != 0 || inner.has_checksum) {
          return absl::InternalError("inner event with log_pos or CRC");
        }
        ++stats->inner_events;
        BR_RETURN_IF_ERROR(VisitEvent(inner, fd, stats));
      }
    }
    default: return absl::OkStatus();
  }
}

absl::Status VisitEvent(const EventView& ev, const FormatDescription& fd, WalkStats* stats) {
  ++stats->events;
  if (ev.type() != kTableMapEvent && !IsRowsEventType(ev.type())) return ParseOther(ev, fd, stats);
  if (ev.type() == kTableMapEvent) {
    auto tm = ParseTableMap(ev, fd);
    if (!tm.ok()) return tm.status();
    ++stats->table_maps;
    // MariaDB pre-10.1 "hires" DATETIME/TIME/TIMESTAMP(3) carry no TABLE_MAP
    // metadata; their fsp comes from the schema (column_def.h). The zongji
    // capture's CREATE TABLE declares all three capture_hires columns (3).
    if (tm->def.table == "capture_hires") {
      for (ColumnDef& col : tm->def.columns) col.meta = 3;
    }
    stats->maps[tm->def.table_id] = std::move(tm->def);
  } else if (IsRowsEventType(ev.type())) {
    auto rows = ParseRowsEvent(ev, fd);
    if (!rows.ok()) return rows.status();
    ++stats->rows_events;
    auto it = stats->maps.find(rows->table_id);
    if (it == stats->maps.end()) {
      ++stats->orphan_rows_events;
      return absl::OkStatus();
    }
    return stats->decoder.Decode(*rows, it->second, [&](const DecodedRow& row) {
      ++stats->rows;
      if (row.has_after && (row.after_json.empty() || row.after_json.front() != '{')) {
        return absl::InternalError("bad JSON");
      }
      return absl::OkStatus();
    });
  }
  return absl::OkStatus();
}

TEST(AllFixturesTest, EveryBinlogAndCaptureWalksCleanly) {
  BINRELAY_REQUIRE_FIXTURE_DIR("");
  const auto files = test::AllBinlogFixtures();
  ASSERT_GE(files.size(), 70u);
  uint64_t total_events = 0, total_maps = 0;
  for (const auto& f : files) {
    SCOPED_TRACE(f.rel);
    std::string data = test::LoadFixture(f.rel);
    WalkStats stats;
    // Truncation fixtures are expected to fail; checked in their own tests.
    const bool truncated = f.rel.find("truncated") != std::string::npos;
    absl::Status s;
    if (f.kind == test::FixtureKind::kBinlog) {
      s = test::WalkBinlog(data, f.rel, [&](const EventView& ev, const EventFramer& fr) {
        static const FormatDescription kNoFormat;
        return VisitEvent(ev, fr.has_format() ? fr.format() : kNoFormat, &stats);
      });
    } else {
      PacketCaptureReader reader(data, f.rel);
      EventView ev;
      while (true) {
        auto more = reader.Next(&ev);
        if (!more.ok()) { s = more.status(); break; }
        if (!*more) break;
        // A capture starts with an artificial ROTATE, before any FDE.
        static const FormatDescription kNoFormat;
        s = VisitEvent(ev, reader.framer().has_format() ? reader.framer().format() : kNoFormat,
                       &stats);
        if (!s.ok()) break;
      }
    }
    if (truncated) {
      EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << s;
    } else if (f.rel.find("ver_5_1-wl2325_") != std::string::npos) {
      // 5.2.2 development drops (WL#2325) whose type 19..22 events predate
      // the GA TABLE_MAP/rows layouts (their FDE gives 19 a 6-byte and 21/22
      // 4/26-byte post-headers); they must be refused loudly, never misread.
      EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
    } else if (f.rel == "rust_mysql_common/corrupt-relay-bin.000624") {
      // mysql-test's deliberately corrupted relay log: the QUERY at 91204
      // declares a 16949-byte status-variable block in a 214-byte event.
      EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
      EXPECT_NE(s.message().find("QUERY event at offset 91204"), std::string::npos) << s;
    } else {
      EXPECT_TRUE(s.ok()) << s;
      EXPECT_GT(stats.events, 0u);
    }
    std::cout << f.rel << ": " << stats.events << " events, " << stats.table_maps << " maps, "
              << stats.rows_events << " rows events, " << stats.rows << " rows, "
              << stats.orphan_rows_events << " orphan, " << stats.inner_events << " inner\n";
    total_events += stats.events;
    total_maps += stats.table_maps;
  }
  EXPECT_GT(total_events, 18000u);
  EXPECT_GT(total_maps, 7000u);
}

}  // namespace
}  // namespace binrelay::protocol
