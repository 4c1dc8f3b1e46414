#include "replication/binlog_rotation.h"

#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace binrelay::replication {
namespace {

// Answers SHOW MASTER STATUS from a queue (one entry per call) and records
// every statement.
class RotatingSource : public SqlSource {
 public:
  std::deque<std::string> files;
  absl::Status flush = absl::OkStatus();
  std::vector<std::string> sent;
  absl::StatusOr<std::vector<SqlRow>> Query(std::string_view sql) override {
    sent.emplace_back(sql);
    if (sql == "SHOW MASTER STATUS") {
      std::string file = files.front();
      if (files.size() > 1) files.pop_front();
      return std::vector<SqlRow>{{file, std::string("1073741000")}};
    }
    if (absl::StartsWith(std::string(sql), "FLUSH")) {
      if (!flush.ok()) return flush;
      return std::vector<SqlRow>{};
    }
    return absl::NotFoundError(absl::StrCat("unexpected ", std::string(sql)));
  }
  std::string Peer() const override { return "db1:3306"; }
};

// Guards: the store starting anywhere but the first byte of the file the
// rotation opened, and a rotation that is replicated to the source's own
// replicas (it must be NO_WRITE_TO_BINLOG).
TEST(BinlogRotationTest, StartsAtTheNewFilesFirstByte) {
  RotatingSource s;
  s.files = {"mysql-bin.000007", "mysql-bin.000008"};
  auto r = RotateBinlog(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->before.ToString(), "mysql-bin.000007:1073741000");
  EXPECT_EQ(r->first.ToString(), "mysql-bin.000008:4");
  ASSERT_EQ(s.sent.size(), 3u);
  EXPECT_EQ(s.sent[1], "FLUSH NO_WRITE_TO_BINLOG BINARY LOGS");
}

// Guards: an account without RELOAD getting a message that does not name
// the privilege or the server.
TEST(BinlogRotationTest, RefusedFlushNamesRELOADAndTheServer) {
  RotatingSource s;
  s.files = {"mysql-bin.000007"};
  s.flush = absl::PermissionDeniedError(
      "server returned error 1227 (42000): Access denied; you need (at least one of) the "
      "RELOAD privilege(s) for this operation");
  auto r = RotateBinlog(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "FLUSH BINARY LOGS on db1:3306 (needs RELOAD)"))
      << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "error 1227")) << r.status();
}

// Guards: a flush that did not open a new file reported as a rotation (the
// log would say the store skips a file it then fetches whole).
TEST(BinlogRotationTest, UnchangedFileIsAnError) {
  RotatingSource s;
  s.files = {"mysql-bin.000007"};
  auto r = RotateBinlog(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "left the binlog in mysql-bin.000007"))
      << r.status();
}

}  // namespace
}  // namespace binrelay::replication
