// FindSwitchPoint: which file of a new source binrelay's store continues
// from, read from what the server answers (SHOW BINARY LOGS, SHOW BINLOG
// EVENTS) in both flavours' forms.
#include "replication/switch_point.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::replication {
namespace {

// Answers from a table; counts the statements run.
class FakeServer : public SqlSource {
 public:
  std::map<std::string, std::vector<SqlRow>> answers;
  std::vector<std::string> ran;
  absl::StatusOr<std::vector<SqlRow>> Query(std::string_view sql) override {
    ran.emplace_back(sql);
    auto it = answers.find(std::string(sql));
    if (it == answers.end()) return absl::NotFoundError(absl::StrCat("error 1064 for ", std::string(sql)));
    return it->second;
  }
  std::string Peer() const override { return "db2:3306"; }

  void Files(const std::vector<std::string>& names) {
    std::vector<SqlRow>& rows = answers["SHOW BINARY LOGS"];
    for (const auto& n : names) rows.push_back({n, "1000"});
  }
  // The file's first events as SHOW BINLOG EVENTS lists them.
  void Opens(const std::string& file, const std::string& type, const std::string& info) {
    answers[absl::StrCat("SHOW BINLOG EVENTS IN '", file, "' LIMIT 4")] = {
        {file, "4", "Format_desc", "2", "256", "Server ver: x, Binlog ver: 4"},
        {file, "256", type, "2", "300", info}};
  }
};

SourceGtids Maria(std::string_view text) {
  return SourceGtids::Parse(GtidFlavour::kMariaDb, text).value();
}
SourceGtids Mysql(std::string_view text) {
  return SourceGtids::Parse(GtidFlavour::kMysql, text).value();
}

// Guards: continuing in a file that opens after the store's end (a gap), or
// in one older than needed (harmless, but it rereads the server's history).
TEST(FindSwitchPointTest, MariaDbNewestFileTheStoreHasPassed) {
  FakeServer s;
  s.Files({"replica-bin.000001", "replica-bin.000002", "replica-bin.000003"});
  s.Opens("replica-bin.000001", "Gtid_list", "[]");
  s.Opens("replica-bin.000002", "Gtid_list", "[0-1-40]");
  s.Opens("replica-bin.000003", "Gtid_list", "[0-1-90,0-2-95]");
  // The store ends at 0-1-60: file 3 opens after it, file 2 before.
  BR_ASSERT_OK_AND_ASSIGN(SwitchPoint p, FindSwitchPoint(s, Maria("0-1-60")));
  EXPECT_EQ(p.file, "replica-bin.000002");
  EXPECT_EQ(p.first_gtids, Maria("0-1-40"));
  // Newest first: files 3 and 2 looked at, not 1.
  EXPECT_EQ(s.ran.size(), 3u);
  // At or past the newest file's state: that file.
  BR_ASSERT_OK_AND_ASSIGN(p, FindSwitchPoint(s, Maria("0-2-95")));
  EXPECT_EQ(p.file, "replica-bin.000003");
}

TEST(FindSwitchPointTest, MysqlPreviousGtidsPrintedWithNewlines) {
  const std::string a = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
  const std::string b = "4f22ab58-71ca-11e1-9e33-c80aa9429562";
  FakeServer s;
  s.Files({"binlog.000007", "binlog.000008"});
  s.Opens("binlog.000007", "Previous_gtids", absl::StrCat(a, ":1-10"));
  s.Opens("binlog.000008", "Previous_gtids", absl::StrCat(a, ":1-50,\n", b, ":1-3"));
  BR_ASSERT_OK_AND_ASSIGN(SwitchPoint p, FindSwitchPoint(s, Mysql(absl::StrCat(a, ":1-60"))));
  EXPECT_EQ(p.file, "binlog.000007");  // 000008 opens with b's GTIDs the store lacks
  BR_ASSERT_OK_AND_ASSIGN(p, FindSwitchPoint(s, Mysql(absl::StrCat(a, ":1-60,", b, ":1-3"))));
  EXPECT_EQ(p.file, "binlog.000008");
  EXPECT_EQ(p.first_gtids, Mysql(absl::StrCat(a, ":1-50,", b, ":1-3")));
}

// Guards: following a server that purged what the store lacks (a silent
// gap), a server of the other flavour, and a store that cannot tell.
TEST(FindSwitchPointTest, RefusesWhatWouldLeaveAGapOrCannotBeCompared) {
  FakeServer s;
  s.Files({"replica-bin.000005"});
  s.Opens("replica-bin.000005", "Gtid_list", "[0-1-90]");
  auto purged = FindSwitchPoint(s, Maria("0-1-60"));
  EXPECT_TRUE(absl::IsNotFound(purged.status())) << purged.status();
  EXPECT_TRUE(absl::StrContains(purged.status().message(), "replica-bin.000005"));
  EXPECT_TRUE(absl::StrContains(purged.status().message(), "0-1-60"));
  auto flavour = FindSwitchPoint(s, Mysql("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5"));
  EXPECT_TRUE(absl::IsFailedPrecondition(flavour.status())) << flavour.status();
  auto none = FindSwitchPoint(s, SourceGtids());
  EXPECT_TRUE(absl::IsInvalidArgument(none.status())) << none.status();
  FakeServer empty;
  empty.answers["SHOW BINARY LOGS"] = {};
  EXPECT_TRUE(absl::IsFailedPrecondition(FindSwitchPoint(empty, Maria("0-1-1")).status()));
  // A file name that is not a plain name is never put into a statement.
  FakeServer hostile;
  hostile.Files({"../x"});
  auto bad = FindSwitchPoint(hostile, Maria("0-1-1"));
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(hostile.ran.size(), 1u);
}

}  // namespace
}  // namespace binrelay::replication
