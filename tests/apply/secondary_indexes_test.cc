// DeferrableIndexes / WithoutDeferrableIndexes on SHOW CREATE TABLE text as
// MariaDB 10.11 prints it.
#include "apply/secondary_indexes.h"

#include <gtest/gtest.h>

namespace binrelay::apply {
namespace {

constexpr char kTable[] =
    "CREATE TABLE `t` (\n"
    "  `id` int(11) NOT NULL,\n"
    "  `a` int(11) DEFAULT NULL,\n"
    "  `b` varchar(20) DEFAULT NULL,\n"
    "  PRIMARY KEY (`id`),\n"
    "  UNIQUE KEY `ua` (`a`),\n"
    "  KEY `b``x` (`b`(10)) COMMENT 'KEY `no` (\\n)',\n"
    "  FULLTEXT KEY `ft` (`b`),\n"
    "  KEY `a` (`a`) USING BTREE\n"
    ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci";

// Guards: a UNIQUE or FULLTEXT key deferred, a quoted name cut at its
// doubled backtick, a comment's text taken for a key, a trailing comma
// left in the definition.
TEST(SecondaryIndexesTest, OnlyPlainKeysAreDeferredWithTheirWholeDefinition) {
  auto got = DeferrableIndexes(kTable);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].name, "b`x");
  EXPECT_EQ(got[0].definition, "KEY `b``x` (`b`(10)) COMMENT 'KEY `no` (\\n)'");
  EXPECT_EQ(got[1].name, "a");
  EXPECT_EQ(got[1].definition, "KEY `a` (`a`) USING BTREE");
}

// Guards: a CREATE TABLE left with a comma before its closing line (a
// syntax error on the target) or without the keys that must stay.
TEST(SecondaryIndexesTest, TheTableWithoutThemIsValidAndKeepsTheOthers) {
  EXPECT_EQ(WithoutDeferrableIndexes(kTable),
            "CREATE TABLE `t` (\n"
            "  `id` int(11) NOT NULL,\n"
            "  `a` int(11) DEFAULT NULL,\n"
            "  `b` varchar(20) DEFAULT NULL,\n"
            "  PRIMARY KEY (`id`),\n"
            "  UNIQUE KEY `ua` (`a`),\n"
            "  FULLTEXT KEY `ft` (`b`)\n"
            ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci");
}

// Guards: deferring the index a foreign key needs (InnoDB would create its
// own for the constraint, and the later ADD would duplicate it).
TEST(SecondaryIndexesTest, ATableWithAForeignKeyKeepsEveryIndex) {
  const std::string with_fk =
      "CREATE TABLE `c` (\n"
      "  `id` int(11) NOT NULL,\n"
      "  `p` int(11) DEFAULT NULL,\n"
      "  PRIMARY KEY (`id`),\n"
      "  KEY `p` (`p`),\n"
      "  CONSTRAINT `c_ibfk_1` FOREIGN KEY (`p`) REFERENCES `parent` (`id`)\n"
      ") ENGINE=InnoDB";
  EXPECT_TRUE(DeferrableIndexes(with_fk).empty());
  EXPECT_TRUE(ReferencesOtherTables(with_fk));
  EXPECT_EQ(WithoutDeferrableIndexes(with_fk), with_fk);
}

// Guards: the KEY an AUTO_INCREMENT column needs to lead (InnoDB refuses
// the table without it, error 1075) deferred, failing the move at create.
TEST(SecondaryIndexesTest, TheKeyLedByTheAutoIncrementColumnStays) {
  const std::string t =
      "CREATE TABLE `t` (\n"
      "  `tenant` int(11) NOT NULL,\n"
      "  `id` bigint(20) NOT NULL AUTO_INCREMENT,\n"
      "  `x` int(11) DEFAULT NULL,\n"
      "  PRIMARY KEY (`tenant`,`id`),\n"
      "  KEY `by_id` (`id`,`x`),\n"
      "  KEY `by_x` (`x`,`id`)\n"
      ") ENGINE=InnoDB AUTO_INCREMENT=7";
  auto got = DeferrableIndexes(t);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].name, "by_x");
  EXPECT_EQ(WithoutDeferrableIndexes(t),
            "CREATE TABLE `t` (\n"
            "  `tenant` int(11) NOT NULL,\n"
            "  `id` bigint(20) NOT NULL AUTO_INCREMENT,\n"
            "  `x` int(11) DEFAULT NULL,\n"
            "  PRIMARY KEY (`tenant`,`id`),\n"
            "  KEY `by_id` (`id`,`x`)\n"
            ") ENGINE=InnoDB AUTO_INCREMENT=7");
  EXPECT_FALSE(ReferencesOtherTables(t));
}

}  // namespace
}  // namespace binrelay::apply
