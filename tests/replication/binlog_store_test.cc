// BinlogStore: stored files equal the source's byte for byte, artificial
// events are skipped, positions are checked, crash recovery cuts exactly
// after the last complete transaction, disk-full errors damage nothing,
// the index maps files to their first GTID state, and purge honours pins.
#include "replication/binlog_store.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "protocol/artificial_events.h"
#include "protocol/binlog_file_reader.h"
#include "protocol/event_header.h"
#include "protocol/event_type.h"
#include "protocol/format_description.h"
#include "replication/store_index.h"
#include "replication/transaction_boundary.h"
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

SourceGtids Maria(std::string_view text) {
  return SourceGtids::Parse(GtidFlavour::kMariaDb, text).value();
}
SourceGtids Mysql(std::string_view text) {
  return SourceGtids::Parse(GtidFlavour::kMysql, text).value();
}



void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

class BinlogStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestTempDir("binlog_store");
    // Tests that use these start with BINRELAY_REQUIRE_FIXTURE.
    if (testing::FixtureExists(testing::kMysqlBinlog1)) {
      mysql1_ = ReadFileOrDie(FixturePath(testing::kMysqlBinlog1));
    }
    if (testing::FixtureExists(testing::kMysqlBinlog2)) {
      mysql2_ = ReadFileOrDie(FixturePath(testing::kMysqlBinlog2));
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Stored(const std::string& name) { return ReadFileOrDie(dir_ + "/" + name); }

  std::string dir_;
  std::string mysql1_, mysql2_;
};

// Guards: any byte of a stored file differing from the source's (flags,
// CRCs, offsets), including BINLOG_IN_USE cleared on ROTATE and STOP.
TEST_F(BinlogStoreTest, ClosedMysqlFilesAreStoredByteForByte) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql1_, "binlog.000001", 4, *store));
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_, "binlog.000002", 4, *store));
  BR_ASSERT_OK(store->Close());
  EXPECT_EQ(Stored("binlog.000001"), mysql1_);
  EXPECT_EQ(Stored("binlog.000002"), mysql2_);
  CommittedEnd c = store->committed();
  EXPECT_EQ(c.position, (BinlogPosition{"binlog.000002", 847}));
  // PREVIOUS_GTIDS of file 2 is uuid:1-4; file 2 adds GTIDs 5 and 6.
  EXPECT_EQ(c.gtid_state().PositionText(), absl::StrCat(testing::kMysqlBinlogUuid, ":1-6"));
}

// Guards: the open file losing the BINLOG_IN_USE flag the source's open file
// has (it must stay a prefix of the source's file), MariaDB GTID state.
TEST_F(BinlogStoreTest, OpenMariaDbFileKeepsInUseFlagAndGtidState) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMariaBinlog);
  std::string maria = ReadFileOrDie(FixturePath(testing::kMariaBinlog));
  ASSERT_EQ(maria[21] & 1, 1);  // the fixture is the source's open file
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
  BR_ASSERT_OK(testing::FeedBinlogFile(maria, "mariadb-bin.000001", 4, *store));
  BR_ASSERT_OK(store->Flush());
  EXPECT_EQ(Stored("mariadb-bin.000001"), maria);
  EXPECT_EQ(store->committed().position, (BinlogPosition{"mariadb-bin.000001", 1074}));
  EXPECT_EQ(store->committed().gtid_state().PositionText(), "0-1-2");
}

// Guards: a dump stream's FDE re-sent with log_pos 0 (and a fake ROTATE)
// being written into the file.
TEST_F(BinlogStoreTest, ArtificialEventsAreNotStored) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog2);
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_, "binlog.000002", 4, *store));
  BR_ASSERT_OK(store->Close());
  // Fake ROTATE: timestamp 0, log_pos 0, ARTIFICIAL, no CRC, to binlog.000002:4.
  std::string rotate("\0\0\0\0\x04\x01\0\0\0\x28\0\0\0\0\0\0\0\x20\0", 19);
  rotate += std::string("\x04\0\0\0\0\0\0\0", 8) + "binlog.000002";
  rotate[9] = static_cast<char>(rotate.size());
  BR_ASSERT_OK_AND_ASSIGN(protocol::EventView ev, protocol::MakeEventView(rotate, false));
  BR_ASSERT_OK_AND_ASSIGN(auto reopened, BinlogStore::Open(dir_));
  protocol::FormatDescription fde = protocol::Mysql8FormatDescription();
  BinlogPosition artificial{"binlog.000002", 0};
  BR_ASSERT_OK(reopened->OnEvent({ev, fde, artificial, false}));
  BR_ASSERT_OK(reopened->Close());
  EXPECT_EQ(Stored("binlog.000002"), mysql2_);
}

// Guards: a skipped event leaving a gap in the file instead of a loud error.
TEST_F(BinlogStoreTest, EventNotAtTheFileEndIsDataLossNamingFileAndPos) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog2);
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
  // Everything from 276 on, but nothing of 4..276 except the artificial FDE:
  // the store holds nothing of binlog.000002, so the file cannot start.
  absl::Status s = testing::FeedBinlogFile(mysql2_, "binlog.000002", 276, *store);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  // After the header, a jump from 197 to 276 (one event skipped).
  BR_ASSERT_OK_AND_ASSIGN(protocol::BinlogFileReader r,
                          protocol::BinlogFileReader::Open(mysql2_, "src"));
  protocol::EventView ev;
  protocol::FormatDescription fde;
  for (int i = 0; i < 4; ++i) {
    BR_ASSERT_OK_AND_ASSIGN(bool more, r.Next(&ev));
    ASSERT_TRUE(more);
    fde = r.framer().format();
    if (ev.offset == 197) continue;  // the GTID event, skipped
    BinlogPosition end{"binlog.000002", ev.offset + ev.header.event_size};
    s = store->OnEvent({ev, fde, end, false});
    if (ev.offset < 197) {
      BR_ASSERT_OK(s);
    }
  }
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(s.message().find("binlog.000002:197"), std::string::npos) << s;
}

// Guards: a name from the wire escaping the store directory.
TEST_F(BinlogStoreTest, FileNameThatIsAPathIsRefused) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog2);
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
  absl::Status s = testing::FeedBinlogFile(mysql2_, "../evil.000001", 4, *store);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_FALSE(fs::exists(dir_ + "/../evil.000001"));
}

// Guards: an empty store starting mid-file or from a GTID (it could never
// hold the source's bytes at the source's offsets), and a non-empty store
// not resuming where it ends.
TEST_F(BinlogStoreTest, StartForEmptyAndNonEmptyStore) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1);
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
  EXPECT_FALSE(store->resume_position().has_value());
  BR_ASSERT_OK_AND_ASSIGN(StartSpec gtid, ParseStartSpec("gtid:0-1-5"));
  EXPECT_TRUE(absl::IsFailedPrecondition(store->StartFor(gtid).status()));
  BR_ASSERT_OK_AND_ASSIGN(StartSpec mid, ParseStartSpec("binlog.000001:120"));
  EXPECT_TRUE(absl::IsFailedPrecondition(store->StartFor(mid).status()));
  BR_ASSERT_OK_AND_ASSIGN(StartSpec at4, ParseStartSpec("binlog.000001:4"));
  BR_ASSERT_OK_AND_ASSIGN(StartSpec got, store->StartFor(at4));
  EXPECT_EQ(got.position, (BinlogPosition{"binlog.000001", 4}));
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql1_, "binlog.000001", 4, *store));
  BR_ASSERT_OK_AND_ASSIGN(got, store->StartFor(gtid));
  EXPECT_EQ(got.kind, StartSpec::Kind::kPosition);
  EXPECT_EQ(got.position, (BinlogPosition{"binlog.000001", 1516}));
}

// Guards: the index missing a file or its first GTID state, a non-atomic
// or stale index surviving a reopen.
TEST_F(BinlogStoreTest, IndexListsFilesWithFirstGtidStateAndIsRebuilt) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  {
    BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
    BR_ASSERT_OK(testing::FeedBinlogFile(mysql1_, "binlog.000001", 4, *store));
    BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_, "binlog.000002", 4, *store));
  }
  auto expect_index = [&] {
    BR_ASSERT_OK_AND_ASSIGN(std::vector<StoreFileEntry> idx, ReadStoreIndex(dir_));
    ASSERT_EQ(idx.size(), 2u);
    EXPECT_EQ(idx[0].name, "binlog.000001");
    EXPECT_TRUE(idx[0].first_gtids.is_mysql());  // PREVIOUS_GTIDS with 0 sids
    EXPECT_TRUE(idx[0].first_gtids.empty());
    EXPECT_EQ(idx[1].name, "binlog.000002");
    EXPECT_TRUE(idx[1].first_gtids.is_mysql());
    EXPECT_EQ(idx[1].first_gtids.StateText(), absl::StrCat(testing::kMysqlBinlogUuid, ":1-4"));
  };
  expect_index();
  EXPECT_EQ(Stored(std::string(kStoreIndexName)),
            absl::StrCat("binlog.000001\tmysql\t\nbinlog.000002\tmysql\t",
                         testing::kMysqlBinlogUuid, ":1-4\n"));
  fs::remove(dir_ + "/" + std::string(kStoreIndexName));
  { BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_)); }
  expect_index();
  WriteFile(dir_ + "/" + std::string(kStoreIndexName), "garbage without a tab\n");
  { BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_)); }
  expect_index();
  // The older two-field form (no flavour) is rebuilt from the files too.
  WriteFile(dir_ + "/" + std::string(kStoreIndexName),
            absl::StrCat("binlog.000001\t\nbinlog.000002\t", testing::kMysqlBinlogUuid, ":1-4\n"));
  { BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_)); }
  expect_index();
}

// Guards: a GTID position mapped to a file that starts after it (the dump
// would miss transactions) or to an older file than needed.
TEST_F(BinlogStoreTest, GtidPositionMapsToFileThroughTheIndex) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql1_, "binlog.000001", 4, *store));
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_, "binlog.000002", 4, *store));
  // binlog.000002 opens with uuid:1-4 (PREVIOUS_GTIDS), binlog.000001 with "".
  EXPECT_EQ(store->FileForGtid(Mysql(absl::StrCat(testing::kMysqlBinlogUuid, ":1-4"))).value_or("?"), "binlog.000002");
  EXPECT_EQ(store->FileForGtid(Mysql(absl::StrCat(testing::kMysqlBinlogUuid, ":1-6"))).value_or("?"), "binlog.000002");
  EXPECT_EQ(store->FileForGtid(Mysql(absl::StrCat(testing::kMysqlBinlogUuid, ":1-3"))).value_or("?"), "binlog.000001");
  EXPECT_EQ(store->FileForGtid(Mysql(absl::StrCat(testing::kMysqlBinlogUuid, ":2-4"))).value_or("?"), "binlog.000001");
}

// Guards: MariaDB GTID_LIST states with several servers per domain, domains
// the position lacks, and purged history.
TEST(FileForGtidPositionTest, MariaDbTable) {
  std::vector<StoreFileEntry> files = {{"b.000001", Maria(""), 0},
                                       {"b.000002", Maria("0-1-10"), 0},
                                       {"b.000003", Maria("0-1-20,0-2-25,1-1-3"), 0},
                                       // Its FDE is stored, its GTID_LIST not yet.
                                       {"b.000004", SourceGtids(), 0}};
  struct Case {
    const char* gtid;
    const char* file;
  } cases[] = {{"0-1-5", "b.000001"},       {"0-1-10", "b.000002"},
               {"0-2-24", "b.000002"},      {"0-2-25", "b.000002"},  // domain 1 missing
               {"0-2-25,1-1-3", "b.000003"}, {"0-1-30,1-1-2", "b.000002"},
               {"0-2-99,1-1-99", "b.000003"}};  // not b.000004: its state is not known
  for (const Case& c : cases) {
    EXPECT_EQ(FileForGtidPosition(files, Maria(c.gtid)).value_or("?"), c.file) << c.gtid;
  }
  files.erase(files.begin(), files.begin() + 2);  // purged
  EXPECT_TRUE(absl::IsNotFound(FileForGtidPosition(files, Maria("0-1-5")).status()));
  // A position of the other flavour names no file: the stream is not its own.
  EXPECT_TRUE(absl::IsInvalidArgument(
      FileForGtidPosition(files, Mysql("396e294c-1ca4-11f1-9ae7-00155da79c6b:1-4")).status()));
}

// Guards: a foreign file in the store directory being taken for a binlog.
TEST_F(BinlogStoreTest, ForeignFileInDirectoryIsRefused) {
  WriteFile(dir_ + "/notes.txt", "hello");
  auto store = BinlogStore::Open(dir_);
  EXPECT_TRUE(absl::IsFailedPrecondition(store.status())) << store.status();
}

// binlog.000002's transaction ends: FDE 126, PREVIOUS_GTIDS 197, XID 529,
// XID 824, STOP 847 (from the event walk in INDEX terms: type/offset/size).
uint64_t ExpectedResume(uint64_t cut) {
  uint64_t best = 0;
  for (uint64_t b : {126, 197, 529, 824, 847}) {
    if (b <= cut) best = b;
  }
  return best;
}

// Guards: recovery keeping a torn event or half transaction, cutting a
// complete one, or resuming anywhere but right after the last complete
// transaction; re-feeding from there must rebuild the file exactly.
TEST_F(BinlogStoreTest, RecoveryAfterTruncationAtEveryOffsetResumesExactly) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  BinlogStoreOptions fast;
  fast.sync = SyncPolicy::kOff;  // recovery does not depend on it; keeps 1700 opens quick
  for (int garbage = 0; garbage < 2; ++garbage) {
    // Garbage after fewer than 4 bytes is not a store file at all (we write
    // the magic first), so that case starts at 4.
    for (uint64_t cut = garbage ? 4 : 0; cut <= mysql2_.size(); ++cut) {
      SCOPED_TRACE(absl::StrCat("cut at ", cut, garbage ? " + garbage" : ""));
      fs::remove_all(dir_);
      fs::create_directory(dir_);
      WriteFile(dir_ + "/binlog.000001", mysql1_);
      std::string torn = mysql2_.substr(0, cut);
      if (garbage) torn += std::string(37, '\xAB');
      WriteFile(dir_ + "/binlog.000002", torn);
      BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_, fast));
      std::optional<BinlogPosition> resume = store->resume_position();
      ASSERT_TRUE(resume.has_value());
      uint64_t want = ExpectedResume(cut);
      if (want == 0) {
        EXPECT_EQ(*resume, (BinlogPosition{"binlog.000001", 1516}));
        EXPECT_FALSE(fs::exists(dir_ + "/binlog.000002"));
        BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_, "binlog.000002", 4, *store));
      } else {
        ASSERT_EQ(*resume, (BinlogPosition{"binlog.000002", want}));
        EXPECT_EQ(store->committed().position, *resume);
        BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_, "binlog.000002", want, *store));
      }
      BR_ASSERT_OK(store->Close());
      ASSERT_EQ(Stored("binlog.000001"), mysql1_);
      ASSERT_EQ(Stored("binlog.000002"), mysql2_);
    }
  }
}

// Guards: a crash between writing the closing ROTATE and clearing
// BINLOG_IN_USE leaving the closed file different from the source's.
TEST_F(BinlogStoreTest, RecoveryClearsInUseFlagOfAClosedFile) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  std::string flagged = mysql1_;
  flagged[21] |= 1;
  WriteFile(dir_ + "/binlog.000001", flagged);
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
  EXPECT_EQ(Stored("binlog.000001"), mysql1_);
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_, "binlog.000002", 4, *store));
  BR_ASSERT_OK(store->Close());
  EXPECT_EQ(Stored("binlog.000002"), mysql2_);
}

// Guards: a full disk damaging stored data (a partial write left behind) or
// the store not continuing once space returns.
TEST_F(BinlogStoreTest, DiskFullIsResourceExhaustedAndAppendingResumesAfterwards) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  for (int64_t budget : {100, 600}) {
    SCOPED_TRACE(absl::StrCat("write budget after file 1: ", budget));
    fs::remove_all(dir_);
    auto left = std::make_shared<std::atomic<int64_t>>(1 << 30);
    BinlogStoreOptions options;
    options.pwrite_fn = [left](int fd, const void* data, size_t n, off_t off) -> ssize_t {
      int64_t allowed = std::min<int64_t>(static_cast<int64_t>(n), left->load());
      if (allowed <= 0) {
        errno = ENOSPC;
        return -1;
      }
      ssize_t w = ::pwrite(fd, data, static_cast<size_t>(allowed), off);
      if (w > 0) left->fetch_sub(w);
      return w;
    };
    BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_, options));
    BR_ASSERT_OK(testing::FeedBinlogFile(mysql1_, "binlog.000001", 4, *store));
    left->store(budget);
    absl::Status s = testing::FeedBinlogFile(mysql2_, "binlog.000002", 4, *store);
    ASSERT_TRUE(absl::IsResourceExhausted(s)) << s;
    EXPECT_NE(s.message().find(dir_ + "/binlog.000002"), std::string::npos) << s;
    // Nothing stored is damaged: file 1 whole, file 2 a transaction prefix.
    EXPECT_EQ(Stored("binlog.000001"), mysql1_);
    std::optional<BinlogPosition> resume = store->resume_position();
    ASSERT_TRUE(resume.has_value());
    if (budget == 100) {
      EXPECT_EQ(*resume, (BinlogPosition{"binlog.000001", 1516}));
    } else {
      EXPECT_EQ(*resume, (BinlogPosition{"binlog.000002", 529}));
      // The open file keeps BINLOG_IN_USE set, as the source's open file does.
      std::string prefix = mysql2_.substr(0, 529);
      prefix[21] = static_cast<char>(prefix[21] | 1);
      EXPECT_EQ(Stored("binlog.000002"), prefix);
    }
    // Still failing until the stream restarts.
    EXPECT_TRUE(absl::IsResourceExhausted(store->Flush()));
    left->store(1 << 30);  // space returns
    store->OnStreamRestart(*resume);
    if (resume->file == "binlog.000001") {
      BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_, "binlog.000002", 4, *store));
    } else {
      BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_, "binlog.000002", resume->offset, *store));
    }
    BR_ASSERT_OK(store->Close());
    EXPECT_EQ(Stored("binlog.000002"), mysql2_);
  }
}

// Guards: a stream restart keeping the half transaction it interrupted.
TEST_F(BinlogStoreTest, StreamRestartDropsTheInterruptedTransaction) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog2);
  BinlogStoreOptions options;
  options.buffer_bytes = 64;  // forces the half transaction onto disk
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_, options));
  // binlog.000002 up to the middle of its second transaction (608..683).
  std::string partial = mysql2_.substr(0, 731);
  BR_ASSERT_OK(testing::FeedBinlogFile(partial, "binlog.000002", 4, *store));  // ends after the TABLE_MAP
  store->OnStreamRestart({"binlog.000002", 529});
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_, "binlog.000002", 529, *store));
  BR_ASSERT_OK(store->Close());
  EXPECT_EQ(Stored("binlog.000002"), mysql2_);
}

// Guards: a resumed dump splicing another binlog onto the stored one: the
// source's address now reaches another server (a failover behind a moved
// address) or the source ran RESET MASTER, and its file of the same name
// has an event boundary at the resume offset. The FDE the dump re-sends
// must be the stored file's.
TEST_F(BinlogStoreTest, ResumedFileWhoseFdeIsNotTheStoredOneIsRefused) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog2);
  // The stored FDE read back from the file (every transaction synced) and
  // from the write buffer (kInterval: nothing written yet).
  for (SyncPolicy sync : {SyncPolicy::kEveryTransaction, SyncPolicy::kInterval}) {
    SCOPED_TRACE(sync == SyncPolicy::kInterval ? "interval" : "every transaction");
    fs::remove_all(dir_);
    BinlogStoreOptions options;
    options.sync = sync;
    options.sync_interval = std::chrono::hours(1);
    BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_, options));
    const std::string partial = mysql2_.substr(0, 529);
    BR_ASSERT_OK(testing::FeedBinlogFile(partial, "binlog.000002", 4, *store));
    store->OnStreamRestart({"binlog.000002", 529});
    // The file's FDE as a server re-sends it when a dump starts inside the
    // file: log_pos 0, created 0, no BINLOG_IN_USE, its CRC recomputed.
    BR_ASSERT_OK_AND_ASSIGN(protocol::EventHeader h,
                            protocol::ParseEventHeader(mysql2_.substr(4)));
    BR_ASSERT_OK_AND_ASSIGN(std::string resent, protocol::RewriteFdeForMidFileStart(
                                                    mysql2_.substr(4, h.event_size), true));
    const protocol::FormatDescription format = protocol::Mysql8FormatDescription();
    const BinlogPosition artificial{"binlog.000002", 0};
    auto offer = [&](const std::string& bytes) {
      auto ev = protocol::MakeEventView(bytes, true);
      EXPECT_TRUE(ev.ok());
      return store->OnEvent({*ev, format, artificial, false});
    };
    std::string other_server = resent;
    other_server[5] = static_cast<char>(other_server[5] ^ 0x7);  // server_id
    absl::Status refused = offer(other_server);
    EXPECT_TRUE(absl::IsUnavailable(refused)) << refused;  // retried, never fatal
    EXPECT_TRUE(absl::StrContains(refused.message(), "is not the stored")) << refused;
    EXPECT_TRUE(absl::StrContains(refused.message(), "server_id")) << refused;
    std::string recreated = resent;
    recreated[0] = static_cast<char>(recreated[0] ^ 0x1);  // timestamp: RESET MASTER
    EXPECT_TRUE(absl::IsUnavailable(offer(recreated)));
    std::string other_version = resent;
    other_version[19 + 2] = static_cast<char>(other_version[19 + 2] ^ 0x1);
    EXPECT_TRUE(absl::IsUnavailable(offer(other_version)));
    EXPECT_FALSE(store->ResumeVerified());
    // The right file resumes where it was cut, byte for byte.
    store->OnStreamRestart({"binlog.000002", 529});
    BR_ASSERT_OK(offer(resent));
    EXPECT_TRUE(store->ResumeVerified());  // compared and matched
    BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_, "binlog.000002", 529, *store));
    BR_ASSERT_OK(store->Close());
    EXPECT_EQ(Stored("binlog.000002"), mysql2_);
  }
}

// Guards the upstream taking a server for the one whose files the store
// holds on a re-sent FDE the store could not compare (its newest file is
// closed by a ROTATE: nothing open to compare with): accepted, since the
// next file's own FDE is checked when it comes, but not verified.
TEST_F(BinlogStoreTest, ResentFdeAfterAClosedFileIsAcceptedUnverified) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1);
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql1_, "binlog.000001", 4, *store));
  BR_ASSERT_OK_AND_ASSIGN(protocol::EventHeader h, protocol::ParseEventHeader(mysql1_.substr(4)));
  BR_ASSERT_OK_AND_ASSIGN(std::string resent, protocol::RewriteFdeForMidFileStart(
                                                  mysql1_.substr(4, h.event_size), true));
  resent[5] = static_cast<char>(resent[5] ^ 0x7);  // another server_id: not compared
  auto ev = protocol::MakeEventView(resent, true);
  ASSERT_TRUE(ev.ok()) << ev.status();
  BR_ASSERT_OK(store->OnEvent(
      {*ev, protocol::Mysql8FormatDescription(), BinlogPosition{"binlog.000001", 0}, false}));
  EXPECT_FALSE(store->ResumeVerified());
}

// Guards: after a clean ROTATE, the next file arriving from another server
// (the source's address moved to another server whose next file has the
// name the ROTATE named) being stored as the continuation, before and after
// a restart of binrelay.
TEST_F(BinlogStoreTest, NextFileWrittenByAnotherServerIsRefused) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  BR_ASSERT_OK_AND_ASSIGN(protocol::EventHeader h, protocol::ParseEventHeader(mysql2_.substr(4)));
  std::string fde = mysql2_.substr(4, h.event_size);
  fde[17] = static_cast<char>(fde[17] & ~protocol::kFlagBinlogInUse);
  std::string foreign = fde;
  foreign[5] = static_cast<char>(foreign[5] ^ 0x7);  // server_id
  const protocol::FormatDescription format = protocol::Mysql8FormatDescription();
  const BinlogPosition end{"binlog.000002", 4 + h.event_size};
  for (bool reopen : {false, true}) {
    SCOPED_TRACE(reopen ? "after a restart" : "live");
    fs::remove_all(dir_);
    BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
    BR_ASSERT_OK(testing::FeedBinlogFile(mysql1_, "binlog.000001", 4, *store));
    if (reopen) {
      BR_ASSERT_OK(store->Close());
      store.reset();
      BR_ASSERT_OK_AND_ASSIGN(store, BinlogStore::Open(dir_));
    }
    BR_ASSERT_OK_AND_ASSIGN(protocol::EventView ev, protocol::MakeEventView(foreign, true, 4));
    absl::Status refused = store->OnEvent({ev, format, end, false});
    EXPECT_TRUE(absl::IsUnavailable(refused)) << refused;
    EXPECT_TRUE(absl::StrContains(refused.message(), "another server")) << refused;
    EXPECT_FALSE(fs::exists(dir_ + "/binlog.000002"));
    store->OnStreamRestart({"binlog.000002", 4});
    BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_, "binlog.000002", 4, *store));
    BR_ASSERT_OK(store->Close());
    EXPECT_EQ(Stored("binlog.000002"), mysql2_);
  }
}

// Guards: purge removing a file a reader still needs, or the newest file.
TEST_F(BinlogStoreTest, PurgeHonoursPinsAndKeepsTheNewestFile) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql1_, "binlog.000001", 4, *store));
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_, "binlog.000002", 4, *store));
  StorePin pin = store->Pin({"binlog.000001", 4});
  BR_ASSERT_OK_AND_ASSIGN(PurgeResult r, store->Purge({.max_total_bytes = 0}));
  EXPECT_TRUE(r.removed.empty());
  EXPECT_EQ(r.kept_for_pin, "binlog.000001");
  EXPECT_TRUE(fs::exists(dir_ + "/binlog.000001"));
  pin.Advance({"binlog.000002", 197});
  BR_ASSERT_OK_AND_ASSIGN(r, store->Purge({.max_total_bytes = 0}));
  EXPECT_EQ(r.removed, std::vector<std::string>{"binlog.000001"});
  EXPECT_FALSE(fs::exists(dir_ + "/binlog.000001"));
  pin.Release();
  BR_ASSERT_OK_AND_ASSIGN(r, store->Purge({.max_total_bytes = 0}));
  EXPECT_TRUE(r.removed.empty());  // the newest file stays
  EXPECT_EQ(Stored("binlog.000002"), mysql2_);
  BR_ASSERT_OK_AND_ASSIGN(std::vector<StoreFileEntry> idx, ReadStoreIndex(dir_));
  ASSERT_EQ(idx.size(), 1u);
  EXPECT_EQ(idx[0].name, "binlog.000002");
}

// Guards: purge by age removing recent files or ignoring old ones.
TEST_F(BinlogStoreTest, PurgeOlderThanUsesFileAge) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMysqlBinlog1, testing::kMysqlBinlog2);
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql1_, "binlog.000001", 4, *store));
  BR_ASSERT_OK(testing::FeedBinlogFile(mysql2_, "binlog.000002", 4, *store));
  BR_ASSERT_OK_AND_ASSIGN(PurgeResult r, store->Purge({.older_than = std::chrono::hours(1)}));
  EXPECT_TRUE(r.removed.empty());
  fs::last_write_time(dir_ + "/binlog.000001",
                      fs::file_time_type::clock::now() - std::chrono::hours(2));
  BR_ASSERT_OK_AND_ASSIGN(r, store->Purge({.older_than = std::chrono::hours(1)}));
  EXPECT_EQ(r.removed, std::vector<std::string>{"binlog.000001"});
}

// Guards: readers never woken, or the interval policy never publishing a
// transaction that arrives before a quiet period.
// Marks every event as "more is already buffered", as a session does in
// the middle of a burst.
class BurstConsumer : public StreamConsumer {
 public:
  explicit BurstConsumer(StreamConsumer* next) : next_(next) {}
  absl::Status OnEvent(const StreamEvent& e) override {
    return next_->OnEvent({e.event, e.format, e.end, e.ends_transaction, true});
  }
  void OnStreamRestart(const BinlogPosition& resume) override { next_->OnStreamRestart(resume); }

 private:
  StreamConsumer* next_;
};

// Guards: group commit (sync=transaction deferring the fdatasync while a
// burst is still arriving) leaving the burst's transactions unpublished
// forever when the stream then goes quiet: the flusher must sync and
// publish them within sync_interval.
TEST_F(BinlogStoreTest, GroupCommitPublishesABurstThatEndsWithoutACue) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMariaBinlog);
  BinlogStoreOptions o;
  o.sync = SyncPolicy::kEveryTransaction;
  o.sync_interval = std::chrono::milliseconds(20);
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_, o));
  BurstConsumer burst(store.get());
  // The source's open file: no ROTATE/STOP at its end to force a sync.
  std::string maria = ReadFileOrDie(FixturePath(testing::kMariaBinlog));
  BR_ASSERT_OK(testing::FeedBinlogFile(maria, "mariadb-bin.000001", 4, burst));
  CommittedEnd end = store->committed();
  for (int i = 0; i < 50 && end.position.offset != 1074; ++i) {
    store->WaitForCommitted(end.sequence, absl::Milliseconds(100), &end);
  }
  EXPECT_EQ(end.position, (BinlogPosition{"mariadb-bin.000001", 1074}));
  EXPECT_EQ(end.gtid_state().PositionText(), "0-1-2");
}

// Guards: sync=off leaving each transaction unpublished until the flusher's
// interval (replicas of binrelay saw every event ~10 ms late): with nothing
// to make durable, a transaction is written and published at once.
TEST_F(BinlogStoreTest, OffPolicyPublishesEachTransactionWithoutWaiting) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMariaBinlog);
  BinlogStoreOptions o;
  o.sync = SyncPolicy::kOff;
  o.sync_interval = std::chrono::hours(1);  // the flusher never runs in this test
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_, o));
  std::string maria = ReadFileOrDie(FixturePath(testing::kMariaBinlog));
  BR_ASSERT_OK(testing::FeedBinlogFile(maria, "mariadb-bin.000001", 4, *store));
  EXPECT_EQ(store->committed().position, (BinlogPosition{"mariadb-bin.000001", 1074}));
  EXPECT_EQ(store->committed().gtid_state().PositionText(), "0-1-2");
  EXPECT_EQ(Stored("mariadb-bin.000001"), maria);  // written, since published
}

TEST_F(BinlogStoreTest, IntervalPolicyPublishesAndWakesWaiters) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMariaBinlog);
  BinlogStoreOptions options;
  options.sync = SyncPolicy::kInterval;
  options.sync_interval = std::chrono::milliseconds(20);
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_, options));
  uint64_t seq = store->committed().sequence;
  std::string maria = ReadFileOrDie(FixturePath(testing::kMariaBinlog));
  std::thread writer([&] { BR_EXPECT_OK(testing::FeedBinlogFile(maria, "mariadb-bin.000001", 4, *store)); });
  CommittedEnd c;
  bool reached = false;
  for (int i = 0; i < 100 && !reached; ++i) {
    ASSERT_TRUE(store->WaitForCommitted(seq, absl::Seconds(5), &c));
    seq = c.sequence;
    reached = c.position == BinlogPosition{"mariadb-bin.000001", 1074};
  }
  writer.join();
  EXPECT_TRUE(reached);
  EXPECT_EQ(c.gtid_state().PositionText(), "0-1-2");
  EXPECT_EQ(Stored("mariadb-bin.000001"), maria);  // written, since published
}

// Guards a move's cutover under an interval sync: the source's tables stay
// locked until its last changes are applied, so what the store holds
// unpublished must reach readers at once when asked (SyncPromptlyFor), not
// at the interval's end (an hour here), and so must what arrives next.
TEST_F(BinlogStoreTest, SyncPromptlyPublishesWithoutWaitingForTheInterval) {
  BINRELAY_REQUIRE_FIXTURE(testing::kMariaBinlog);
  BinlogStoreOptions options;
  options.sync = SyncPolicy::kInterval;
  options.sync_interval = std::chrono::hours(1);
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_, options));
  std::string maria = ReadFileOrDie(FixturePath(testing::kMariaBinlog));
  BR_ASSERT_OK(testing::FeedBinlogFile(maria, "mariadb-bin.000001", 4, *store));
  CommittedEnd c = store->committed();
  EXPECT_FALSE(store->WaitForCommitted(c.sequence, absl::Milliseconds(200), &c));
  EXPECT_NE(c.position, (BinlogPosition{"mariadb-bin.000001", 1074})) << "published early";
  store->SyncPromptlyFor(absl::Seconds(30));
  for (int i = 0; i < 50 && c.position != BinlogPosition{"mariadb-bin.000001", 1074}; ++i) {
    store->WaitForCommitted(c.sequence, absl::Milliseconds(100), &c);
  }
  EXPECT_EQ(c.position, (BinlogPosition{"mariadb-bin.000001", 1074}));
  EXPECT_EQ(c.gtid_state().PositionText(), "0-1-2");
  EXPECT_EQ(Stored("mariadb-bin.000001"), maria);  // synced, since published
}

}  // namespace
}  // namespace binrelay::replication
