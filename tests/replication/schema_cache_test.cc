#include "replication/schema_cache.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "protocol/charset.h"
#include "protocol/column_type.h"

namespace binrelay::replication {
namespace {

TEST(ParseEnumMembersTest, HandlesQuotesAndCommasInMembers) {
  EXPECT_EQ(ParseEnumMembers("enum('a','b''c','d,e')"),
            (std::vector<std::string>{"a", "b'c", "d,e"}));
  EXPECT_EQ(ParseEnumMembers("set('x')"), (std::vector<std::string>{"x"}));
  EXPECT_TRUE(ParseEnumMembers("int(11)").empty());
}

TEST(SqlQuoteTest, EscapesQuoteAndBackslash) {
  EXPECT_EQ(SqlQuote("a'b\\c"), "'a''b\\\\c'");
}

class FakeSchemaSource : public SqlSource {
 public:
  std::vector<SqlRow> columns;
  std::vector<SqlRow> pk;
  int queries = 0;
  absl::StatusOr<std::vector<SqlRow>> Query(std::string_view sql) override {
    ++queries;
    return absl::StrContains(std::string(sql), "KEY_COLUMN_USAGE") ? pk : columns;
  }
  std::string Peer() const override { return "src:3306"; }
};

protocol::TableDef TwoColumnTable() {
  protocol::TableDef def;
  def.db = "shop";
  def.table = "orders";
  def.columns.resize(2);
  def.columns[0].type = protocol::kTypeLong;
  def.columns[1].type = protocol::kTypeVarchar;
  return def;
}

TEST(SchemaCacheTest, FillsNamesSignednessCollationAndKeyOnceAndCaches) {
  FakeSchemaSource src;
  src.columns = {{"id", "int(10) unsigned", std::nullopt, std::nullopt, "int", std::nullopt, std::nullopt},
                 {"note", "varchar(20)", "8", "20", "varchar", std::nullopt, "latin1"}};
  src.pk = {{"id"}};
  SchemaCache cache(&src);
  protocol::TableDef def = TwoColumnTable();
  ASSERT_TRUE(cache.Enrich(&def).ok());
  EXPECT_EQ(def.columns[0].name, "id");
  EXPECT_TRUE(def.columns[0].is_unsigned);
  EXPECT_EQ(def.columns[1].collation, 8u);
  EXPECT_EQ(def.primary_key, (std::vector<uint32_t>{0}));
  protocol::TableDef again = TwoColumnTable();
  ASSERT_TRUE(cache.Enrich(&again).ok());
  EXPECT_EQ(cache.lookups(), 1u);  // second TABLE_MAP served from cache
}

// Silently pairing values with the wrong names would corrupt every row.
TEST(SchemaCacheTest, ColumnCountMismatchIsAnErrorNamingTheTable) {
  FakeSchemaSource src;
  src.columns = {{"id", "int(11)", std::nullopt, std::nullopt, "int", std::nullopt, std::nullopt}};
  SchemaCache cache(&src);
  protocol::TableDef def = TwoColumnTable();
  absl::Status s = cache.Enrich(&def);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "shop.orders"));
  EXPECT_EQ(cache.lookups(), 1u);
}

TEST(SchemaCacheTest, InvalidateForcesReload) {
  FakeSchemaSource src;
  src.columns = {{"id", "int(11)", std::nullopt, std::nullopt, "int", std::nullopt, std::nullopt},
                 {"n", "varchar(2)", "45", "8", "varchar", std::nullopt, "latin1"}};
  SchemaCache cache(&src);
  protocol::TableDef def = TwoColumnTable();
  ASSERT_TRUE(cache.Enrich(&def).ok());
  cache.Invalidate("shop", "orders");
  protocol::TableDef again = TwoColumnTable();
  ASSERT_TRUE(cache.Enrich(&again).ok());
  EXPECT_EQ(cache.lookups(), 2u);
}

// MariaDB 10.10+ lists utf8mb4_uca1400_ai_ci in COLUMNS but only
// uca1400_ai_ci in COLLATIONS, so the join yields no id: the charset name
// must stand in. Without it the column read as binary and tail printed
// base64 for every text value of MariaDB 11's default collation.
TEST(SchemaCacheTest, CollationMissingFromTheJoinFallsBackToTheCharset) {
  FakeSchemaSource src;
  src.columns = {{"id", "int(11)", std::nullopt, std::nullopt, "int", std::nullopt, std::nullopt},
                 {"n", "varchar(2)", std::nullopt, "8", "varchar", std::nullopt, "utf8mb4"}};
  SchemaCache cache(&src);
  protocol::TableDef def = TwoColumnTable();
  ASSERT_TRUE(cache.Enrich(&def).ok());
  EXPECT_EQ(protocol::CharsetForCollation(def.columns[1].collation), protocol::Charset::kUtf8);
  EXPECT_NE(def.columns[1].collation, protocol::kBinaryCollation);
}

// MariaDB's UUID/INET6/INET4 are BINARY(16)/BINARY(4) in the binlog; the
// schema's DATA_TYPE marks them, by position for a table without names and
// by name for one whose names came from binlog_row_metadata=FULL.
TEST(SchemaCacheTest, MarksUuidAndInetColumnsByPositionAndByName) {
  FakeSchemaSource src;
  src.columns = {{"id", "int(11)", std::nullopt, std::nullopt, "int", std::nullopt, std::nullopt},
                 {"u", "uuid", std::nullopt, std::nullopt, "uuid", std::nullopt, std::nullopt}};
  SchemaCache cache(&src);
  protocol::TableDef def = TwoColumnTable();
  def.columns[1].type = protocol::kTypeString;
  def.columns[1].meta = 16;
  def.columns[1].collation = protocol::kBinaryCollation;
  EXPECT_TRUE(SchemaCache::MayHoldFixedBinary(def));
  ASSERT_TRUE(cache.Enrich(&def).ok());
  EXPECT_EQ(def.columns[1].fixed_binary, protocol::FixedBinaryType::kUuid);

  protocol::TableDef named = TwoColumnTable();
  named.columns[0].name = "id";
  named.columns[1].name = "u";
  named.columns[1].type = protocol::kTypeString;
  named.columns[1].meta = 16;
  ASSERT_TRUE(cache.MarkFixedBinary(&named).ok());
  EXPECT_EQ(named.columns[1].fixed_binary, protocol::FixedBinaryType::kUuid);
  EXPECT_EQ(named.columns[0].fixed_binary, protocol::FixedBinaryType::kNone);

  // A text column or a BINARY of another length never needs the lookup.
  protocol::TableDef plain = TwoColumnTable();
  EXPECT_FALSE(SchemaCache::MayHoldFixedBinary(plain));
}

TEST(SchemaCacheTest, NoSourceLeavesTableUntouched) {
  SchemaCache cache(nullptr);
  protocol::TableDef def = TwoColumnTable();
  ASSERT_TRUE(cache.Enrich(&def).ok());
  EXPECT_TRUE(def.columns[0].name.empty());
}

}  // namespace
}  // namespace binrelay::replication
