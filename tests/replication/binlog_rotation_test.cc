#include "replication/binlog_rotation.h"

#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace binrelay::replication {
namespace {

// Answers SHOW MASTER STATUS from a queue (one entry per call; an empty
// entry is an error) and records every statement.
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
      if (file.empty()) return absl::UnavailableError("lost connection to db1:3306");
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
// rotation opened.
TEST(BinlogRotationTest, StartsAtTheNewFilesFirstByte) {
  RotatingSource s;
  s.files = {"mysql-bin.000007", "mysql-bin.000008"};
  BinlogRotation r = RotateBinlog(s);
  ASSERT_TRUE(r.error.ok()) << r.error;
  ASSERT_TRUE(r.before && r.first);
  EXPECT_EQ(r.before->ToString(), "mysql-bin.000007:1073741000");
  EXPECT_EQ(r.first->ToString(), "mysql-bin.000008:4");
  ASSERT_EQ(s.sent.size(), 3u);
  EXPECT_EQ(s.sent[1], "FLUSH NO_WRITE_TO_BINLOG BINARY LOGS");
}

// Guards: an account without RELOAD told neither the grant nor how to do
// without it, and a store then starting at the source's current file read
// later than the flush (a move reading its position in between would start
// before the store's first file).
TEST(BinlogRotationTest, RefusedFlushNamesTheGrantAndKeepsTheFileReadBeforeIt) {
  RotatingSource s;
  s.files = {"mysql-bin.000007", "mysql-bin.000009"};
  s.flush = absl::PermissionDeniedError(
      "server returned error 1227 (42000): Access denied; you need (at least one of) the "
      "RELOAD privilege(s) for this operation");
  BinlogRotation r = RotateBinlog(s);
  EXPECT_EQ(r.error.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(absl::StrContains(r.error.message(), "FLUSH BINARY LOGS on db1:3306")) << r.error;
  EXPECT_TRUE(absl::StrContains(r.error.message(), "GRANT RELOAD ON *.*")) << r.error;
  EXPECT_TRUE(absl::StrContains(r.error.message(), "start = current")) << r.error;
  ASSERT_TRUE(r.first);
  EXPECT_EQ(r.first->ToString(), "mysql-bin.000007:4");
}

// Guards: a refusal other than a missing privilege (a relay that is itself
// a binrelay answers FLUSH with its read-only error) blamed on RELOAD.
TEST(BinlogRotationTest, OtherRefusalsDoNotBlameTheGrant) {
  RotatingSource s;
  s.files = {"mysql-bin.000007"};
  s.flush = absl::FailedPreconditionError(
      "server returned error 1290 (HY000): binrelay is a read-only relay");
  BinlogRotation r = RotateBinlog(s);
  EXPECT_FALSE(r.error.ok());
  EXPECT_FALSE(absl::StrContains(r.error.message(), "RELOAD")) << r.error;
  ASSERT_TRUE(r.first);
  EXPECT_EQ(r.first->ToString(), "mysql-bin.000007:4");
}

// Guards: a flush that did not open a new file reported as a rotation, and
// a status lost after the flush leaving no start (the file read before the
// flush is still a safe one).
TEST(BinlogRotationTest, UnchangedOrUnreadableFileAfterTheFlushKeepsTheFileBefore) {
  RotatingSource same;
  same.files = {"mysql-bin.000007"};
  BinlogRotation r = RotateBinlog(same);
  EXPECT_EQ(r.error.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(r.error.message(), "left the binlog in mysql-bin.000007"))
      << r.error;
  ASSERT_TRUE(r.first);
  EXPECT_EQ(r.first->ToString(), "mysql-bin.000007:4");

  RotatingSource lost;
  lost.files = {"mysql-bin.000007", ""};
  r = RotateBinlog(lost);
  EXPECT_FALSE(r.error.ok());
  ASSERT_TRUE(r.first);
  EXPECT_EQ(r.first->ToString(), "mysql-bin.000007:4");
}

// Guards: a source whose position cannot be read at all given a start.
TEST(BinlogRotationTest, UnreadableStatusGivesNoStart) {
  RotatingSource s;
  s.files = {""};
  BinlogRotation r = RotateBinlog(s);
  EXPECT_FALSE(r.error.ok());
  EXPECT_FALSE(r.first);
  for (const std::string& q : s.sent) {
    EXPECT_FALSE(absl::StartsWith(q, "FLUSH")) << "no FLUSH without a position to fall back to";
  }
}

}  // namespace
}  // namespace binrelay::replication
