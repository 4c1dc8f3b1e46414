// Store eras (replication/store_era.h): the files of a source followed after
// a failover are kept apart under era-N/, order after every earlier file,
// and the store's GTID state never goes back while the new source's first
// file repeats transactions already stored.
#include "replication/store_era.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "protocol/binlog_file_reader.h"
#include "protocol/event_header.h"
#include "protocol/event_type.h"
#include "replication/binlog_store.h"
#include "replication/followed_source.h"
#include "replication/store_index.h"
#include "replication/store_reader.h"
#include "protocol/gtid_events.h"
#include "tests/harness/binlog_fixtures.h"
#include "tests/harness/fixtures.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/store_feed.h"
#include "tests/harness/temp_dir.h"

namespace binrelay::replication {
namespace {

namespace fs = std::filesystem;
using testing::FixturePath;
using testing::ReadFileOrDie;

SourceGtids Mysql(std::string_view text) {
  return SourceGtids::Parse(GtidFlavour::kMysql, text).value();
}

std::vector<std::string> Names(const std::vector<StoreFileEntry>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(f.name);
  return out;
}

// Guards against an era prefix that is not unambiguous: a name that only
// looks like an era ("era-01", "era-x", "era-0") must stay a plain name, or
// two spellings would name one directory.
TEST(StoreEraNameTest, OnlyCanonicalEraPrefixesSplit) {
  EXPECT_EQ(SplitStoredName("era-2/b.000007").era, 2u);
  EXPECT_EQ(SplitStoredName("era-2/b.000007").source_name, "b.000007");
  EXPECT_EQ(SplitStoredName("b.000007").era, 0u);
  for (std::string_view plain : {"era-01/b.1", "era-x/b.1", "era-0/b.1", "era-/b.1"}) {
    EXPECT_EQ(SplitStoredName(plain).era, 0u) << plain;
    EXPECT_EQ(SplitStoredName(plain).source_name, plain) << plain;
  }
  EXPECT_EQ(StoredNameOf(0, "b.1"), "b.1");
  EXPECT_EQ(StoredNameOf(12, "b.1"), "era-12/b.1");
  EXPECT_TRUE(IsStoredNameOf("era-12/b.1", 12, "b.1"));
  EXPECT_FALSE(IsStoredNameOf("era-12/b.1", 2, "b.1"));
  EXPECT_FALSE(IsStoredNameOf("era-12/b.1", 0, "b.1"));
  EXPECT_FALSE(IsStoredNameOf("era-12xb.1", 12, "b.1"));
  EXPECT_TRUE(IsStoredNameOf("b.1", 0, "b.1"));
}

// Guards against a later source's files sorting among an earlier one's
// (every server starts at binlog.000001): era first, then the source's
// order, era 10 after era 9.
TEST(StoreEraNameTest, EveryFileOfALaterEraComesAfterEveryEarlierFile) {
  EXPECT_LT(CompareBinlogNames("binlog.999999", "era-1/binlog.000001"), 0);
  EXPECT_LT(CompareBinlogNames("era-1/binlog.000009", "era-1/binlog.000010"), 0);
  EXPECT_LT(CompareBinlogNames("era-9/binlog.000009", "era-10/binlog.000001"), 0);
  EXPECT_EQ(CompareBinlogNames("era-3/b.000002", "era-3/b.000002"), 0);
  EXPECT_TRUE(PositionBefore({"binlog.000002", 900}, {"era-1/binlog.000002", 4}));
}

// Guards against an entry file that reads back differently, or a damaged
// one taken as an empty state (readers would then repeat every stored
// transaction of the era's first file).
TEST(StoreEraNameTest, EntryRoundTripsAndADamagedOneIsDataLoss) {
  const std::string dir = testing::MakeTestTempDir("store_era_entry");
  fs::create_directories(dir + "/era-1");
  const EraEntry entry{Mysql(absl::StrCat(testing::kMysqlBinlogUuid, ":1-6")),
                       "binlog.000002",
                       7,
                       "binlog.000001",
                       "db2.example:3306",
                       1796488000,
                       "db1.example:3306",
                       3};
  BR_ASSERT_OK(WriteEraEntry(dir, 1, entry, /*durable=*/false));
  BR_ASSERT_OK_AND_ASSIGN(EraEntry back, ReadEraEntry(dir, 1));
  EXPECT_EQ(back, entry);
  // Written before the source's address was kept: read, without it.
  std::ofstream(dir + "/era-1/.entry-gtids", std::ios::trunc)
      << "mysql\t" << testing::kMysqlBinlogUuid << ":1-6\nbinlog.000002\t7\tbinlog.000001\n";
  BR_ASSERT_OK_AND_ASSIGN(EraEntry old, ReadEraEntry(dir, 1));
  EXPECT_EQ(old.first_file, "binlog.000002");
  EXPECT_EQ(old.source_address, "");
  EXPECT_EQ(old.switched_at, 0);
  EXPECT_TRUE(absl::IsNotFound(ReadEraEntry(dir, 2).status()));
  std::ofstream(dir + "/era-1/.entry-gtids", std::ios::trunc) << "mysql\t";
  EXPECT_TRUE(absl::IsDataLoss(ReadEraEntry(dir, 1).status()));
  EXPECT_FALSE(WriteEraEntry(dir, 1, EraEntry{entry.stored, "../x"}, false).ok());
  EraEntry tab = entry;
  tab.source_address = "a\tb:1";
  EXPECT_FALSE(WriteEraEntry(dir, 1, tab, false).ok());
}

class StoreEraTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestTempDir("store_era");
    if (testing::FixtureExists(testing::kMysqlBinlog1)) {
      mysql1_ = ReadFileOrDie(FixturePath(testing::kMysqlBinlog1));
    }
    if (testing::FixtureExists(testing::kMysqlBinlog2)) {
      mysql2_ = ReadFileOrDie(FixturePath(testing::kMysqlBinlog2));
    }
  }

  std::string Stored(const std::string& name) { return ReadFileOrDie(dir_ + "/" + name); }

  // The old source's two files, stored whole: GTIDs uuid:1-6.
  std::unique_ptr<BinlogStore> StoreOldSource() {
    auto store = BinlogStore::Open(dir_);
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return nullptr;
    EXPECT_TRUE(testing::FeedBinlogFile(mysql1_, "binlog.000001", 4, **store).ok());
    EXPECT_TRUE(testing::FeedBinlogFile(mysql2_, "binlog.000002", 4, **store).ok());
    return *std::move(store);
  }

  std::string All() const { return absl::StrCat(testing::kMysqlBinlogUuid, ":1-6"); }

  std::string dir_;
  std::string mysql1_, mysql2_;
};

// Guards the switch's core promise at the store: the new source's file,
// named like a stored one, is kept byte for byte beside it (not appended,
// not overwriting), every stored byte of the old source stays, the stored
// GTID state does not go back while the new file repeats stored
// transactions, and all of it survives a restart.
TEST_F(StoreEraTest, NewSourcesFileWithAStoredNameIsKeptInItsEraAfterTheOldOnes) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  auto store = StoreOldSource();
  ASSERT_NE(store, nullptr);
  // The new source's binlog.000002 opens at uuid:1-4, which the store passed.
  BR_ASSERT_OK_AND_ASSIGN(uint32_t era, store->BeginEra("binlog.000002", 0));
  EXPECT_EQ(era, 1u);
  EXPECT_EQ(store->resume_position(), (BinlogPosition{"binlog.000002", 4}));
  // First up to its PREVIOUS_GTIDS (uuid:1-4): the state stays uuid:1-6.
  uint64_t previous_end = 0;
  {
    auto reader = protocol::BinlogFileReader::Open(mysql2_, "binlog.000002");
    ASSERT_TRUE(reader.ok());
    protocol::EventView ev;
    while (previous_end == 0 && reader->Next(&ev).value_or(false)) {
      if (ev.type() == protocol::kPreviousGtidsEvent) previous_end = ev.offset + ev.header.event_size;
    }
  }
  ASSERT_GT(previous_end, 4u);
  BR_ASSERT_OK(
      testing::FeedBinlogFile(mysql2_.substr(0, previous_end), "binlog.000002", 4, *store));
  BR_ASSERT_OK(store->Flush());
  EXPECT_EQ(store->committed().position, (BinlogPosition{"era-1/binlog.000002", previous_end}));
  EXPECT_EQ(store->committed().gtid_state().PositionText(), All());
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_, "binlog.000002", previous_end, *store));
  BR_ASSERT_OK(store->Flush());
  EXPECT_EQ(Names(store->Files()),
            (std::vector<std::string>{"binlog.000001", "binlog.000002", "era-1/binlog.000002"}));
  EXPECT_EQ(Stored("binlog.000001"), mysql1_);
  EXPECT_EQ(Stored("binlog.000002"), mysql2_);
  EXPECT_EQ(Stored("era-1/binlog.000002"), mysql2_);
  const CommittedEnd c = store->committed();
  EXPECT_EQ(c.position, (BinlogPosition{"era-1/binlog.000002", 847}));
  // The file's PREVIOUS_GTIDS (1-4) and its repeats of 5 and 6 leave 1-6.
  EXPECT_EQ(c.gtid_state().PositionText(), All());
  // The source is asked for its own name.
  EXPECT_EQ(store->resume_position(), (BinlogPosition{"binlog.000002", 847}));
  BR_ASSERT_OK(store->Close());
  store.reset();

  BR_ASSERT_OK_AND_ASSIGN(auto reopened, BinlogStore::Open(dir_));
  EXPECT_EQ(reopened->era(), 1u);
  EXPECT_EQ(Names(reopened->Files()),
            (std::vector<std::string>{"binlog.000001", "binlog.000002", "era-1/binlog.000002"}));
  EXPECT_EQ(reopened->committed().gtid_state().PositionText(), All());
  EXPECT_EQ(reopened->resume_position(), (BinlogPosition{"binlog.000002", 847}));
  BR_ASSERT_OK_AND_ASSIGN(EraEntry entry, ReadEraEntry(dir_, 1));
  EXPECT_EQ(entry.stored.PositionText(), All());
  EXPECT_EQ(entry.first_file, "binlog.000002");
  // The era file opens, as its readers see it (repeats skipped), at
  // uuid:1-6, not at the uuid:1-4 its PREVIOUS_GTIDS says: a GTID dump
  // from uuid:1-5 must start in the old source's file, where 6 is not
  // hidden. Also when the index is rebuilt from the files.
  EXPECT_EQ(reopened->Files()[2].first_gtids.PositionText(), All());
  BR_ASSERT_OK_AND_ASSIGN(
      std::string start,
      reopened->FileForGtid(Mysql(absl::StrCat(testing::kMysqlBinlogUuid, ":1-5"))));
  EXPECT_EQ(start, "binlog.000002");
  BR_ASSERT_OK(reopened->Close());
  reopened.reset();
  fs::remove(dir_ + "/binrelay-store.index");
  BR_ASSERT_OK_AND_ASSIGN(auto rebuilt, BinlogStore::Open(dir_));
  EXPECT_EQ(rebuilt->Files()[2].first_gtids.PositionText(), All());
}

// Guards against a partial transaction of the lost source staying in the
// store (a reader would serve half a transaction), and against the old
// file being left open for appends.
TEST_F(StoreEraTest, BeginEraDropsTheLostSourcesPartialTransaction) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  // Where binlog.000002's last transaction starts (its GTID event) and
  // where that event ends: the stream is cut just after it.
  uint64_t txn_start = 0, cut = 0;
  {
    auto reader = protocol::BinlogFileReader::Open(mysql2_, "binlog.000002");
    ASSERT_TRUE(reader.ok());
    protocol::EventView ev;
    while (reader->Next(&ev).value_or(false)) {
      if (ev.type() == protocol::kGtidEvent) {
        txn_start = ev.offset;
        cut = ev.offset + ev.header.event_size;
      }
    }
  }
  ASSERT_GT(cut, txn_start);
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql1_, "binlog.000001", 4, *store));
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_.substr(0, cut), "binlog.000002", 4, *store));
  BR_ASSERT_OK_AND_ASSIGN(uint32_t era, store->BeginEra("binlog.000002", 0));
  EXPECT_EQ(era, 1u);
  std::string kept = Stored("binlog.000002");
  ASSERT_EQ(kept.size(), txn_start);
  // Abandoned as a crashed source leaves a file: BINLOG_IN_USE still set.
  EXPECT_EQ(kept[21] & 1, 1);
  kept[21] = static_cast<char>(kept[21] & ~1);
  EXPECT_EQ(kept, mysql2_.substr(0, txn_start));
  EXPECT_TRUE(store->IsClosed("binlog.000002"));
  EXPECT_EQ(store->committed().gtid_state().PositionText(),
            absl::StrCat(testing::kMysqlBinlogUuid, ":1-5"));
}

// Guards against an era lost to a restart between BeginEra and its first
// file (the next start would resume the old source's file on the new
// source), and against a stream that does not begin where the era says.
TEST_F(StoreEraTest, BegunEraSurvivesARestartAndRefusesAnotherFirstFile) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  auto store = StoreOldSource();
  ASSERT_NE(store, nullptr);
  BR_ASSERT_OK(store->BeginEra("binlog.000002", 0, "standby:3306").status());
  BR_ASSERT_OK(store->Close());
  store.reset();
  BR_ASSERT_OK_AND_ASSIGN(auto reopened, BinlogStore::Open(dir_));
  EXPECT_EQ(reopened->era(), 1u);
  // The server to follow after the restart, not [source] host.
  BR_ASSERT_OK_AND_ASSIGN(EraEntry current, reopened->CurrentEraEntry());
  EXPECT_EQ(current.source_address, "standby:3306");
  EXPECT_GT(current.switched_at, 0);
  EXPECT_EQ(reopened->resume_position(), (BinlogPosition{"binlog.000002", 4}));
  absl::Status wrong = testing::FeedBinlogFile(mysql1_, "binlog.000001", 4, *reopened);
  EXPECT_TRUE(absl::IsFailedPrecondition(wrong)) << wrong;
  EXPECT_FALSE(fs::exists(dir_ + "/era-1/binlog.000001"));
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_, "binlog.000002", 4, *reopened));
  BR_ASSERT_OK(reopened->Flush());
  EXPECT_EQ(Stored("era-1/binlog.000002"), mysql2_);
}

// Guards against a switch begun for one server continued with another's
// file of the same name (binrelay restarted with [source] host at the old
// primary before the era's first file was stored): refused, retried, and
// nothing is created until the chosen server's file comes.
TEST_F(StoreEraTest, EraFirstFileFromAnotherServerThanTheSwitchChoseIsRefused) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  auto header = protocol::ParseEventHeader(std::string_view(mysql2_).substr(4, 19));
  ASSERT_TRUE(header.ok());
  auto store = StoreOldSource();
  ASSERT_NE(store, nullptr);
  BR_ASSERT_OK(store->BeginEra("binlog.000002", header->server_id + 1).status());
  absl::Status other = testing::FeedBinlogFile(mysql2_, "binlog.000002", 4, *store);
  EXPECT_TRUE(absl::IsUnavailable(other)) << other;
  EXPECT_TRUE(absl::StrContains(other.message(), "server_id")) << other;
  EXPECT_FALSE(fs::exists(dir_ + "/era-1/binlog.000002"));
  // Switched again, to the server whose file it is.
  BR_ASSERT_OK(store->BeginEra("binlog.000002", header->server_id).status());
  EXPECT_EQ(store->era(), 1u);
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_, "binlog.000002", 4, *store));
  BR_ASSERT_OK(store->Flush());
  EXPECT_EQ(Stored("era-1/binlog.000002"), mysql2_);
}

// Guards against an era begun on a store that cannot tell which of the new
// source's transactions it holds.
TEST_F(StoreEraTest, EmptyStoreCannotBeginAnEra) {
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
  EXPECT_TRUE(absl::IsFailedPrecondition(store->BeginEra("binlog.000001", 0).status()));
  EXPECT_FALSE(store->BeginEra("../evil", 0).ok());
}

// Guards the readers' side of a switch: reading the store from its first
// byte across the era boundary yields every transaction exactly once. The
// old source's binlog.000002 was lost after GTID 5 (6 never stored); the new
// source's binlog.000002 repeats 5 (skipped) and brings 6.
TEST_F(StoreEraTest, ReaderAcrossTheSwitchSeesEachTransactionOnce) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  uint64_t cut = 0;
  {
    auto reader = protocol::BinlogFileReader::Open(mysql2_, "binlog.000002");
    ASSERT_TRUE(reader.ok());
    protocol::EventView ev;
    while (reader->Next(&ev).value_or(false)) {
      if (ev.type() == protocol::kGtidEvent) cut = ev.offset + ev.header.event_size;
    }
  }
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql1_, "binlog.000001", 4, *store));
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_.substr(0, cut), "binlog.000002", 4, *store));
  BR_ASSERT_OK(store->BeginEra("binlog.000002", 0).status());
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_, "binlog.000002", 4, *store));
  BR_ASSERT_OK(store->Flush());
  EXPECT_EQ(store->committed().gtid_state().PositionText(), All());

  BR_ASSERT_OK_AND_ASSIGN(auto reader, StoreReader::Open(store.get(), {"binlog.000001", 4}));
  std::vector<int64_t> gnos;
  std::vector<std::string> files;
  protocol::EventView ev;
  for (int i = 0; i < 10000; ++i) {
    BR_ASSERT_OK_AND_ASSIGN(StoreReader::Step step, reader->Next(&ev));
    if (step == StoreReader::Step::kCaughtUp) break;
    if (step == StoreReader::Step::kNextFile) {
      files.push_back(reader->position().file);
      continue;
    }
    if (ev.type() == protocol::kGtidEvent) {
      BR_ASSERT_OK_AND_ASSIGN(protocol::MysqlGtid g, protocol::ParseMysqlGtid(ev));
      gnos.push_back(g.gno);
    }
  }
  EXPECT_EQ(files, (std::vector<std::string>{"binlog.000002", "era-1/binlog.000002"}));
  EXPECT_EQ(gnos, (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(reader->repeats_skipped(), 1u);
  EXPECT_EQ(reader->position(), (BinlogPosition{"era-1/binlog.000002", mysql2_.size()}));
}

// Guards a restart going back to the server binrelay switched away from
// ([source] host still names it; it may be back, writable, with
// transactions nobody else has), and the switch count starting at 0 again.
TEST_F(StoreEraTest, RestartFollowsTheEraSourceNotTheConfiguredHost) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  UpstreamOptions era0;
  era0.connect.host = "primary";
  era0.connect.port = 3306;
  {
    auto store = StoreOldSource();
    ASSERT_NE(store, nullptr);
    BR_ASSERT_OK(FollowStoredSource(*store, &era0));
    EXPECT_EQ(era0.connect.host, "primary") << "era 0 follows [source] host";
    EXPECT_TRUE(era0.left.empty());
    BR_ASSERT_OK(store->BeginEra("binlog.000002", 0, "standby:3307", "primary:3306").status());
    BR_ASSERT_OK(store->Close());
  }
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
  UpstreamOptions u;
  u.connect.host = "primary";
  u.connect.port = 3306;
  u.connect.user = "relay";
  protocol::ConnectOptions standby = u.connect;
  standby.host = "standby";
  standby.port = 3307;
  standby.user = "standby-user";  // a candidate's own settings are taken
  u.candidates = {u.connect, standby};
  BR_ASSERT_OK(FollowStoredSource(*store, &u));
  EXPECT_EQ(u.connect.host, "standby");
  EXPECT_EQ(u.connect.port, 3307);
  EXPECT_EQ(u.connect.user, "standby-user");
  EXPECT_EQ(u.left, (std::vector<std::string>{"primary:3306"}));
  // And by the server_id the old source's stored files carry: the same
  // server under another name is still left.
  ASSERT_EQ(u.left_server_ids.size(), 1u);
  EXPECT_NE(u.left_server_ids[0], 0u);
  EXPECT_TRUE(u.source_from_store);
  EXPECT_EQ(u.switches_before, 1u);
  EXPECT_NE(u.last_switch_before, absl::InfinitePast());
  // Not among the candidates (re-pointed by hand): [source]'s settings,
  // that host and port.
  UpstreamOptions by_hand;
  by_hand.connect.host = "primary";
  by_hand.connect.port = 3306;
  by_hand.connect.user = "relay";
  BR_ASSERT_OK(FollowStoredSource(*store, &by_hand));
  EXPECT_EQ(by_hand.connect.host, "standby");
  EXPECT_EQ(by_hand.connect.port, 3307);
  EXPECT_EQ(by_hand.connect.user, "relay");
  // [source] host edited to the followed server: the server left is still
  // the one the era recorded, not guessed from the configuration.
  UpstreamOptions edited;
  edited.connect.host = "standby";
  edited.connect.port = 3307;
  BR_ASSERT_OK(FollowStoredSource(*store, &edited));
  EXPECT_EQ(edited.connect.host, "standby");
  EXPECT_FALSE(edited.source_from_store);
  EXPECT_EQ(edited.left, (std::vector<std::string>{"primary:3306"}));
}

// Guards a new address of the followed server (CHANGE MASTER TO by
// position after a switch) lost on a restart: the era's entry must name
// it, before and after the era's first file, keeping the rest of the
// entry; in era 0 there is nothing to record ([source] host is).
TEST_F(StoreEraTest, NewAddressOfTheFollowedServerIsRecordedInTheEra) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  auto store = StoreOldSource();
  ASSERT_NE(store, nullptr);
  BR_ASSERT_OK(store->RecordSourceAddress("elsewhere:1"));
  EXPECT_FALSE(fs::exists(dir_ + "/era-1"));
  BR_ASSERT_OK(store->BeginEra("binlog.000002", 0, "standby:3307", "primary:3306").status());
  BR_ASSERT_OK(store->RecordSourceAddress("standby-vip:3306"));  // pending era
  BR_ASSERT_OK_AND_ASSIGN(EraEntry pending, store->CurrentEraEntry());
  EXPECT_EQ(pending.source_address, "standby-vip:3306");
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_, "binlog.000002", 4, *store));
  BR_ASSERT_OK(store->Flush());
  BR_ASSERT_OK(store->RecordSourceAddress("standby-new:3308"));  // its file stored
  BR_ASSERT_OK(store->Close());
  store.reset();
  BR_ASSERT_OK_AND_ASSIGN(EraEntry entry, ReadEraEntry(dir_, 1));
  EXPECT_EQ(entry.source_address, "standby-new:3308");
  EXPECT_EQ(entry.left_address, "primary:3306");
  EXPECT_EQ(entry.first_file, "binlog.000002");
  EXPECT_EQ(entry.switched_at, pending.switched_at);
}

// Guards the address spellings CandidateAddress writes into an era entry.
TEST(FollowedSourceTest, ParsesHostPortAndBracketedIpv6) {
  std::string host;
  uint16_t port = 0;
  BR_ASSERT_OK(ParseSourceAddress("db2.example:3306", &host, &port));
  EXPECT_EQ(host, "db2.example");
  EXPECT_EQ(port, 3306);
  BR_ASSERT_OK(ParseSourceAddress("[::1]:3307", &host, &port));
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 3307);
  for (const char* bad : {"db2", "db2:", ":3306", "db2:0", "db2:70000", "[::1]3306", "db2:x"}) {
    EXPECT_FALSE(ParseSourceAddress(bad, &host, &port).ok()) << bad;
  }
}

}  // namespace
}  // namespace binrelay::replication
