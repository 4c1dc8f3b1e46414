// binrelay serve, part 1: real MariaDB 10.11 replicas and mariadb-binlog
// served by `binrelay serve` from its store.
//  (a) file/position and GTID replicas end with the source's checksums;
//  (b) mariadb-binlog --raw downloads files byte-identical to the source's;
//  (c) a new replica starts at the very first event after the source
//      purged it.
// Kill -9 recovery and hostile listener input: serve_resilience_test.cc.
// BINRELAY_ITEST_DIRECT=1 points the replicas at the source instead
// (serve_fixture.h): a harness check, not a binrelay test.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/replica_fixture.h"
#include "tests/harness/serve_fixture.h"
#include "protocol/status_macros.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/workload.h"

namespace binrelay::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;
using Mode = ReplicaOptions::Mode;

// PURGE BINARY LOGS TO `file`, repeated until the source really removed the
// older files: MariaDB silently keeps a file whose binlog checkpoint InnoDB
// has not reached yet (up to a second with innodb_flush_log_at_trx_commit=2).
absl::Status PurgeSourceTo(ServerSandbox& source, const std::string& file) {
  const auto deadline = std::chrono::steady_clock::now() + seconds(20);
  std::string warnings;
  while (true) {
    BR_RETURN_IF_ERROR(source.Execute(absl::StrCat("PURGE BINARY LOGS TO '", file, "'")));
    BR_ASSIGN_OR_RETURN(std::vector<std::string> left, SourceBinlogFiles(source));
    if (left.size() == 1 && left[0] == file) return absl::OkStatus();
    BR_ASSIGN_OR_RETURN(SqlRows w, source.Query("SHOW WARNINGS"));
    warnings.clear();
    for (const auto& row : w) {
      if (row.size() >= 3) absl::StrAppend(&warnings, row[2].value_or(""), "; ");
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the source kept ", absl::StrJoin(left, ","), " after PURGE BINARY LOGS TO '", file,
          "' for 20 s; warnings: ", warnings));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// Guards: a replica by MASTER_LOG_FILE/POS and one by
// MASTER_USE_GTID=slave_pos, streaming live through binrelay while the mixed
// workload (DDL, a 50k-row transaction, a 40 MiB rows event, two GTID
// domains) runs, end with every table equal to the source's.
TEST(ServeReplicaTest, FilePositionAndGtidReplicasMatchSourceChecksums) {
  BR_ASSERT_OK_AND_ASSIGN(auto source, StartServeSource());
  BR_ASSERT_OK_AND_ASSIGN(auto serve, ServeProcess::Create(*source));
  BR_ASSERT_OK(serve->Start());
  const MasterEndpoint master = ReplicaEndpoint(*serve, *source);
  BR_ASSERT_OK_AND_ASSIGN(auto by_pos,
                          StartReplicaOf(master, {.server_id = 2, .mode = Mode::kFilePosition}));
  BR_ASSERT_OK_AND_ASSIGN(auto by_gtid,
                          StartReplicaOf(master, {.server_id = 3, .mode = Mode::kGtidSlavePos}));

  BR_ASSERT_OK(RunMixedWorkload(*source, "mix"));
  BR_ASSERT_OK_AND_ASSIGN(std::string gtid, GtidBinlogPos(*source));
  ASSERT_NE(gtid.find("2-1-"), std::string::npos) << "the workload must span two domains: " << gtid;

  BR_EXPECT_OK(WaitReplicaCaughtUp(*by_pos, gtid, seconds(90))) << serve->StderrTail();
  BR_EXPECT_OK(WaitReplicaCaughtUp(*by_gtid, gtid, seconds(90))) << serve->StderrTail();
  EXPECT_TRUE(SameChecksums(*source, *by_pos, {"mix"}));
  EXPECT_TRUE(SameChecksums(*source, *by_gtid, {"mix"}));
  BR_EXPECT_OK(serve->Stop());
}

// Guards: what binrelay sends to `mariadb-binlog --raw
// --to-last-log` must be the source's files, byte for byte: every closed
// file identical, the open one a prefix (its FDE's IN_USE flag is cleared
// in any dump stream) reaching the end binrelay had stored. The open file
// holds no transaction, only the header events of a rotation (these once
// stayed unpublished until the next transaction).
TEST(ServeReplicaTest, MariadbBinlogRawDownloadIsByteIdenticalToSourceFiles) {
  BR_ASSERT_OK_AND_ASSIGN(auto source, StartServeSource());
  BR_ASSERT_OK_AND_ASSIGN(auto serve, ServeProcess::Create(*source));
  BR_ASSERT_OK(serve->Start());
  // Every phase in its own file; the 40 MiB event crosses packet splits.
  BR_ASSERT_OK(RunMixedWorkload(*source, "mix",
                                {.large_transaction_rows = 10000, .rotate_between_phases = true}));
  BR_ASSERT_OK(source->Execute("FLUSH BINARY LOGS"));
  BR_ASSERT_OK_AND_ASSIGN(SourceEnd end, WaitStoreReached(*serve, *source, seconds(60)));
  BR_ASSERT_OK_AND_ASSIGN(std::vector<std::string> files, SourceBinlogFiles(*source));
  ASSERT_GE(files.size(), 5u);
  ASSERT_EQ(files.back(), end.file);

  const MasterEndpoint master = ReplicaEndpoint(*serve, *source);
  const std::string out_dir = serve->dir() + "/download";
  fs::create_directories(out_dir);
  CommandResult r = RunShellCommand(
      absl::StrCat("mariadb-binlog --no-defaults --read-from-remote-server --raw --protocol=tcp "
                   "--host 127.0.0.1 --port ",
                   master.port, " --user ", master.user, " --password=", master.password,
                   " --result-file=", out_dir, "/ --to-last-log ", files[0]),
      seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r.output << "\nbinrelay:\n" << serve->StderrTail();

  for (size_t i = 0; i + 1 < files.size(); ++i) {
    BR_EXPECT_OK(CompareBinlogCopy(source->DataDir() + "/" + files[i], out_dir + "/" + files[i],
                                   CopyCompare::kExact));
  }
  const std::string open_file = source->DataDir() + "/" + files.back();
  BR_EXPECT_OK(CompareBinlogCopy(open_file, out_dir + "/" + files.back(),
                                 CopyCompare::kPrefixIgnoringInUseFlag));
  std::error_code ec;
  EXPECT_GE(fs::file_size(out_dir + "/" + files.back(), ec), end.pos)
      << "the non-blocking dump stopped before the end binrelay had stored";
  std::vector<std::string> downloaded;
  for (const auto& e : fs::directory_iterator(out_dir)) {
    downloaded.push_back(e.path().filename().string());
  }
  std::sort(downloaded.begin(), downloaded.end());
  EXPECT_EQ(downloaded, files) << "files written by mariadb-binlog";
}

// Guards: binrelay keeps (and serves) files the source purged:
// a brand-new replica asking for the first file at position 4 replays the
// source's whole history and ends with equal checksums; the stored copies
// of the purged files are the source's bytes.
TEST(ServeReplicaTest, NewReplicaStartsAtFirstEventAfterSourcePurgedIt) {
  BR_ASSERT_OK_AND_ASSIGN(auto source, StartServeSource());
  BR_ASSERT_OK_AND_ASSIGN(
      auto serve, ServeProcess::Create(*source, {.overrides = {"--source.start=earliest"}}));
  BR_ASSERT_OK(serve->Start());
  BR_ASSERT_OK(RunMixedWorkload(
      *source, "early",
      {.rows = 500, .large_transaction_rows = 5000, .big_row_bytes = 2u << 20}));
  for (int i = 0; i < 3; ++i) {
    BR_ASSERT_OK(source->Execute("FLUSH BINARY LOGS"));
    BR_ASSERT_OK(source->Execute(absl::StrCat("INSERT INTO early.items (id, qty) VALUES (",
                                              100000 + i, ", ", i, ")")));
  }
  BR_ASSERT_OK(WaitStoreReached(*serve, *source, seconds(60)));
  BR_ASSERT_OK_AND_ASSIGN(std::vector<std::string> files, SourceBinlogFiles(*source));
  ASSERT_GE(files.size(), 4u);
  ASSERT_EQ(files[0], "mysql-bin.000001");
  std::map<std::string, std::string> purged;  // the source's bytes, read before PURGE
  for (size_t i = 0; i + 1 < files.size(); ++i) {
    purged[files[i]] = ReadWholeFile(source->DataDir() + "/" + files[i]);
  }
  BR_ASSERT_OK(PurgeSourceTo(*source, files.back()));
  BR_ASSERT_OK(RunMixedWorkload(
      *source, "late", {.rows = 300, .large_transaction_rows = 1000, .big_row_bytes = 0}));

  BR_ASSERT_OK_AND_ASSIGN(
      auto replica,
      StartReplicaOf(ReplicaEndpoint(*serve, *source),
                     {.server_id = 5, .mode = Mode::kFilePosition, .log_file = files[0]}));
  BR_ASSERT_OK_AND_ASSIGN(std::string gtid, GtidBinlogPos(*source));
  BR_EXPECT_OK(WaitReplicaCaughtUp(*replica, gtid, seconds(90))) << serve->StderrTail();
  EXPECT_TRUE(SameChecksums(*source, *replica, {"early", "late"}));
  for (const auto& [name, bytes] : purged) {
    BR_EXPECT_OK(
        CompareBinlogBytes(bytes, serve->store_dir() + "/" + name, name, CopyCompare::kExact));
  }
  BR_EXPECT_OK(serve->Stop());
}

}  // namespace
}  // namespace binrelay::testing
