// BinlogSender: what a dump from binrelay's store puts on the wire. Stores
// are built from recorded binlogs; the output is parsed back packet by
// packet, so every test checks bytes a real replica would read.
#include "proxy/binlog_sender.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "protocol/binlog_file_reader.h"
#include "protocol/checksum.h"
#include "protocol/control_events.h"
#include "protocol/event_type.h"
#include "protocol/gtid_events.h"
#include "protocol/packet_framer.h"
#include "proxy/client_error.h"
#include "replication/binlog_store.h"
#include "protocol/server_error.h"
#include "tests/harness/binlog_fixtures.h"
#include "tests/harness/fixtures.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/temp_dir.h"
#include "tests/harness/store_feed.h"

namespace binrelay::proxy {
namespace {

namespace fs = std::filesystem;
using testing::FixturePath;
using testing::ReadFileOrDie;


// Every packet payload of a dump's output, checked for sequence ids
// first_seq, first_seq + 1, ...
std::vector<std::string> Payloads(const std::string& wire, uint8_t first_seq = 1) {
  protocol::PacketReader reader;
  reader.set_next_seq(first_seq);
  char* dst = nullptr;
  size_t room = reader.PrepareWrite(wire.size(), &dst);
  EXPECT_GE(room, wire.size());
  std::memcpy(dst, wire.data(), wire.size());
  reader.CommitWrite(wire.size());
  std::vector<std::string> out;
  while (true) {
    auto p = reader.Next();
    EXPECT_TRUE(p.ok()) << p.status();
    if (!p.ok() || !p->has_value()) break;
    out.emplace_back((*p)->payload);
  }
  return out;
}

// The event inside a stream packet (after the 0x00 status byte).
std::string_view EventOf(const std::string& payload) {
  EXPECT_FALSE(payload.empty());
  EXPECT_EQ(payload[0], '\0');
  return std::string_view(payload).substr(1);
}

protocol::EventHeader HeaderOf(std::string_view event) {
  auto h = protocol::ParseEventHeader(event);
  EXPECT_TRUE(h.ok()) << h.status();
  return h.ok() ? *h : protocol::EventHeader{};
}

// Where the first GTID event of a recorded binlog image starts.
size_t FirstGtidEventOffset(const std::string& image) {
  auto reader = protocol::BinlogFileReader::Open(image, "image");
  EXPECT_TRUE(reader.ok()) << reader.status();
  protocol::EventView ev;
  while (reader.ok()) {
    auto more = reader->Next(&ev);
    if (!more.ok() || !*more) break;
    if (ev.type() == protocol::kGtidEvent) return ev.offset;
  }
  ADD_FAILURE() << "no GTID event";
  return image.size();
}

class BinlogSenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestTempDir("binlog_sender");
    BR_ASSERT_OK_AND_ASSIGN(store_, replication::BinlogStore::Open(dir_));
    store_->SetCommitListener([this] { signal_.Notify(); });
    context_ = {store_.get(), &signal_, &registry_, 99};
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }
  void StoreMysql(bool both = true) {
    mysql1_ = ReadFileOrDie(FixturePath(testing::kMysqlBinlog1));
    mysql2_ = ReadFileOrDie(FixturePath(testing::kMysqlBinlog2));
    BR_ASSERT_OK(testing::FeedAsDump(mysql1_, "binlog.000001", 4, *store_));
    if (both) {
      BR_ASSERT_OK(testing::FeedAsDump(mysql2_, "binlog.000002", 4, *store_));
    }
    BR_ASSERT_OK(store_->Flush());
  }
  static DumpRequest Request(std::string file, uint64_t pos, bool non_blocking = true) {
    DumpRequest r;
    r.file = std::move(file);
    r.position = pos;
    r.server_id = non_blocking ? 0 : 5;
    r.settings.checksum = "NONE";  // as mysqlbinlog
    return r;
  }
  // COM_BINLOG_DUMP_GTID (non-blocking) from a replica that executed
  // `executed` (MySQL GTID set text).
  static DumpRequest MysqlGtidRequest(const std::string& executed) {
    DumpRequest r = Request("", 4);
    r.kind = DumpRequest::Kind::kMySqlGtid;
    absl::StatusOr<replication::MysqlGtidSet> set = replication::MysqlGtidSet::Parse(executed);
    EXPECT_TRUE(set.ok()) << set.status();
    if (set.ok()) r.encoded_gtid_set = set->Encode();
    return r;
  }
  // Runs a dump to its end (non-blocking) or until caught up.
  std::vector<std::string> Drain(BinlogSender& sender, DumpStream::Progress* last = nullptr,
                                 uint8_t first_seq = 1) {
    std::string wire;
    while (true) {
      auto p = sender.Fill(&wire, 4096);
      EXPECT_TRUE(p.ok()) << p.status();
      if (!p.ok() || *p != DumpStream::Progress::kMore) {
        if (last != nullptr && p.ok()) *last = *p;
        break;
      }
    }
    return Payloads(wire, first_seq);
  }

  std::string dir_;
  std::unique_ptr<replication::BinlogStore> store_;
  CommitSignal signal_;
  DumpRegistry registry_;
  BinlogSenderContext context_;
  std::string mysql1_, mysql2_;
};

// Guards: the stream differing from the stored files (any event changed,
// dropped or added), a missing fake ROTATE per file, the FDE's in-use flag,
// and the non-blocking dump not ending with EOF.
TEST_F(BinlogSenderTest, DumpFromFourReplaysEveryStoredFileByteForByteThenEof) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  StoreMysql();
  BR_ASSERT_OK_AND_ASSIGN(auto sender, BinlogSender::Create(context_, Request("", 4)));
  std::vector<std::string> packets = Drain(*sender);
  ASSERT_FALSE(packets.empty());
  EXPECT_EQ(static_cast<uint8_t>(packets.back()[0]), 0xFE) << "EOF expected last";
  std::map<std::string, std::string> rebuilt;
  std::string file;
  for (size_t i = 0; i + 1 < packets.size(); ++i) {
    std::string_view ev = EventOf(packets[i]);
    protocol::EventHeader h = HeaderOf(ev);
    if (h.type == protocol::kRotateEvent && h.artificial()) {
      EXPECT_EQ(h.log_pos, 0u);
      EXPECT_EQ(h.server_id, 99u);
      // The first has no CRC (the client said NONE); later ones follow the
      // CRC32 of the FDE already sent.
      const bool crc = !rebuilt.empty();
      EXPECT_EQ(protocol::EventCrcMatches(ev), crc);
      file = std::string(ev.substr(19 + 8, ev.size() - 19 - 8 - (crc ? 4 : 0)));
      EXPECT_EQ(ev.substr(19, 1), std::string_view("\x04", 1));
      rebuilt[file] = "\xfe" "bin";
      continue;
    }
    rebuilt[file].append(ev);
  }
  ASSERT_EQ(rebuilt.size(), 2u);
  EXPECT_EQ(rebuilt["binlog.000001"], mysql1_);
  EXPECT_EQ(rebuilt["binlog.000002"], mysql2_);
}

// Guards: a mid-file start without the FDE (the replica could not parse the
// events), or with the FDE's log_pos/created/CRC left as stored.
TEST_F(BinlogSenderTest, MidFileStartSendsFdeWithZeroLogPosAndValidCrc) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  StoreMysql();
  // The third event of binlog.000002.
  BR_ASSERT_OK_AND_ASSIGN(auto r, protocol::BinlogFileReader::Open(mysql2_, "binlog.000002"));
  protocol::EventView ev;
  uint64_t third = 0;
  for (int i = 0; i < 3; ++i) {
    BR_ASSERT_OK_AND_ASSIGN(bool more, r.Next(&ev));
    ASSERT_TRUE(more);
    third = ev.offset;
  }
  BR_ASSERT_OK_AND_ASSIGN(auto sender, BinlogSender::Create(context_, Request("binlog.000002", third)));
  std::vector<std::string> packets = Drain(*sender);
  ASSERT_GE(packets.size(), 4u);
  std::string_view rotate = EventOf(packets[0]);
  EXPECT_EQ(HeaderOf(rotate).type, protocol::kRotateEvent);
  EXPECT_EQ(static_cast<uint8_t>(rotate[19]), third & 0xFF);
  std::string_view fde = EventOf(packets[1]);
  protocol::EventHeader fh = HeaderOf(fde);
  EXPECT_EQ(fh.type, protocol::kFormatDescriptionEvent);
  EXPECT_EQ(fh.log_pos, 0u);
  EXPECT_EQ(fde.substr(19 + 52, 4), std::string_view("\0\0\0\0", 4));
  EXPECT_TRUE(protocol::EventCrcMatches(fde));
  EXPECT_EQ(EventOf(packets[2]), std::string_view(mysql2_).substr(third, EventOf(packets[2]).size()));
}

// The MySQL error a refusal sends (its carried client error).
uint16_t ClientCode(const absl::Status& s) { return ClientErrorFor(s, 0).code; }

// Guards: a dump from a file or position binrelay does not hold being
// accepted (the replica would silently get a different stream), a file that
// can never exist being answered with the retryable 1105 (clients loop on
// it forever), and the source's own words missing from the refusal.
TEST_F(BinlogSenderTest, UnknownFileAndImpossiblePositionsAreRefused) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  StoreMysql();
  auto missing = BinlogSender::Create(context_, Request("binlog.000000", 4));
  EXPECT_EQ(ClientCode(missing.status()), 1236);
  EXPECT_TRUE(absl::StrContains(missing.status().message(),
                                "Could not find first log file name in binary log index file"))
      << missing.status();
  EXPECT_NE(std::string(missing.status().message()).find("binlog.000000"), std::string::npos);
  auto other_base = BinlogSender::Create(context_, Request("mysql-bin.000009", 4));
  EXPECT_EQ(ClientCode(other_base.status()), 1236) << other_base.status();
  // Newer than the store: binrelay may be behind, the replica should retry.
  auto ahead = BinlogSender::Create(context_, Request("binlog.000009", 4));
  EXPECT_EQ(ahead.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(ClientCode(ahead.status()), 1105);
  EXPECT_NE(std::string(ahead.status().message()).find("binlog.000009"), std::string::npos);
  auto beyond = BinlogSender::Create(context_, Request("binlog.000001", 1u << 30));
  EXPECT_EQ(ClientCode(beyond.status()), 1236) << beyond.status();
  EXPECT_TRUE(absl::StrContains(beyond.status().message(), "position > file size"))
      << beyond.status();
  // Past the end of the newest file when it is closed (it ends with STOP):
  // nothing more can come, so fatal, not "retry" (seen flaky in CI while the
  // store's next file was not yet committed).
  auto past_closed = BinlogSender::Create(context_, Request("binlog.000002", 1u << 20));
  EXPECT_EQ(ClientCode(past_closed.status()), 1236) << past_closed.status();
  // Inside an event: accepted, then the first read fails naming the spot.
  BR_ASSERT_OK_AND_ASSIGN(auto inside, BinlogSender::Create(context_, Request("binlog.000001", 130)));
  std::string wire;
  auto p = inside->Fill(&wire, 1 << 20);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(std::string(p.status().message()).find("binlog.000001:130"), std::string::npos)
      << p.status();
}

// Guards: binrelay answering "not stored yet, retry" for a file beyond its
// store while it is caught up with its source, which has no such file either
// (the client would retry forever; the source answers 1236).
TEST_F(BinlogSenderTest, FileBeyondTheStoreIsFatalWhileCaughtUpWithTheSource) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  StoreMysql(/*both=*/false);
  struct CaughtUp : SourceView {
    bool MayBeBehind() const override { return false; }
    std::shared_ptr<const VariableList> Variables() const override { return nullptr; }
  } source;
  context_.source = &source;
  auto s = BinlogSender::Create(context_, Request("binlog.000002", 4));
  EXPECT_EQ(ClientCode(s.status()), 1236) << s.status();
  context_.source = nullptr;
  EXPECT_EQ(ClientCode(BinlogSender::Create(context_, Request("binlog.000002", 4)).status()),
            1105);
}

// Guards: serving CRC32 events to a client that never declared it can
// handle checksums. As a real primary, binrelay sends the fake ROTATE, then
// refuses with 1236 at the file's FDE.
TEST_F(BinlogSenderTest, ClientThatDeclaredNoChecksumIsRefusedAtTheFde) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  StoreMysql();
  DumpRequest r = Request("", 4);
  r.settings.checksum.reset();
  BR_ASSERT_OK_AND_ASSIGN(auto sender, BinlogSender::Create(context_, r));
  std::string wire;
  auto p = sender->Fill(&wire, 1 << 20);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(ClientCode(p.status()), 1236);
  EXPECT_TRUE(absl::StrContains(p.status().message(), "checksum")) << p.status();
  sender->AppendError(&wire, p.status());
  std::vector<std::string> packets = Payloads(wire);
  ASSERT_EQ(packets.size(), 2u);
  EXPECT_EQ(HeaderOf(EventOf(packets[0])).type, protocol::kRotateEvent);
  BR_ASSERT_OK_AND_ASSIGN(protocol::ServerError err, protocol::ParseErrPacket(packets[1]));
  EXPECT_EQ(err.code, 1236);
  EXPECT_TRUE(absl::StrContains(err.message, "; the first event '' at 4, the last event read from "
                                             "'binlog.000001' at 4"))
      << err.message;
}

// Guards: a blocking dump that polls or never wakes: it must report caught
// up, arm a wake-up, and be woken by the store's next commit.
TEST_F(BinlogSenderTest, BlockingDumpWakesOnTheNextCommit) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  StoreMysql(/*both=*/false);
  BR_ASSERT_OK_AND_ASSIGN(auto sender, BinlogSender::Create(context_, Request("", 4, false)));
  DumpStream::Progress last;
  size_t first = Drain(*sender, &last).size();
  EXPECT_EQ(last, DumpStream::Progress::kCaughtUp);
  std::atomic<int> woken{0};
  ASSERT_TRUE(sender->ArmWake([&] { ++woken; }));
  BR_ASSERT_OK(testing::FeedAsDump(mysql2_, "binlog.000002", 4, *store_));
  BR_ASSERT_OK(store_->Flush());
  EXPECT_GE(woken.load(), 1);
  std::vector<std::string> more = Drain(*sender, &last, static_cast<uint8_t>(1 + first));
  EXPECT_EQ(last, DumpStream::Progress::kCaughtUp);
  ASSERT_FALSE(more.empty());
  protocol::EventHeader h = HeaderOf(EventOf(more[0]));
  EXPECT_EQ(h.type, protocol::kRotateEvent);
  EXPECT_TRUE(h.artificial());
  // Nothing new: arming succeeds and nothing fires.
  woken = 0;
  EXPECT_TRUE(sender->ArmWake([&] { ++woken; }));
  sender->DisarmWake();
  EXPECT_EQ(woken.load(), 0);
  // The registry shows the dump at the end of the store.
  auto dumps = registry_.Snapshot();
  ASSERT_EQ(dumps.size(), 1u);
  EXPECT_EQ(dumps[0].position, store_->committed().position);
}

// Guards: heartbeats that a replica cannot parse (wrong position or name).
TEST_F(BinlogSenderTest, HeartbeatCarriesTheNextPositionWithCrcWhenDeclared) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  StoreMysql(false);
  DumpRequest r = Request("", 4, false);
  r.settings.checksum = "CRC32";
  r.settings.heartbeat_period = std::chrono::seconds(1);
  BR_ASSERT_OK_AND_ASSIGN(auto sender, BinlogSender::Create(context_, r));
  EXPECT_EQ(sender->heartbeat_period(), std::chrono::seconds(1));
  Drain(*sender);
  std::string wire;
  sender->AppendHeartbeat(&wire);
  // Sequence ids continue the stream; parse the single packet directly.
  ASSERT_GT(wire.size(), 5u);
  std::string_view ev = std::string_view(wire).substr(5);
  protocol::EventHeader h = HeaderOf(ev);
  EXPECT_EQ(h.type, protocol::kHeartbeatEvent);
  EXPECT_EQ(h.log_pos, mysql1_.size());
  EXPECT_TRUE(protocol::EventCrcMatches(ev));
  EXPECT_EQ(ev.substr(19, ev.size() - 19 - 4), "binlog.000001");
}

// Guards: a MariaDB GTID dump resending transactions the replica already
// has, or not moving its position with a fake GTID_LIST.
TEST_F(BinlogSenderTest, MariaDbGtidDumpSkipsToTheRequestedGtidAndSendsFakeGtidList) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMariaBinlog);
  std::string maria = ReadFileOrDie(FixturePath(testing::kMariaBinlog));
  BR_ASSERT_OK(testing::FeedAsDump(maria, "mariadb-bin.000001", 4, *store_));
  BR_ASSERT_OK(store_->Flush());
  ASSERT_EQ(store_->committed().gtid_state().PositionText(), "0-1-2");
  DumpRequest r = Request("", 4);
  r.settings.checksum = "CRC32";
  r.settings.mariadb_capability = 4;
  r.settings.slave_connect_state = "0-1-1";
  BR_ASSERT_OK_AND_ASSIGN(auto sender, BinlogSender::Create(context_, r));
  std::vector<std::string> packets = Drain(*sender);
  std::vector<std::string> gtids;
  int fake_lists = 0;
  for (size_t i = 0; i + 1 < packets.size(); ++i) {
    std::string_view ev = EventOf(packets[i]);
    protocol::EventHeader h = HeaderOf(ev);
    if (h.type == protocol::kMariaGtidEvent) {
      auto v = protocol::MakeEventView(ev, true);
      ASSERT_TRUE(v.ok());
      auto g = protocol::ParseMariaGtid(*v);
      ASSERT_TRUE(g.ok()) << g.status();
      gtids.push_back(g->ToString());
    }
    if (h.type == protocol::kGtidListEvent && h.artificial()) {
      ++fake_lists;
      EXPECT_TRUE(gtids.empty()) << "the fake GTID_LIST precedes the first sent group";
      auto v = protocol::MakeEventView(ev, true);
      auto list = protocol::ParseMariaGtidList(*v);
      ASSERT_TRUE(list.ok()) << list.status();
      EXPECT_EQ(list->ToString(), "0-1-1");
      EXPECT_TRUE(protocol::EventCrcMatches(ev));
    }
  }
  EXPECT_EQ(fake_lists, 1);
  EXPECT_EQ(gtids, std::vector<std::string>{"0-1-2"});
}

// Guards: a replica ahead of binrelay's store (or on another domain) being
// streamed from the wrong place instead of refused.
// Guards: a dump choosing a file the store has started but not yet made
// durable. A GTID dump looked the new file up in the index while its FDE was
// still in the write buffer, and failed fatally ("stored binlog ... ends at 0
// inside an event starting at 4"; seen after a kill -9 restart in CI).
TEST_F(BinlogSenderTest, FileStartedButNotYetCommittedIsInvisibleToDumps) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  store_.reset();
  fs::remove_all(dir_);
  replication::BinlogStoreOptions lazy;
  lazy.sync = replication::SyncPolicy::kInterval;
  lazy.sync_interval = std::chrono::hours(1);  // nothing published unless flushed
  BR_ASSERT_OK_AND_ASSIGN(store_, replication::BinlogStore::Open(dir_, lazy));
  store_->SetCommitListener([this] { signal_.Notify(); });
  context_.store = store_.get();
  StoreMysql(/*both=*/false);
  // The next file's FDE and PREVIOUS_GTIDS arrive but are not yet durable.
  const std::string head = mysql2_.substr(0, FirstGtidEventOffset(mysql2_));
  BR_ASSERT_OK(testing::FeedAsDump(head, "binlog.000002", 4, *store_));
  ASSERT_EQ(store_->Files().size(), 2u);
  ASSERT_EQ(store_->CommittedFiles().size(), 1u);

  // By file and position: not stored yet, so the replica retries.
  EXPECT_EQ(BinlogSender::Create(context_, Request("binlog.000002", 4)).status().code(),
            absl::StatusCode::kUnavailable);
  // By GTID: binlog.000002's first state (1-4) is passed, but only the
  // committed binlog.000001 may be chosen.
  BR_ASSERT_OK_AND_ASSIGN(
      auto sender, BinlogSender::Create(context_, MysqlGtidRequest(absl::StrCat(
                                                      testing::kMysqlBinlogUuid, ":1-5"))));
  EXPECT_EQ(sender->position().file, "binlog.000001");
  Drain(*sender);  // reads to the committed end without touching the new file's bytes

  // Once flushed, the new file is served.
  BR_ASSERT_OK(store_->Flush());
  BR_EXPECT_OK(BinlogSender::Create(context_, Request("binlog.000002", 4)).status());
}

// Guards: a replica whose file binrelay purged being told only that the file
// is "not in the store", instead of that it was purged and what decides it.
TEST_F(BinlogSenderTest, DumpFromAPurgedFileSaysItWasPurged) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  StoreMysql();
  replication::PurgeOptions purge;
  purge.before_file = "binlog.000002";
  BR_ASSERT_OK(store_->Purge(purge).status());
  absl::Status s = BinlogSender::Create(context_, Request("binlog.000001", 4)).status();
  EXPECT_EQ(ClientCode(s), 1236) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "'binlog.000001' was purged")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "holds binlog.000002 to binlog.000002")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "retention_bytes")) << s;
}

// Guards file:pos dumps after a failover (a store era, replication/
// store_era.h): a plain name two sources gave a file, or one the earlier
// source may have used before its files were purged, served from the
// wrong source's file (the replica would skip or repeat transactions);
// the era's name leaking onto the wire (a replica or mysqlbinlog --raw
// would take "era-1/..." for the file's name).
TEST_F(BinlogSenderTest, PlainNameOfTwoSourcesIsRefusedAndTheWireKeepsTheSourcesNames) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  StoreMysql();
  BR_ASSERT_OK(store_->BeginEra("binlog.000002", 0).status());
  BR_ASSERT_OK(testing::FeedAsDump(mysql2_, "binlog.000002", 4, *store_));
  BR_ASSERT_OK(store_->Flush());
  absl::Status both = BinlogSender::Create(context_, Request("binlog.000002", 4)).status();
  EXPECT_EQ(ClientCode(both), 1236) << both;
  EXPECT_TRUE(absl::StrContains(both.message(), "SOURCE_AUTO_POSITION = 1")) << both;
  EXPECT_TRUE(absl::StrContains(both.message(), "era-1/binlog.000002")) << both;
  // The era-qualified name reads the era's file, named as its source did.
  BR_ASSERT_OK_AND_ASSIGN(auto sender,
                          BinlogSender::Create(context_, Request("era-1/binlog.000002", 4)));
  std::vector<std::string> packets = Drain(*sender);
  ASSERT_GE(packets.size(), 2u);
  std::string_view rotate = EventOf(packets[0]);
  EXPECT_EQ(HeaderOf(rotate).type, protocol::kRotateEvent);
  EXPECT_EQ(rotate.substr(19 + 8), "binlog.000002");  // no CRC: the client said NONE
  for (const std::string& p : packets) EXPECT_FALSE(absl::StrContains(p, "era-1")) << p.size();
  // The old source's files purged: the plain name is still not taken for
  // the era's file.
  replication::PurgeOptions purge;
  purge.before_file = "era-1/binlog.000002";
  BR_ASSERT_OK(store_->Purge(purge).status());
  ASSERT_EQ(store_->Files().size(), 1u);
  absl::Status purged = BinlogSender::Create(context_, Request("binlog.000002", 4)).status();
  EXPECT_EQ(ClientCode(purged), 1236) << purged;
  EXPECT_TRUE(absl::StrContains(purged.message(), "purged")) << purged;
}

// Guards: a disconnected replica's claim starting after the last rotation
// binrelay sent. That rotation may still have been in socket buffers, so the
// replica comes back asking for the finished file's end, which retention may
// meanwhile have purged (a 1236 and a reseed). While connected the claim is
// the dump's own position, so a hard-cap purge of the previous file does not
// end a healthy dump.
TEST_F(BinlogSenderTest, DisconnectedReplicaKeepsTheFileBeforeItsLastRotation) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  StoreMysql();
  BR_ASSERT_OK_AND_ASSIGN(auto sender, BinlogSender::Create(
                                           context_, Request("binlog.000001", 4, /*non_blocking=*/false)));
  Drain(*sender);
  EXPECT_EQ(sender->position().file, "binlog.000002");
  std::vector<replication::PinInfo> pins = store_->Pins();
  ASSERT_EQ(pins.size(), 1u);
  EXPECT_EQ(pins[0].position, (replication::BinlogPosition{"binlog.000002", 4}));
  sender.reset();  // the replica disconnects; its claim lingers
  pins = store_->Pins();
  ASSERT_EQ(pins.size(), 1u);
  EXPECT_EQ(pins[0].position, (replication::BinlogPosition{"binlog.000001", 1516}));
  replication::PurgeOptions everything;
  everything.max_total_bytes = 1;
  BR_ASSERT_OK_AND_ASSIGN(replication::PurgeResult r, store_->Purge(everything));
  EXPECT_TRUE(r.removed.empty());
  EXPECT_EQ(r.kept_for_pin, "binlog.000001");
}

// Guards: a replica ahead of binrelay's store being streamed from the wrong
// place instead of told to retry, and a position naming a domain the binlog
// never had being refused (MariaDB serves it).
TEST_F(BinlogSenderTest, MariaDbGtidAheadOfTheStoreIsRefused) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMariaBinlog);
  std::string maria = ReadFileOrDie(FixturePath(testing::kMariaBinlog));
  BR_ASSERT_OK(testing::FeedAsDump(maria, "mariadb-bin.000001", 4, *store_));
  BR_ASSERT_OK(store_->Flush());
  DumpRequest r = Request("", 4);
  r.settings.mariadb_capability = 4;
  r.settings.slave_connect_state = "0-1-9";  // ahead: retryable
  EXPECT_EQ(BinlogSender::Create(context_, r).status().code(), absl::StatusCode::kUnavailable);
  // A domain the binlog never had is another primary's (multi-source): as on
  // MariaDB the dump starts, and sends every group of the domains it does
  // not name.
  r.settings.slave_connect_state = "7-1-1";
  BR_ASSERT_OK_AND_ASSIGN(auto sender, BinlogSender::Create(context_, r));
  int gtids = 0;
  for (const std::string& p : Drain(*sender)) {
    if (p[0] == '\0' && HeaderOf(EventOf(p)).type == protocol::kMariaGtidEvent) ++gtids;
  }
  EXPECT_EQ(gtids, 2);
}

}  // namespace
}  // namespace binrelay::proxy

namespace binrelay::proxy {
namespace {

// Guards: COM_BINLOG_DUMP_GTID resending transactions the replica executed,
// starting in the wrong file, or not telling the replica (by heartbeat)
// where a skipped run ended.
TEST_F(BinlogSenderTest, MysqlGtidDumpSkipsExecutedTransactionsAndReportsPosition) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  StoreMysql();
  const std::string uuid = testing::kMysqlBinlogUuid;
  BR_ASSERT_OK_AND_ASSIGN(auto sender,
                          BinlogSender::Create(context_, MysqlGtidRequest(uuid + ":1-5")));
  EXPECT_EQ(sender->position().file, "binlog.000002") << "file 1 holds only GTIDs 1-4";
  std::vector<std::string> packets = Drain(*sender);
  std::vector<std::string> gtids;
  bool heartbeat_before_first = false;
  for (size_t i = 0; i + 1 < packets.size(); ++i) {
    std::string_view ev = EventOf(packets[i]);
    protocol::EventHeader h = HeaderOf(ev);
    if (h.type == protocol::kHeartbeatEvent && gtids.empty()) heartbeat_before_first = true;
    if (h.type == protocol::kGtidEvent) {
      BR_ASSERT_OK_AND_ASSIGN(auto v, protocol::MakeEventView(ev, true));
      BR_ASSERT_OK_AND_ASSIGN(auto g, protocol::ParseMysqlGtid(v));
      gtids.push_back(g.ToString());
    }
  }
  EXPECT_EQ(gtids, std::vector<std::string>{uuid + ":6"});
  EXPECT_TRUE(heartbeat_before_first);
}

}  // namespace
}  // namespace binrelay::proxy
