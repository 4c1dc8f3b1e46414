// Every replication client reads binrelay exactly as it reads the
// source. The same dump requests go to a real MariaDB 10.11 source and to
// `binrelay serve` following it, through a raw protocol client
// (raw_dump_client.h), and the two event streams must be equal event by
// event (type, length, log_pos, flags, payload); artificial events may
// differ only in timestamp and server_id. Requests cover every
// @mariadb_slave_capability (unset, 0 to 4) with and without the annotate
// flag, mid-file and later-file starts, a file name with a trailing zero
// byte, server_id 0, checksum declarations, GTID dumps (empty position,
// mid-stream, several domains, a domain with two servers, the last GTID of
// a file, strict mode with a hole, START SLAVE UNTIL), and refusals (whose
// error code must be the source's).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "protocol/client_connection.h"
#include "protocol/status_macros.h"
#include "replication/dump_commands.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/raw_dump_client.h"
#include "tests/harness/serve_fixture.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

using std::chrono::seconds;

constexpr uint16_t kNonBlock = 0x01;
constexpr uint16_t kAnnotate = 0x02;

// What the workload left, for building requests.
struct Landmarks {
  std::vector<std::string> files;  // oldest first
  std::string gtid_early;          // domain 0 after the first transactions
  std::string gtid_end_of_file1;   // @@gtid_binlog_pos when file 1 was closed
  std::string gtid_before_hole;    // domain 0, before the gtid_seq_no jump
  uint64_t file1_mid = 0;          // an event boundary inside file 1
  uint64_t file1_size = 0;
};

absl::StatusOr<std::string> BinlogPos(ServerSandbox& source) {
  BR_ASSIGN_OR_RETURN(SqlRows r, source.Query("SELECT @@gtid_binlog_pos"));
  return r.at(0).at(0).value_or("");
}

absl::StatusOr<std::pair<std::string, uint64_t>> MasterStatus(ServerSandbox& source) {
  BR_ASSIGN_OR_RETURN(SqlRows r, source.Query("SHOW MASTER STATUS"));
  uint64_t pos = std::stoull(r.at(0).at(1).value_or("0"));
  return std::make_pair(r.at(0).at(0).value_or(""), pos);
}

// A deterministic workload over three files with every kind of event the
// capability rules touch: ANNOTATE_ROWS, transactional and standalone
// GTIDs, a MyISAM statement (its group ends with a COMMIT query), a
// skip_replication transaction, a second domain, a second server in domain
// 0, a gap in the sequence numbers, BINLOG_CHECKPOINTs and GTID_LISTs.
absl::StatusOr<Landmarks> RunWorkload(ServerSandbox& s) {
  Landmarks l;
  for (const char* sql : {
           "CREATE DATABASE parity",
           "CREATE TABLE parity.t (id INT PRIMARY KEY, v VARCHAR(64)) ENGINE=InnoDB",
           "CREATE TABLE parity.m (id INT PRIMARY KEY, v VARCHAR(64)) ENGINE=MyISAM",
           "INSERT INTO parity.t VALUES (1, 'a')",
           // A statement long enough that a dummy replacing its ANNOTATE_ROWS
           // holds the whole comment and its space padding.
           "INSERT INTO parity.t VALUES (10, 'a statement long enough to need padding') "
           "/* and a comment, which ANNOTATE_ROWS keeps: 0123456789012345678901234567890 */",
       }) {
    BR_RETURN_IF_ERROR(s.Execute(sql));
  }
  BR_ASSIGN_OR_RETURN(l.gtid_early, BinlogPos(s));
  BR_ASSIGN_OR_RETURN(auto mid, MasterStatus(s));
  l.file1_mid = mid.second;
  for (const char* sql : {
           "BEGIN",
           "INSERT INTO parity.t VALUES (2, 'b'), (3, 'c')",
           "UPDATE parity.t SET v = 'bb' WHERE id = 2",
           "COMMIT",
           "INSERT INTO parity.m VALUES (1, 'x')",
           "SET SESSION skip_replication = 1",
           "INSERT INTO parity.t VALUES (4, 'skipped by some')",
           "SET SESSION skip_replication = 0",
           "SET SESSION gtid_domain_id = 2",
           "INSERT INTO parity.t VALUES (5, 'domain 2')",
           "SET SESSION gtid_domain_id = 0",
           "SET SESSION server_id = 7",
           "INSERT INTO parity.t VALUES (8, 'server 7')",
           "SET SESSION server_id = 1",
           "DELETE FROM parity.t WHERE id = 3",
       }) {
    BR_RETURN_IF_ERROR(s.Execute(sql));
  }
  BR_ASSIGN_OR_RETURN(l.gtid_end_of_file1, BinlogPos(s));
  BR_ASSIGN_OR_RETURN(auto end1, MasterStatus(s));
  l.file1_size = end1.second;
  BR_RETURN_IF_ERROR(s.Execute("FLUSH BINARY LOGS"));
  for (const char* sql : {
           "INSERT INTO parity.t VALUES (6, 'file 2')",
           "ALTER TABLE parity.t ADD COLUMN w INT",
           "SET SESSION gtid_domain_id = 2",
           "UPDATE parity.t SET v = 'domain 2 again' WHERE id = 5",
           "SET SESSION gtid_domain_id = 0",
       }) {
    BR_RETURN_IF_ERROR(s.Execute(sql));
  }
  BR_ASSIGN_OR_RETURN(l.gtid_before_hole, BinlogPos(s));
  for (const char* sql : {
           "SET SESSION gtid_seq_no = 100",
           "INSERT INTO parity.t VALUES (9, 'after a hole', 9)",
           "FLUSH BINARY LOGS",
           "INSERT INTO parity.t VALUES (7, 'file 3', 1)",
           "INSERT INTO parity.m VALUES (2, 'y')",
       }) {
    BR_RETURN_IF_ERROR(s.Execute(sql));
  }
  BR_ASSIGN_OR_RETURN(l.files, SourceBinlogFiles(s));
  return l;
}

// The domain-0 GTID of a position like "0-1-5,2-1-1".
std::string Domain0(const std::string& pos) {
  for (size_t start = 0; start < pos.size();) {
    size_t end = pos.find(',', start);
    std::string g = pos.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (g.rfind("0-", 0) == 0) return g;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

std::string SeqMinusOne(const std::string& gtid) {  // "0-1-5" -> "0-1-4"
  size_t dash = gtid.rfind('-');
  return absl::StrCat(gtid.substr(0, dash + 1), std::stoull(gtid.substr(dash + 1)) - 1);
}

class ServeDumpParityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto source = StartServeSource({"--binlog-annotate-row-events=ON"});
    ASSERT_TRUE(source.ok()) << source.status();
    source_ = source->release();
    auto l = RunWorkload(*source_);
    ASSERT_TRUE(l.ok()) << l.status();
    landmarks_ = new Landmarks(*l);
    auto serve = ServeProcess::Create(*source_);
    ASSERT_TRUE(serve.ok()) << serve.status();
    serve_ = serve->release();
    absl::Status st = serve_->Start();
    ASSERT_TRUE(st.ok()) << st;
    // Everything stored, and the source quiet long enough for binrelay to
    // know it is caught up (binrelay treats a position beyond its store as
    // "not stored yet" while events still arrive; the source appends a late
    // BINLOG_CHECKPOINT when InnoDB catches up): the source's files and the
    // stored ones are equal and unchanged for 2 s.
    auto reached = WaitStoreReached(*serve_, *source_, std::chrono::seconds(60));
    ASSERT_TRUE(reached.ok()) << reached.status() << serve_->StderrTail();
    const auto deadline = std::chrono::steady_clock::now() + seconds(60);
    std::vector<size_t> last;
    auto stable_since = std::chrono::steady_clock::now();
    while (true) {
      std::vector<size_t> sizes;
      bool equal = true;
      for (const std::string& f : landmarks_->files) {
        size_t a = ReadWholeFile(source_->DataDir() + "/" + f).size();
        equal = equal && a == ReadWholeFile(serve_->store_dir() + "/" + f).size();
        sizes.push_back(a);
      }
      if (!equal || sizes != last) stable_since = std::chrono::steady_clock::now();
      last = sizes;
      if (std::chrono::steady_clock::now() - stable_since >= seconds(2)) break;
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "store never matched the source";
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  static void TearDownTestSuite() {
    delete serve_;
    delete source_;
    delete landmarks_;
    serve_ = nullptr;
    source_ = nullptr;
    landmarks_ = nullptr;
  }

  static protocol::ConnectOptions At(uint16_t port) {
    protocol::ConnectOptions o;
    o.host = "127.0.0.1";
    o.port = port;
    o.user = kReplUser;
    o.password = kReplPassword;
    o.tls = protocol::ConnectOptions::Tls::kDisabled;
    return o;
  }

  // Sends `scenario` to both and expects equal streams.
  void ExpectSame(const DumpScenario& scenario, bool compare_error_messages = false) {
    SCOPED_TRACE(scenario.name);
    auto from_source = CaptureDump(At(source_->Port()), scenario);
    ASSERT_TRUE(from_source.ok()) << from_source.status();
    auto from_relay = CaptureDump(At(serve_->listen_port()), scenario);
    ASSERT_TRUE(from_relay.ok()) << from_relay.status();
    EXPECT_FALSE(from_source->timed_out) << from_source->Describe();
    std::string diff = CompareDumps(*from_source, *from_relay, compare_error_messages);
    EXPECT_EQ(diff, "") << "source: " << from_source->Describe()
                        << "\nrelay: " << from_relay->Describe() << "\n"
                        << serve_->StderrTail(10);
  }

  static std::vector<std::string> Setup(std::optional<int> capability,
                                        const std::string& checksum = "CRC32") {
    std::vector<std::string> sql;
    if (!checksum.empty()) sql.push_back(absl::StrCat("SET @master_binlog_checksum='", checksum, "'"));
    if (capability) sql.push_back(absl::StrCat("SET @mariadb_slave_capability=", *capability));
    return sql;
  }
  static std::string CapName(std::optional<int> c) {
    return c ? absl::StrCat("capability ", *c) : std::string("no capability");
  }

  static ServerSandbox* source_;
  static ServeProcess* serve_;
  static Landmarks* landmarks_;
};

ServerSandbox* ServeDumpParityTest::source_ = nullptr;
ServeProcess* ServeDumpParityTest::serve_ = nullptr;
Landmarks* ServeDumpParityTest::landmarks_ = nullptr;

const std::vector<std::optional<int>> kCapabilities = {std::nullopt, 0, 1, 2, 3, 4};

// Guards: a client of any MariaDB capability, with or without the annotate
// flag, getting a different stream from binrelay than from the source
// (events it cannot handle must be left out or replaced exactly as the
// source does, so positions stay valid).
TEST_F(ServeDumpParityTest, EveryCapabilityAndAnnotateFlagFromTheFirstFile) {
  for (std::optional<int> cap : kCapabilities) {
    for (uint16_t flags : {kNonBlock, static_cast<uint16_t>(kNonBlock | kAnnotate)}) {
      ExpectSame({absl::StrCat(CapName(cap), ", flags ", flags), Setup(cap),
                  replication::BuildBinlogDump(5000, landmarks_->files[0], 4, flags)});
    }
  }
}

// Guards: mid-file starts (FDE rewritten with log_pos 0 and created 0) and
// later-file starts differing by capability.
TEST_F(ServeDumpParityTest, MidFileAndLaterFileStarts) {
  for (std::optional<int> cap : {std::optional<int>(), std::optional<int>(2),
                                 std::optional<int>(4)}) {
    ExpectSame({absl::StrCat(CapName(cap), " mid-file"), Setup(cap),
                replication::BuildBinlogDump(5001, landmarks_->files[0],
                                             static_cast<uint32_t>(landmarks_->file1_mid),
                                             kNonBlock)});
    ExpectSame({absl::StrCat(CapName(cap), " second file"), Setup(cap),
                replication::BuildBinlogDump(5001, landmarks_->files[1], 4, kNonBlock)});
    ExpectSame({absl::StrCat(CapName(cap), " end of file 1"), Setup(cap),
                replication::BuildBinlogDump(5001, landmarks_->files[0],
                                             static_cast<uint32_t>(landmarks_->file1_size),
                                             kNonBlock)});
  }
}

// Guards: a file name sent with a terminating zero byte (zongji, go-mysql)
// being read as part of the name (binrelay answered the retryable 1105 for
// a file it holds, and the client retried forever); server_id 0 and the
// empty file name; checksum declarations.
TEST_F(ServeDumpParityTest, NameWithTrailingZeroServerIdZeroAndChecksumDeclarations) {
  std::string with_nul = replication::BuildBinlogDump(5002, landmarks_->files[0], 4, kNonBlock);
  with_nul.push_back('\0');
  ExpectSame({"name with a trailing zero byte", Setup(4), with_nul});
  std::string with_junk = with_nul + "junk after the name";
  ExpectSame({"bytes after the zero byte", Setup(4), with_junk});
  ExpectSame({"server_id 0 without the non-blocking flag", Setup(4),
              replication::BuildBinlogDump(0, landmarks_->files[0], 4, 0)});
  ExpectSame({"empty name (the first file)", Setup(0),
              replication::BuildBinlogDump(5002, "", 4, kNonBlock)});
  ExpectSame({"checksum declared NONE", Setup(4, "NONE"),
              replication::BuildBinlogDump(5002, landmarks_->files[0], 4, kNonBlock)});
  ExpectSame({"no checksum declared", Setup(4, ""),
              replication::BuildBinlogDump(5002, landmarks_->files[0], 4, kNonBlock)},
             /*compare_error_messages=*/true);
}

// Guards: MariaDB GTID dumps (any capability) starting in the wrong file,
// resending what the replica has, sending the fake GTID_LIST elsewhere than
// the source, keeping `created` in the FDE, or mishandling a domain with two
// servers, the last GTID of a file, strict mode and START SLAVE UNTIL.
TEST_F(ServeDumpParityTest, GtidDumps) {
  const Landmarks& l = *landmarks_;
  const std::string early = Domain0(l.gtid_early);
  const std::string end1 = l.gtid_end_of_file1;
  const std::string hole_start = Domain0(l.gtid_before_hole);
  struct Case {
    std::string what;
    std::string state;
    std::vector<std::string> extra;
  };
  std::vector<Case> cases = {
      {"empty position", "", {}},
      {"early domain 0", early, {}},
      {"early domain 0 minus one", SeqMinusOne(early), {}},
      {"end of file 1 (all domains)", end1, {}},
      {"end of file 1, domain 0 only", Domain0(end1), {}},
      {"server 7 of domain 0", "0-7-" + Domain0(end1).substr(Domain0(end1).rfind('-') + 1), {}},
      {"before the hole, strict", hole_start, {"SET @slave_gtid_strict_mode=1"}},
      {"inside the hole, strict", "0-1-50", {"SET @slave_gtid_strict_mode=1"}},
      {"inside the hole, not strict", "0-1-50", {}},
      {"until the end of file 1", early, {absl::StrCat("SET @slave_until_gtid='", end1, "'")}},
      {"unknown server in domain 0", "0-9-1", {}},
      {"ahead of the binlog", "0-1-99999", {}},
      {"malformed", "0-1", {}},
      {"a domain twice", "0-1-1,0-1-2", {}},
  };
  for (std::optional<int> cap : {std::optional<int>(4), std::optional<int>(0),
                                 std::optional<int>(2)}) {
    for (const Case& c : cases) {
      std::vector<std::string> setup = Setup(cap);
      setup.push_back(absl::StrCat("SET @slave_connect_state='", c.state, "'"));
      setup.insert(setup.end(), c.extra.begin(), c.extra.end());
      for (uint16_t flags : {kNonBlock, static_cast<uint16_t>(kNonBlock | kAnnotate)}) {
        ExpectSame({absl::StrCat(CapName(cap), ", ", c.what, " (", c.state, "), flags ", flags),
                    setup, replication::BuildBinlogDump(5003, "", 4, flags)},
                   /*compare_error_messages=*/true);
      }
    }
  }
}

// Guards: refusals with another error code than the source's (a replica
// stops on 1236 and retries on 1105; clients branch on the code).
TEST_F(ServeDumpParityTest, RefusalsCarryTheSourcesErrorCodes) {
  const Landmarks& l = *landmarks_;
  ExpectSame({"unknown file", Setup(4), replication::BuildBinlogDump(5004, "nope.000001", 4,
                                                                    kNonBlock)},
             /*compare_error_messages=*/true);
  ExpectSame({"a later file the source never wrote", Setup(4),
              replication::BuildBinlogDump(5004, "mysql-bin.000099", 4, kNonBlock)},
             /*compare_error_messages=*/true);
  ExpectSame({"past the end of a closed file", Setup(4),
              replication::BuildBinlogDump(5004, l.files[0],
                                           static_cast<uint32_t>(l.file1_size + 1000), kNonBlock)},
             /*compare_error_messages=*/true);
  ExpectSame({"position 0", Setup(4), replication::BuildBinlogDump(5004, l.files[0], 0,
                                                                  kNonBlock)},
             /*compare_error_messages=*/true);
  ExpectSame({"inside an event", Setup(4),
              replication::BuildBinlogDump(5004, l.files[0], 200, kNonBlock)});
  ExpectSame({"COM_BINLOG_DUMP_GTID on MariaDB", Setup(4),
              replication::BuildBinlogDumpGtid(5004, "", 4, kNonBlock, std::string(8, '\0'))});
  ExpectSame({"an unknown command (0x1d)", Setup(4), std::string("\x1d", 1)});
  std::string truncated = replication::BuildBinlogDump(5004, l.files[0], 4, kNonBlock);
  ExpectSame({"a name of 600 bytes", Setup(4),
              truncated.substr(0, 11) + std::string(600, 'a')});
}

// Guards: a dump from a file purged on both sides answered with another
// code than the source's (binrelay purges on its own retention, or on PURGE
// BINARY LOGS TO on its port).
TEST_F(ServeDumpParityTest, PurgedFileGetsTheSourcesCode) {
  const Landmarks& l = *landmarks_;
  // MariaDB keeps a file until InnoDB's checkpoint passes it: ask again.
  std::vector<std::string> left;
  for (int i = 0; i < 100; ++i) {
    BR_ASSERT_OK(source_->Execute(absl::StrCat("PURGE BINARY LOGS TO '", l.files[1], "'")));
    BR_ASSERT_OK_AND_ASSIGN(left, SourceBinlogFiles(*source_));
    if (left.front() == l.files[1]) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_EQ(left.front(), l.files[1]) << "the source kept its first file";
  protocol::ConnectOptions as_admin = At(serve_->listen_port());
  as_admin.user = kAdminUser;
  as_admin.password = kAdminPassword;
  BR_ASSERT_OK_AND_ASSIGN(auto relay, protocol::ClientConnection::Connect(as_admin));
  BR_ASSERT_OK(relay->Query(absl::StrCat("PURGE BINARY LOGS TO '", l.files[1], "'")).status());
  ExpectSame({"a purged file", Setup(4),
              replication::BuildBinlogDump(5005, l.files[0], 4, kNonBlock)},
             /*compare_error_messages=*/true);
  ExpectSame({"the oldest file left", Setup(4),
              replication::BuildBinlogDump(5005, l.files[1], 4, kNonBlock)});
}

}  // namespace
}  // namespace binrelay::testing
