// ChooseSource: which candidate a failover may follow, from probed facts.
#include "replication/source_choice.h"

#include <gtest/gtest.h>

namespace binrelay::replication {
namespace {

SourceGtids Maria(std::string_view text) {
  return SourceGtids::Parse(GtidFlavour::kMariaDb, text).value();
}

CandidateFacts Server(std::string address, bool read_only, std::string_view gtids) {
  static uint32_t next_server_id = 100;  // each call another server
  CandidateFacts f;
  f.server_id = next_server_id++;
  f.address = std::move(address);
  f.is_mariadb = true;
  f.read_only = read_only;
  f.log_bin = true;
  f.gtids = Maria(gtids);
  return f;
}

bool Has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// Guards: the promoted replica (writable, holding everything stored and its
// own writes after) not chosen, or a read-only replica chosen beside it.
TEST(ChooseSourceTest, ThePromotedReplicaIsChosen) {
  CandidateFacts dead;
  dead.address = "10.0.0.1:3306";
  dead.error = absl::UnavailableError("connection refused");
  std::vector<CandidateFacts> facts = {dead, Server("10.0.0.2:3306", false, "0-1-140,0-2-143"),
                                       Server("10.0.0.3:3306", true, "0-1-140")};
  SourceChoice c = ChooseSource(Maria("0-1-140"), facts, {});
  ASSERT_TRUE(c.chosen.has_value()) << c.refusal;
  EXPECT_EQ(*c.chosen, 1u);
  EXPECT_TRUE(Has(c.verdicts[0].why, "unreachable: connection refused")) << c.verdicts[0].why;
  EXPECT_TRUE(Has(c.verdicts[1].why, "0-2-143 after them")) << c.verdicts[1].why;
  EXPECT_TRUE(Has(c.verdicts[2].why, "read-only")) << c.verdicts[2].why;
}

// Guards: a split brain followed (two writable servers), or a writable
// server that lacks stored transactions followed (the replicas of binrelay
// would miss them), or a read-only one followed instead of refusing.
TEST(ChooseSourceTest, RefusesTwoWritableOrAWritableOneThatLacksStoredTransactions) {
  SourceChoice two = ChooseSource(Maria("0-1-140"),
                                  {Server("a:1", false, "0-1-140"), Server("b:2", false, "0-1-141")},
                                  {});
  EXPECT_FALSE(two.chosen.has_value());
  EXPECT_TRUE(Has(two.refusal, "2 candidates take writes (a:1, b:2)")) << two.refusal;
  EXPECT_EQ(two.verdicts[0].why, "not alone in taking writes");

  ChoiceOptions ro;
  ro.follow_read_only = true;
  SourceChoice lacking = ChooseSource(
      Maria("0-1-140,0-2-145"), {Server("old:1", false, "0-1-150"), Server("r:2", true, "0-1-140,0-2-145")},
      ro);
  EXPECT_FALSE(lacking.chosen.has_value());
  EXPECT_TRUE(Has(lacking.refusal, "old:1, cannot be followed: lacks 0-2-145 that binrelay "
                                   "stored, and has 0-1-150 that binrelay never stored (errant"))
      << lacking.refusal;
}

// Guards: an old primary that flaps back being followed again by itself,
// and follow_read_only ignored.
TEST(ChooseSourceTest, NeverGoesBackToASourceItLeftAndFollowsReadOnlyOnlyWhenAllowed) {
  ChoiceOptions opts;
  opts.left = {"old:1"};
  SourceChoice back = ChooseSource(Maria("0-1-140"), {Server("old:1", false, "0-1-150")}, opts);
  EXPECT_FALSE(back.chosen.has_value());
  EXPECT_TRUE(Has(back.refusal, "switched away from it")) << back.refusal;
  // The same server under another name (an IP instead of its host name):
  // still left, by its server_id.
  CandidateFacts renamed = Server("10.0.0.1:1", false, "0-1-150");
  ChoiceOptions by_id;
  by_id.left = {"old:1"};
  by_id.left_server_ids = {renamed.server_id};
  SourceChoice again = ChooseSource(Maria("0-1-140"), {renamed}, by_id);
  EXPECT_FALSE(again.chosen.has_value());
  EXPECT_TRUE(Has(again.refusal, "switched away from it")) << again.refusal;

  std::vector<CandidateFacts> ro = {Server("r1:1", true, "0-1-139"), Server("r2:2", true, "0-1-140")};
  EXPECT_FALSE(ChooseSource(Maria("0-1-140"), ro, {}).chosen.has_value());
  ChoiceOptions allow;
  allow.follow_read_only = true;
  SourceChoice c = ChooseSource(Maria("0-1-140"), ro, allow);
  ASSERT_TRUE(c.chosen.has_value()) << c.refusal;
  EXPECT_EQ(*c.chosen, 1u) << "r1 lacks 0-1-140";
}

// Guards: a failover "checked" against a store with no GTIDs (everything
// passes an empty set), a server that answered the login but not the check
// left out of the split-brain count, and one server under two names taken
// for a split brain.
TEST(ChooseSourceTest, RefusesWhatCannotBeCheckedAndCountsAServerOnce) {
  CandidateFacts mysql_off;
  mysql_off.address = "m:1";
  mysql_off.read_only = false;
  mysql_off.log_bin = true;
  mysql_off.gtids = SourceGtids::Parse(GtidFlavour::kMysql, "").value();
  ChoiceOptions stored;
  stored.store_has_transactions = true;
  SourceChoice no_gtids = ChooseSource(SourceGtids::Parse(GtidFlavour::kMysql, "").value(),
                                       {mysql_off}, stored);
  EXPECT_FALSE(no_gtids.chosen.has_value());
  EXPECT_TRUE(Has(no_gtids.refusal, "no GTIDs")) << no_gtids.refusal;
  EXPECT_TRUE(ChooseSource(SourceGtids::Parse(GtidFlavour::kMysql, "").value(), {mysql_off}, {})
                  .chosen.has_value())
      << "an empty store can follow a server without GTIDs";

  CandidateFacts mute;
  mute.address = "mute:2";
  mute.connected = true;
  mute.error = absl::PermissionDeniedError("SELECT command denied");
  SourceChoice unknown =
      ChooseSource(Maria("0-1-5"), {Server("a:1", false, "0-1-5"), mute}, {});
  EXPECT_FALSE(unknown.chosen.has_value());
  EXPECT_TRUE(Has(unknown.refusal, "cannot tell whether mute:2 (SELECT command denied) takes "
                                   "writes"))
      << unknown.refusal;
  EXPECT_TRUE(Has(unknown.verdicts[1].why, "answered but could not be checked"));

  CandidateFacts by_name = Server("db1:3306", false, "0-1-5");
  CandidateFacts by_address = Server("10.0.0.1:3306", false, "0-1-5");
  by_name.server_id = by_address.server_id = 7;
  SourceChoice once = ChooseSource(Maria("0-1-5"), {by_name, by_address}, {});
  ASSERT_TRUE(once.chosen.has_value()) << once.refusal;
  EXPECT_EQ(*once.chosen, 0u);
}

}  // namespace
}  // namespace binrelay::replication
