// BinlogStore fed by a live UpstreamSession from a real MariaDB source: every
// closed stored file is byte-identical (cmp) to the source's file in its
// datadir, the open one a prefix; after a simulated crash (torn tail) the
// store recovers, resumes, and the files are still identical.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"
#include "replication/binlog_store.h"
#include "replication/store_index.h"
#include "replication/upstream_session.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

namespace fs = std::filesystem;
using replication::BinlogStore;
using replication::StartSpec;

constexpr char kUser[] = "storer";
constexpr char kPassword[] = "store-pw";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BR_ASSERT_OK_AND_ASSIGN(sb_, ServerSandbox::Start());
    BR_ASSERT_OK(sb_->CreateUser(kUser, kPassword, "REPLICATION SLAVE, BINLOG MONITOR, SELECT"));
    std::string tmpl = ::testing::TempDir() + "/store_itest_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Inserts, updates, deletes, DDL, a multi-statement transaction, a
  // non-transactional (MyISAM) statement, a rolled-back transaction.
  void Workload(int round) {
    std::string t = absl::StrCat("w.t", round);
    BR_ASSERT_OK(sb_->Execute("CREATE DATABASE IF NOT EXISTS w"));
    BR_ASSERT_OK(sb_->Execute(absl::StrCat("CREATE TABLE ", t,
                                           " (id INT PRIMARY KEY, v VARCHAR(64), b BLOB)")));
    for (int i = 0; i < 20; ++i) {
      BR_ASSERT_OK(sb_->Execute(absl::StrCat("INSERT INTO ", t, " VALUES (", i, ", 'v", i,
                                             "', REPEAT('x', ", i * 100, "))")));
    }
    BR_ASSERT_OK(sb_->Execute(absl::StrCat("UPDATE ", t, " SET v = CONCAT(v, '!') WHERE id < 10")));
    BR_ASSERT_OK(sb_->Execute(absl::StrCat("DELETE FROM ", t, " WHERE id % 3 = 0")));
    // One connection (the sandbox's root handle), so these form one transaction.
    BR_ASSERT_OK(sb_->Execute("START TRANSACTION"));
    BR_ASSERT_OK(sb_->Execute(absl::StrCat("INSERT INTO ", t, " VALUES (100, 'a', NULL)")));
    BR_ASSERT_OK(sb_->Execute(absl::StrCat("UPDATE ", t, " SET v = 'b' WHERE id = 100")));
    BR_ASSERT_OK(sb_->Execute(
        absl::StrCat("INSERT INTO ", t, " VALUES (101, 'c', REPEAT('y', 60000))")));
    BR_ASSERT_OK(sb_->Execute("COMMIT"));
    BR_ASSERT_OK(sb_->Execute("START TRANSACTION"));
    BR_ASSERT_OK(sb_->Execute(absl::StrCat("DELETE FROM ", t, " WHERE id = 1")));
    BR_ASSERT_OK(sb_->Execute("ROLLBACK"));  // logs nothing
    BR_ASSERT_OK(sb_->Execute(absl::StrCat("CREATE TABLE IF NOT EXISTS w.m", round,
                                           " (id INT) ENGINE=MyISAM")));
    BR_ASSERT_OK(sb_->Execute(absl::StrCat("INSERT INTO w.m", round, " VALUES (1), (2)")));
    BR_ASSERT_OK(sb_->Execute(absl::StrCat("ALTER TABLE ", t, " ADD COLUMN extra INT DEFAULT 7")));
  }

  // A session copying the source into `store` from where the store needs it
  // (earliest when empty) up to the source's current end.
  absl::StatusOr<replication::UpstreamOptions> UntilEndOptions(const BinlogStore& store,
                                                               uint32_t server_id) {
    replication::UpstreamOptions o;
    o.connect = sb_->ClientOptions(kUser, kPassword);
    o.server_id = server_id;
    StartSpec earliest;
    earliest.kind = StartSpec::Kind::kEarliest;
    BR_ASSIGN_OR_RETURN(o.start, store.StartFor(earliest));
    o.until_end = true;
    o.whole_files = true;
    return o;
  }

  // Streams the source into the store up to its current end.
  void SyncStore() {
    BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
    BR_ASSERT_OK_AND_ASSIGN(replication::UpstreamOptions o, UntilEndOptions(*store, 4242));
    replication::UpstreamSession session(o, store.get());
    BR_ASSERT_OK(session.Run());
    BR_ASSERT_OK(store->Close());
  }

  std::vector<std::string> SourceFiles() {
    auto rows = sb_->Query("SHOW BINARY LOGS");
    EXPECT_TRUE(rows.ok()) << rows.status();
    std::vector<std::string> names;
    if (rows.ok()) {
      for (const auto& r : *rows) names.push_back(r[0].value_or(""));
    }
    return names;
  }

  // Every closed file identical, the newest (open) one a prefix.
  void ExpectIdenticalToSource() {
    std::vector<std::string> names = SourceFiles();
    ASSERT_GE(names.size(), 2u);
    for (size_t i = 0; i < names.size(); ++i) {
      SCOPED_TRACE(names[i]);
      std::string src = ReadAll(sb_->DataDir() + "/" + names[i]);
      std::string got = ReadAll(dir_ + "/" + names[i]);
      ASSERT_GT(src.size(), 21u);
      // What the source does with BINLOG_IN_USE (FDE flags, file offset 21):
      // set in its open file, cleared in place when it closes one.
      EXPECT_EQ(src[21] & 1, i + 1 < names.size() ? 0 : 1);
      if (i + 1 < names.size()) {
        EXPECT_TRUE(got == src) << "stored " << got.size() << " bytes, source " << src.size();
      } else {
        ASSERT_LE(got.size(), src.size());
        EXPECT_TRUE(src.compare(0, got.size(), got) == 0) << "open file is not a prefix";
        EXPECT_EQ(got.size(), src.size());  // until_end reached the end
      }
    }
  }

  std::unique_ptr<ServerSandbox> sb_;
  std::string dir_;
};

// Guards: stored bytes differing from the source's (artificial events
// stored, BINLOG_IN_USE wrong, events lost at rotations), and recovery after
// a crash duplicating, losing or mangling transactions.
TEST_F(StoreTest, FilesMatchTheSourceAcrossRotationsAndACrash) {
  Workload(1);
  BR_ASSERT_OK(sb_->Execute("FLUSH BINARY LOGS"));
  Workload(2);
  BR_ASSERT_OK(sb_->Execute("FLUSH BINARY LOGS"));
  Workload(3);
  SyncStore();
  ExpectIdenticalToSource();

  // A crash mid-append: the open file ends in a torn half transaction.
  std::vector<std::string> names = SourceFiles();
  std::string open_path = dir_ + "/" + names.back();
  uint64_t size = fs::file_size(open_path);
  fs::resize_file(open_path, size - 150);
  {
    std::ofstream garbage(open_path, std::ios::binary | std::ios::app);
    garbage << std::string(50, '\x5A');
  }
  Workload(4);
  BR_ASSERT_OK(sb_->Execute("FLUSH BINARY LOGS"));
  Workload(5);
  SyncStore();  // reopens (recovery) and resumes from the stored position
  ExpectIdenticalToSource();
}

// Guards: the live path (blocking dump, heartbeats, rotations while
// following) storing something other than the source's bytes, and a session
// stopped mid-stream leaving a store that cannot resume, at several torn
// tails (inside a large transaction, right at a boundary, in a file header).
TEST_F(StoreTest, LiveFollowingThenStopAndResumeFromSeveralTornTails) {
  Workload(1);
  {
    BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_));
    replication::UpstreamOptions o;
    o.connect = sb_->ClientOptions(kUser, kPassword);
    o.server_id = 4243;
    o.start.kind = StartSpec::Kind::kCurrent;
    BR_ASSERT_OK_AND_ASSIGN(o.start, store->StartFor(o.start));
    o.whole_files = true;  // the current file from its first byte
    o.heartbeat_period = std::chrono::milliseconds(200);
    replication::UpstreamSession session(o, store.get());
    absl::Status run;
    std::thread t([&] { run = session.Run(); });
    // start=current resolves when the session connects: let it store the
    // current file's header before the workload rotates to the next file.
    replication::CommittedEnd first = store->committed();
    for (int i = 0; i < 300 && first.position.file.empty(); ++i) {
      store->WaitForCommitted(first.sequence, absl::Milliseconds(100), &first);
    }
    if (first.position.file != "mysql-bin.000001") {
      session.RequestStop();  // never leave the thread running past a failure
      t.join();
      FAIL() << "the session stored no header of mysql-bin.000001 (got '"
             << first.position.file << "'): " << run;
    }
    Workload(2);
    BR_ASSERT_OK(sb_->Execute("FLUSH BINARY LOGS"));
    Workload(3);
    // Wait until the store has caught up with the source, then stop.
    auto status = sb_->Query("SHOW MASTER STATUS");
    BR_EXPECT_OK(status);
    replication::BinlogPosition want{"?", 0};
    if (status.ok() && !status->empty() && (*status)[0].size() >= 2) {
      want = {(*status)[0][0].value_or("?"), std::stoull((*status)[0][1].value_or("0"))};
    }
    auto reached = [&](const replication::BinlogPosition& p) {
      int cmp = replication::CompareBinlogNames(p.file, want.file);
      return cmp > 0 || (cmp == 0 && p.offset >= want.offset);
    };
    replication::CommittedEnd c = store->committed();
    for (int i = 0; i < 300 && !reached(c.position); ++i) {
      store->WaitForCommitted(c.sequence, absl::Milliseconds(100), &c);
    }
    session.RequestStop();
    t.join();
    BR_EXPECT_OK(run);
    EXPECT_TRUE(reached(c.position)) << c.position.ToString() << " vs " << want.ToString();
    EXPECT_FALSE(c.gtid_state().empty());
    BR_ASSERT_OK(store->Close());
  }
  ExpectIdenticalToSource();
  std::vector<std::string> names = SourceFiles();
  const std::string open_path = dir_ + "/" + names.back();
  const std::string full = ReadAll(open_path);
  // The FDE's end, a cut 1 byte into the last event, and 40 KiB back
  // (inside the 60000-byte row of the multi-statement transaction).
  for (uint64_t cut : {uint64_t{30}, uint64_t{full.size() - 1}, uint64_t{full.size() - 40000}}) {
    SCOPED_TRACE(absl::StrCat("cut at ", cut));
    {
      std::ofstream out(open_path, std::ios::binary | std::ios::trunc);
      out.write(full.data(), static_cast<std::streamsize>(cut));
    }
    SyncStore();
    ExpectIdenticalToSource();
  }
}

// Guards: a full disk during a live session ending binrelay, or the
// retry resuming from the session's position instead of what the store
// kept (the store drops transactions it had not written yet): after three
// ENOSPC writes the session must retry and every file must still equal the
// source's.
TEST_F(StoreTest, DiskFullDuringALiveSessionIsRetriedAndLosesNothing) {
  Workload(1);
  BR_ASSERT_OK(sb_->Execute("FLUSH BINARY LOGS"));
  Workload(2);
  std::atomic<int> writes{0};
  replication::BinlogStoreOptions so;
  // Small writes: with group commit a whole burst could otherwise reach the
  // disk in one or two pwrites, before the failing ones.
  so.buffer_bytes = 512;
  so.pwrite_fn = [&writes](int fd, const void* data, size_t n, off_t offset) -> ssize_t {
    int k = ++writes;
    if (k >= 6 && k <= 8) {
      errno = ENOSPC;
      return -1;
    }
    return ::pwrite(fd, data, n, offset);
  };
  BR_ASSERT_OK_AND_ASSIGN(auto store, BinlogStore::Open(dir_, so));
  BR_ASSERT_OK_AND_ASSIGN(replication::UpstreamOptions o, UntilEndOptions(*store, 4243));
  o.reconnect_timeout = std::chrono::seconds(60);
  replication::UpstreamSession session(o, store.get());
  BR_ASSERT_OK(session.Run());
  BR_ASSERT_OK(store->Close());
  EXPECT_GE(writes.load(), 9) << "the failing writes were never reached";
  EXPECT_GE(session.stats().reconnects.load(), 1u) << "the disk-full error was not retried";
  ExpectIdenticalToSource();
}

}  // namespace
}  // namespace binrelay::testing
