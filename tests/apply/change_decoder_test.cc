// Drives the whole file pipeline (file source -> framer -> decoder -> sink)
// over the recorded fixtures, as `binrelay tail --file` does.
#include "apply/change_decoder.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/match.h"
#include "apply/json_line_sink.h"
#include "protocol/event_type.h"
#include "protocol/format_description.h"
#include "protocol/row_decoder.h"
#include "replication/binlog_file_source.h"
#include "tests/harness/fixtures.h"

namespace binrelay::apply {
namespace {

using binrelay::testing::FixturePath;
using binrelay::testing::FixturesDir;

class CollectingSink : public ChangeSink {
 public:
  std::vector<std::string> committed;  // one entry per row, "op db.table after"
  std::vector<std::string> open;
  int commits = 0;
  absl::Status OnRow(const RowChange& row) override {
    open.push_back(std::string(RowOpName(row.op)) + " " + row.table->db + "." + row.table->table +
                   " " + std::string(row.before) + " " + std::string(row.after) +
                   " gtid=" + std::string(row.gtid));
    return absl::OkStatus();
  }
  absl::Status OnCommit() override {
    ++commits;
    committed.insert(committed.end(), open.begin(), open.end());
    open.clear();
    return absl::OkStatus();
  }
  void OnRestart() override { open.clear(); }
};

absl::Status DecodeFixture(const std::string& path, std::string_view tables, CollectingSink* sink,
                           DecoderStats* stats = nullptr) {
  auto sub = Subscription::Parse(tables);
  if (!sub.ok()) return sub.status();
  replication::SchemaCache no_schema(nullptr);
  ChangeDecoder decoder(&*sub, &no_schema, sink);
  absl::Status s = absl::EndsWith(path, ".packets.bin")
                       ? replication::FeedPacketCapture(path, decoder)
                       : replication::FeedBinlogFile(path, decoder);
  if (stats) *stats = decoder.stats();
  return s;
}

bool IsCompanionFile(const std::string& name) {
  for (const char* ext : {".txt", ".sql", ".terms", ".pcap", ".pcapng", ".md", ".py"}) {
    if (absl::EndsWith(name, ext)) return true;
  }
  return false;
}

// Files that cannot decode, with the error they must give. Anything else
// failing is a decoder bug.
const std::map<std::string, std::string>& ExpectedFailures() {
  static const auto* m = new std::map<std::string, std::string>{
      {"rust_mysql_common/binlog_truncated_event.000001", "truncated event header at offset 4"},
      {"rust_mysql_common/binlog_truncated_prev_gtid_event.000001",
       "truncated event header at offset 120"},
      // A relay log cut mid-event by the mysql-test suite on purpose.
      {"rust_mysql_common/corrupt-relay-bin.000624", "offset 91204"},
      // A pre-GA 5.2 development build: rows events whose TABLE_MAPs are not in
      // the file (they went to the `_r` file); nothing can decode them.
      {"rust_mysql_common/ver_5_1-wl2325_s.001", "no TABLE_MAP"},
      // Its companion: the same development build's TABLE_MAP layout is not
      // the released one (db name and metadata do not parse).
      {"rust_mysql_common/ver_5_1-wl2325_r.001", "TABLE_MAP at offset 650"},
      // MariaDB pre-10.1 hires temporal columns: their width is only in the
      // schema, which a file alone does not have (decoded with it in
      // protocol value tests).
      {"zongji/binlog-mariadb118.events.binlog", "pre-10.1 TIMESTAMP/TIME/DATETIME"},
      {"zongji/binlog-mariadb118.packets.bin", "pre-10.1 TIMESTAMP/TIME/DATETIME"},
  };
  return *m;
}

// Guards the acceptance item "every fixture decodes end to end": every binlog
// and capture decodes with every table subscribed, or fails exactly as listed.
TEST(ChangeDecoderFixtureTest, EveryFixtureDecodesEndToEndOrFailsWithItsOffset) {
  BINRELAY_REQUIRE_FIXTURE_DIR("");
  int decoded = 0;
  for (const auto& dir : std::filesystem::directory_iterator(FixturesDir())) {
    if (!dir.is_directory()) continue;
    for (const auto& f : std::filesystem::directory_iterator(dir.path())) {
      std::string name = f.path().filename().string();
      if (IsCompanionFile(name)) continue;
      std::string rel = dir.path().filename().string() + "/" + name;
      CollectingSink sink;
      absl::Status s = DecodeFixture(f.path().string(), "*.*", &sink);
      auto expected = ExpectedFailures().find(rel);
      if (expected == ExpectedFailures().end()) {
        EXPECT_TRUE(s.ok()) << rel << ": " << s;
      } else {
        EXPECT_FALSE(s.ok()) << rel << " should fail";
        EXPECT_TRUE(absl::StrContains(s.message(), expected->second))
            << rel << ": " << s << " (expected to mention '" << expected->second << "')";
      }
      ++decoded;
    }
  }
  EXPECT_GT(decoded, 80);  // binlogs and captures among the ~148 files
}

// The unsubscribed part of the stream must cost only a table-id read: the
// process-wide counter of row-decoded events moves by exactly the number of
// rows events of subscribed tables.
TEST(ChangeDecoderFixtureTest, UnsubscribedTablesAreNeverRowDecoded) {
  BINRELAY_REQUIRE_FIXTURE("mysql-binlog-connector-java/mysql-bin.sakila.gz");
  CollectingSink all_sink;
  DecoderStats all;
  ASSERT_TRUE(DecodeFixture(FixturePath("mysql-binlog-connector-java/mysql-bin.sakila.gz"),
                            "*.*", &all_sink, &all).ok());
  CollectingSink one_sink;
  DecoderStats one;
  uint64_t before = protocol::RowsEventsDecoded();
  ASSERT_TRUE(DecodeFixture(FixturePath("mysql-binlog-connector-java/mysql-bin.sakila.gz"),
                            "sakila.actor", &one_sink, &one).ok());
  uint64_t decoded = protocol::RowsEventsDecoded() - before;
  EXPECT_EQ(decoded, one.rows_events_decoded);
  EXPECT_EQ(one.rows_events_decoded + one.rows_events_skipped, all.rows_events_decoded);
  EXPECT_GT(one.rows_events_decoded, 0u);
  EXPECT_GT(one.rows_events_skipped, 10 * one.rows_events_decoded);
  for (const std::string& row : one_sink.committed) {
    ASSERT_TRUE(absl::StartsWith(row, "insert sakila.actor ")) << row;
  }
  EXPECT_EQ(one_sink.committed.size(), 200u);  // sakila's actor table has 200 rows
}

// MariaDB capture: GTIDs come from the MariaDB GTID event, ANNOTATE_ROWS and
// the compressed WRITE_ROWS event are handled, rows commit at XID.
TEST(ChangeDecoderFixtureTest, MysqlCaptureCarriesGtidsAndCommitsAtXid) {
  BINRELAY_REQUIRE_FIXTURE("zongji/binlog-mysql84.packets.bin");
  CollectingSink sink;
  ASSERT_TRUE(DecodeFixture(FixturePath("zongji/binlog-mysql84.packets.bin"), "*.*", &sink).ok());
  ASSERT_FALSE(sink.committed.empty());
  EXPECT_TRUE(absl::StrContains(sink.committed[0], "gtid=")) << sink.committed[0];
  EXPECT_FALSE(absl::EndsWith(sink.committed[0], "gtid="));  // a GTID is present
  EXPECT_TRUE(sink.open.empty());
}

// A file cut inside a transaction must not deliver that transaction's rows.
TEST(ChangeDecoderFixtureTest, FileEndingMidTransactionDropsTheOpenTransaction) {
  BINRELAY_REQUIRE_FIXTURE("mysql-cdc-rs/8.0__31_update_rows_v2__binlog.000001");
  std::string data = binrelay::testing::ReadFileOrDie(
      FixturePath("mysql-cdc-rs/8.0__31_update_rows_v2__binlog.000001"));
  CollectingSink full;
  ASSERT_TRUE(DecodeFixture(FixturePath("mysql-cdc-rs/8.0__31_update_rows_v2__binlog.000001"),
                            "*.*", &full).ok());
  ASSERT_EQ(full.committed.size(), 2u);
  // Cut right after the UPDATE rows event (before its XID): only the insert
  // transaction is complete.
  size_t cut = 1431;
  std::string path = ::testing::TempDir() + "/cut.binlog";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(data.data(), static_cast<std::streamsize>(cut));
  }
  CollectingSink partial;
  ASSERT_TRUE(DecodeFixture(path, "*.*", &partial).ok());
  ASSERT_EQ(partial.committed.size(), 1u);
  EXPECT_TRUE(absl::StartsWith(partial.committed[0], "insert test.int_table")) << partial.committed[0];
}

// A TABLE_MAP of `d`.`t` (one INT column) under table id `id`, no CRC.
std::string TableMapEvent(uint64_t id) {
  std::string body;
  for (int i = 0; i < 6; ++i) body.push_back(static_cast<char>(id >> (8 * i)));
  body.append(2, '\0');                  // flags
  body.append(std::string("\1d\0", 3));   // db
  body.append(std::string("\1t\0", 3));   // table
  body.append(std::string("\1\3\0\0", 4));  // 1 column: LONG, no metadata, not nullable
  std::string ev(19, '\0');
  ev[4] = static_cast<char>(protocol::kTableMapEvent);
  const uint32_t size = static_cast<uint32_t>(19 + body.size());
  for (int i = 0; i < 4; ++i) ev[9 + i] = static_cast<char>(size >> (8 * i));
  return ev + body;
}

// Table ids rise at every reopen and DDL of a table, so a long-running
// pipeline sees an endless series of them. Guards against the decoder's
// table-id cache growing without bound (it is emptied past its size at a
// transaction's end) and against one transaction mapping tables without
// end (refused with its position).
TEST(ChangeDecoderTest, TableIdCacheStaysBoundedAsIdsRise) {
  auto sub = Subscription::Parse("*.*");
  ASSERT_TRUE(sub.ok());
  CollectingSink sink;
  ChangeDecoder decoder(&*sub, nullptr, &sink);
  const protocol::FormatDescription fde = protocol::Mysql8FormatDescription();
  replication::BinlogPosition end{"bin.000001", 4};
  size_t most = 0;
  for (uint64_t id = 1; id <= 3 * ChangeDecoder::kCachedTablesAfterCommit; ++id) {
    const std::string ev = TableMapEvent(id);
    auto view = protocol::MakeEventView(ev, false, 4);
    ASSERT_TRUE(view.ok()) << view.status();
    absl::Status s = decoder.OnEvent({*view, fde, end, /*ends_transaction=*/true});
    ASSERT_TRUE(s.ok()) << s;
    most = std::max(most, decoder.cached_tables());
  }
  EXPECT_EQ(most, ChangeDecoder::kCachedTablesAfterCommit);  // 3x as many ids went by
  EXPECT_LE(decoder.cached_tables(), ChangeDecoder::kCachedTablesAfterCommit);

  // One transaction that never ends.
  absl::Status s;
  uint64_t id = 1'000'000;
  for (; s.ok() && id < 1'000'000 + 2 * ChangeDecoder::kMaxTablesPerTransaction; ++id) {
    const std::string ev = TableMapEvent(id);
    auto view = protocol::MakeEventView(ev, false, 4);
    ASSERT_TRUE(view.ok()) << view.status();
    s = decoder.OnEvent({*view, fde, end, /*ends_transaction=*/false});
  }
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;  // not retried as a lost link
  EXPECT_NE(s.message().find("bin.000001:4"), std::string_view::npos) << s;
  EXPECT_LE(decoder.cached_tables(),
            ChangeDecoder::kCachedTablesAfterCommit + ChangeDecoder::kMaxTablesPerTransaction);
}

TEST(JsonLineSinkTest, WritesCompleteLinesOnlyForCommittedTransactions) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  JsonLineSink sink(fds[1], /*flush_each_commit=*/true);
  protocol::TableDef t;
  t.db = "d\"b";
  t.table = "t";
  RowChange row;
  row.table = &t;
  row.file = "bin.000001";
  row.pos = 99;
  row.timestamp = 7;
  row.after = "{\"id\":1}";
  ASSERT_TRUE(sink.OnRow(row).ok());
  sink.OnRestart();  // the first transaction is re-sent after a reconnect
  row.op = RowOp::kUpdate;
  row.before = "{\"id\":1}";
  row.gtid = "0-1-5";
  row.partial = true;
  ASSERT_TRUE(sink.OnRow(row).ok());
  ASSERT_TRUE(sink.OnCommit().ok());
  close(fds[1]);
  char buf[4096];
  ssize_t n = read(fds[0], buf, sizeof(buf));
  close(fds[0]);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(n)),
            "{\"op\":\"update\",\"db\":\"d\\\"b\",\"table\":\"t\",\"file\":\"bin.000001\","
            "\"pos\":99,\"gtid\":\"0-1-5\",\"ts\":7,\"before\":{\"id\":1},\"after\":{\"id\":1},"
            "\"image\":\"partial\"}\n");
  EXPECT_EQ(sink.rows_written(), 1u);
}

}  // namespace
}  // namespace binrelay::apply
