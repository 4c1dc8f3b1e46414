// ChooseSource: which candidate a failover may follow, from probed facts.
#include "replication/source_choice.h"

#include <gtest/gtest.h>

namespace binrelay::replication {
namespace {

SourceGtids Maria(std::string_view text) {
  return SourceGtids::Parse(GtidFlavour::kMariaDb, text).value();
}

CandidateFacts Server(std::string address, bool read_only, std::string_view gtids) {
  CandidateFacts f;
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

  std::vector<CandidateFacts> ro = {Server("r1:1", true, "0-1-139"), Server("r2:2", true, "0-1-140")};
  EXPECT_FALSE(ChooseSource(Maria("0-1-140"), ro, {}).chosen.has_value());
  ChoiceOptions allow;
  allow.follow_read_only = true;
  SourceChoice c = ChooseSource(Maria("0-1-140"), ro, allow);
  ASSERT_TRUE(c.chosen.has_value()) << c.refusal;
  EXPECT_EQ(*c.chosen, 1u) << "r1 lacks 0-1-140";
}

}  // namespace
}  // namespace binrelay::replication
