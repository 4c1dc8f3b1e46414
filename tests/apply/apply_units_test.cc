// Unit tests of the apply path's pure pieces: key encoding, buffered maps,
// SQL literals, DDL table extraction, shape checks and statement building.

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "apply/apply_table.h"
#include "apply/ddl_tables.h"
#include "apply/move_phase.h"
#include "apply/pipeline_state.h"
#include "apply/range_checksum.h"
#include "apply/row_key.h"
#include "apply/sql_literal.h"
#include "apply/table_buffer.h"
#include "apply/table_shape.h"
#include "apply/target_session.h"
#include "apply/xa_holds.h"
#include "protocol/byte_cursor.h"
#include "protocol/column_type.h"
#include "protocol/value.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::apply {
namespace {

protocol::ValueView Text(std::string_view s) {
  protocol::ValueView v;
  v.kind = protocol::ValueKind::kText;
  v.bytes = s;
  return v;
}

// Guards: key components that concatenate ambiguously (the classic
// ("a-b","c") vs ("a","b-c")), and integers of different signs colliding.
TEST(RowKeyTest, EncodingIsInjectiveAcrossComponentBoundaries) {
  auto key = [](std::vector<std::string_view> parts) {
    std::string out;
    for (auto p : parts) {
      protocol::ValueView v = Text(p);
      AppendKeyComponent(&v, &out);
    }
    return out;
  };
  EXPECT_NE(key({"a-b", "c"}), key({"a", "b-c"}));
  EXPECT_NE(key({"ab", ""}), key({"a", "b"}));
  EXPECT_NE(key({"", "ab"}), key({"ab", ""}));
  // Components that contain the tag byte itself: without a length prefix
  // "as"+"b" and "a"+"sb" encode alike (found by a mutant that dropped it).
  EXPECT_NE(key({"as", "b"}), key({"a", "sb"}));
  EXPECT_EQ(key({"x", "y"}), key({"x", "y"}));
  protocol::ValueView minus_one;
  minus_one.kind = protocol::ValueKind::kSigned;
  minus_one.i = -1;
  protocol::ValueView max_unsigned;
  max_unsigned.kind = protocol::ValueKind::kUnsigned;
  max_unsigned.u = ~0ull;
  std::string a, b, n;
  AppendKeyComponent(&minus_one, &a);
  AppendKeyComponent(&max_unsigned, &b);
  AppendKeyComponent(nullptr, &n);
  EXPECT_NE(a, b);
  EXPECT_NE(n, a);
}

// Guards the key encoder's direct read of an integer first column: a width,
// sign extension or unsigned flag that differs from the ValueView route
// (AppendKeyComponent) would give one row two keys across code paths, or
// two rows one key.
TEST(KeyEncoderTest, IntegerFirstColumnKeysMatchTheDecodedValue) {
  struct Width {
    uint8_t type;
    size_t bytes;
  };
  const Width widths[] = {{protocol::kTypeTiny, 1}, {protocol::kTypeShort, 2},
                          {protocol::kTypeInt24, 3}, {protocol::kTypeLong, 4},
                          {protocol::kTypeLongLong, 8}};
  int checked = 0;
  for (const Width& w : widths) {
    for (bool is_unsigned : {false, true}) {
      protocol::TableDef def;
      def.columns.resize(2);
      def.columns[0].type = w.type;
      def.columns[0].is_unsigned = is_unsigned;
      def.columns[1].type = protocol::kTypeLong;
      const uint64_t top = w.bytes == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * w.bytes)) - 1;
      for (uint64_t raw : {uint64_t{0}, uint64_t{1}, top, top >> 1, (top >> 1) + 1, uint64_t{0x5A}}) {
        std::string image(1, '\0');
        for (size_t i = 0; i < w.bytes; ++i) image.push_back(static_cast<char>(raw >> (8 * i)));
        image.append("\x07\0\0\0", 4);
        protocol::ByteCursor c(std::string_view(image).substr(1));
        protocol::ValueView v;
        std::string scratch, want, got;
        BR_ASSERT_OK(protocol::DecodeValue(c, def.columns[0], &scratch, &v));
        AppendKeyComponent(&v, &want);
        KeyEncoder keys;
        BR_ASSERT_OK(keys.Encode(image, def, {0}, &got));
        EXPECT_EQ(got, want) << "type " << int{w.type} << (is_unsigned ? " unsigned" : "")
                             << " raw " << raw;
        ++checked;
      }
      const std::string null_image("\x01\x07\0\0\0", 5);  // a NULL has no bytes
      std::string got;
      KeyEncoder keys;
      BR_ASSERT_OK(keys.Encode(null_image, def, {0}, &got));
      EXPECT_EQ(got, "N");
    }
  }
  EXPECT_EQ(checked, 5 * 2 * 6);
}

// Guards: a later change not replacing an earlier one (last write wins),
// a delete after an upsert kept as an upsert, byte counts drifting (the
// soft limit then over- or under-counts: an image that outgrows its slot
// leaves the old copy in the arena, still counted), and the FIFO collapsing.
TEST(TableBufferTest, KeyedCollapsesToTheLastChangeAndCountsBytes) {
  TableBuffer b(/*keyed=*/true);
  b.Upsert("k1", "image-1");
  b.Upsert("k1", "image-1b-longer");
  b.Upsert("k2", "i2");
  b.Delete("k2", "before-2");
  EXPECT_EQ(b.entries(), 2u);
  EXPECT_EQ(b.changes(), 4u);
  EXPECT_EQ(b.bytes(), 2 * TableBuffer::kEntryOverhead + 2 + 7 + 15 + 2 + 2 + 8);
  DrainedTable d = b.Take();
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.bytes(), 0u);
  ASSERT_EQ(d.rows.size(), 2u);
  int upserts = 0, deletes = 0;
  for (const auto& r : d.rows) {
    if (r.is_delete) {
      ++deletes;
      EXPECT_EQ(r.image, "before-2");
    } else {
      ++upserts;
      EXPECT_EQ(r.image, "image-1b-longer");
    }
  }
  EXPECT_EQ(upserts, 1);
  EXPECT_EQ(deletes, 1);

  TableBuffer fifo(/*keyed=*/false);
  fifo.Upsert("", "A");
  fifo.Delete("", "A");
  fifo.Upsert("", "a");
  DrainedTable f = fifo.Take();
  ASSERT_EQ(f.rows.size(), 3u);
  EXPECT_FALSE(f.rows[0].is_delete);
  EXPECT_TRUE(f.rows[1].is_delete);
  EXPECT_EQ(f.rows[2].image, "a");
}

// Guards the buffer's two indexes (an ascending run found by binary search,
// the rest hashed): a key found in neither and buffered twice, a key in
// the run missed after the run was broken, first-change order lost, or the
// last image not winning. Random runs of ascending, repeated and smaller
// keys against a plain model, over several drains of one buffer.
TEST(TableBufferTest, AscendingRunsAndHashedKeysCollapseLikeAModel) {
  std::mt19937 rng(8);
  TableBuffer b(/*keyed=*/true);
  for (int drain = 0; drain < 20; ++drain) {
    std::vector<std::string> order;                  // first-change order
    std::map<std::string, std::pair<bool, std::string>> last;
    int next = static_cast<int>(rng() % 50);
    const int changes = 1 + static_cast<int>(rng() % 400);
    for (int i = 0; i < changes; ++i) {
      int k;
      switch (rng() % 4) {
        case 0:
        case 1:
          k = next++;  // ascending
          break;
        case 2:
          k = static_cast<int>(rng() % (next + 1));  // anything seen so far, or about
          break;
        default:
          k = next + static_cast<int>(rng() % 20);  // ahead, leaving gaps
          break;
      }
      char key[4];
      for (int j = 0; j < 4; ++j) key[j] = static_cast<char>(k >> (24 - 8 * j));  // big-endian
      const std::string ks(key, 4);
      const bool del = rng() % 5 == 0;
      const std::string image = absl::StrCat("img-", i, std::string(rng() % 8, '+'));
      if (!last.count(ks)) order.push_back(ks);
      last[ks] = {del, image};
      if (del) {
        b.Delete(ks, image);
      } else {
        b.Upsert(ks, image);
      }
    }
    ASSERT_EQ(b.entries(), order.size()) << "drain " << drain;
    DrainedTable d = b.Take();
    ASSERT_EQ(d.rows.size(), order.size());
    for (size_t i = 0; i < order.size(); ++i) {
      EXPECT_EQ(d.rows[i].is_delete, last[order[i]].first) << "drain " << drain << " row " << i;
      EXPECT_EQ(d.rows[i].image, last[order[i]].second) << "drain " << drain << " row " << i;
    }
  }
}

// Guards: an in-place rewrite of a hot key growing the count (a row
// updated a million times must not look like a million rows), and a rewrite
// that spills into its neighbour's bytes in the arena.
TEST(TableBufferTest, RewriteThatFitsReusesItsBytesWithoutGrowing) {
  TableBuffer b(/*keyed=*/true);
  b.Upsert("k1", "round-10");
  b.Upsert("k2", "neighbour");
  const size_t before = b.bytes();
  for (int i = 0; i < 1000; ++i) b.Upsert("k1", i % 2 ? "round-9" : "round-11");
  b.Delete("k1", "gone-999");
  EXPECT_EQ(b.bytes(), before);
  DrainedTable d = b.Take();
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_TRUE(d.rows[0].is_delete);
  EXPECT_EQ(d.rows[0].image, "gone-999");
  EXPECT_EQ(d.rows[1].image, "neighbour");
  EXPECT_EQ(d.arena.used(), 8u + 9u + 2u + 2u);  // two images and their keys
}

// Guards: images sharing a chunk overwriting each other, a large image
// stranding a standard chunk, and the pool keeping more chunks than its
// bound (memory the soft limit does not see).
TEST(ImageArenaTest, ImagesStayPutAndChunksReturnToABoundedPool) {
  ImageArena::Pool pool(2 * ImageArena::kChunkBytes);
  std::vector<std::string_view> views;
  {
    ImageArena a(&pool);
    std::string small(1000, 's');
    for (int i = 0; i < 3000; ++i) {  // about 3 standard chunks
      small[0] = static_cast<char>('a' + i % 26);
      char* p = a.Allocate(small.size());
      std::memcpy(p, small.data(), small.size());
      views.emplace_back(p, small.size());
    }
    std::string big(ImageArena::kChunkBytes, 'B');
    char* p = a.Allocate(big.size());
    std::memcpy(p, big.data(), big.size());
    char* after = a.Allocate(1000);  // still in the current standard chunk
    EXPECT_EQ(after, views.back().data() + 1000);
    for (int i = 0; i < 3000; ++i) {
      ASSERT_EQ(views[i][0], static_cast<char>('a' + i % 26)) << i;
      ASSERT_EQ(views[i].substr(1), std::string(999, 's')) << i;
    }
    EXPECT_EQ(std::string_view(p, big.size()), big);
    EXPECT_EQ(a.used(), 3001 * 1000 + ImageArena::kChunkBytes);
    EXPECT_EQ(pool.free_chunks(), 0u);
  }
  EXPECT_EQ(pool.free_chunks(), 2u) << "three standard chunks, a bound of two, none of the big one";
  // A new arena starts small (a buffer with a few rows of each of many
  // tables must not hold a megabyte per table), then takes pooled chunks.
  ImageArena again(&pool);
  again.Allocate(10);
  EXPECT_EQ(pool.free_chunks(), 2u) << "a first small chunk, not a pooled megabyte";
  for (int i = 0; i < 4; ++i) again.Allocate(ImageArena::kChunkBytes / 4);  // 256K, 512K, then 1M
  EXPECT_EQ(pool.free_chunks(), 1u) << "standard chunks come from the pool first";
}

// Guards the move's checksum SQL per server: MySQL 8.0 and later XOR
// binary strings (the cheaper form), while MariaDB and MySQL 5.7 only XOR
// integers; a version that cannot be read keeps the integer form, which
// every server runs.
TEST(RangeChecksumTest, BinaryXorOnlyOnMySqlFrom8) {
  using Server = RangeChecksum::Server;
  EXPECT_EQ(RangeChecksum::ServerFor("9.7.4-2"), Server::kMySql);
  EXPECT_EQ(RangeChecksum::ServerFor("8.0.36"), Server::kMySql);
  EXPECT_EQ(RangeChecksum::ServerFor("8.4.3-log"), Server::kMySql);
  EXPECT_EQ(RangeChecksum::ServerFor("5.7.44-log"), Server::kMariaDb);
  EXPECT_EQ(RangeChecksum::ServerFor("10.11.6-MariaDB-0+deb12u1-log"), Server::kMariaDb);
  EXPECT_EQ(RangeChecksum::ServerFor("11.8.3-MariaDB"), Server::kMariaDb);
  EXPECT_EQ(RangeChecksum::ServerFor("5.5.5-10.5.23-MariaDB"), Server::kMariaDb);
  EXPECT_EQ(RangeChecksum::ServerFor(""), Server::kMariaDb);
}

// Guards: text through a lossy path (it must be hex with the charset
// introducer), NULL printed as a string, floats that do not round-trip,
// identifiers with backticks unescaped.
TEST(SqlLiteralTest, ValuesAreWrittenExactly) {
  std::string out;
  protocol::ValueView t = Text(std::string_view("\xE9'\\", 3));
  AppendSqlLiteral(&t, "latin1", &out);
  EXPECT_EQ(out, "_latin1'\xE9\\'\\\\'") << "introducer, quote and backslash escaped";
  out.clear();
  // sjis: 0x95 0x5C is one character whose second byte is a backslash.
  protocol::ValueView sjis = Text(std::string_view("\x95\x5C", 2));
  AppendSqlLiteral(&sjis, "sjis", &out);
  EXPECT_EQ(out, "_sjis'\x95\\\\'") << "escaped byte-wise: the client charset is utf8mb4";
  out.clear();
  protocol::ValueView bin = Text(std::string_view("\0\1'", 3));
  bin.kind = protocol::ValueKind::kBinary;
  AppendSqlLiteral(&bin, "", &out, LiteralStyle::kBinaryString);
  EXPECT_EQ(out, std::string("_binary'\\0\x01\\''")) << "NUL as \\0";
  out.clear();
  AppendSqlLiteral(&bin, "", &out);  // BIT, GEOMETRY: hex
  EXPECT_EQ(out, "X'000127'");
  out.clear();
  EXPECT_EQ(ColumnStyle("longblob"), LiteralStyle::kBinaryString);
  EXPECT_EQ(ColumnStyle("varbinary"), LiteralStyle::kBinaryString);
  EXPECT_EQ(ColumnStyle("bit"), LiteralStyle::kDefault);
  EXPECT_EQ(ColumnStyle("decimal"), LiteralStyle::kExactNumber);
  AppendSqlLiteral(nullptr, "utf8mb4", &out);
  EXPECT_EQ(out, "NULL");
  out.clear();
  protocol::ValueView d;
  d.kind = protocol::ValueKind::kDouble;
  d.d = 0.1;
  AppendSqlLiteral(&d, "", &out);
  EXPECT_EQ(out, "0.1");
  out.clear();
  protocol::ValueView f;
  f.kind = protocol::ValueKind::kFloat;
  f.d = static_cast<double>(1.1f);
  AppendSqlLiteral(&f, "", &out);
  // The float's exact value: equal to the stored FLOAT in a WHERE, and
  // rounded back to the same float on insert.
  EXPECT_EQ(out, "1.100000023841858");
  EXPECT_EQ(static_cast<float>(std::strtod(out.c_str(), nullptr)), 1.1f);
  out.clear();
  protocol::ValueView neg_zero;
  neg_zero.kind = protocol::ValueKind::kDouble;
  neg_zero.d = -0.0;
  AppendSqlLiteral(&neg_zero, "", &out);
  EXPECT_EQ(out, "-0e0") << "the integer literal -0 would store +0";
  out.clear();
  protocol::ValueView dec;
  dec.kind = protocol::ValueKind::kFormatted;
  dec.bytes = "-0.01";
  AppendSqlLiteral(&dec, "", &out);
  EXPECT_EQ(out, "'-0.01'") << "temporal text is quoted";
  out.clear();
  AppendSqlLiteral(&dec, "", &out, LiteralStyle::kExactNumber);
  EXPECT_EQ(out, "-0.01") << "DECIMAL unquoted: compared as decimal, not double";
  out.clear();
  AppendIdentifier("we`ird", &out);
  EXPECT_EQ(out, "`we``ird`");
  out.clear();
  AppendQuotedString("it's \\", &out);
  EXPECT_EQ(out, "'it\\'s \\\\'");
}

// Guards: a DDL on a subscribed table going unnoticed (wrong default
// database, quoted or qualified names, RENAME's second name, comments),
// and foreign-key-only ALTERs stopping a pipeline for nothing.
TEST(DdlTablesTest, FindsTheTablesAStatementChanges) {
  auto names = [](std::string_view db, std::string_view q) {
    std::vector<std::string> out;
    for (const auto& t : DdlTables(db, q)) out.push_back(t.db + "." + t.table);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names("app", "ALTER TABLE t ADD COLUMN c INT"), V{"app.t"});
  EXPECT_EQ(names("app", "alter table `other`.`t 2` drop column c"), V{"other.t 2"});
  EXPECT_EQ(names("app", "/* x */ ALTER ONLINE TABLE t RENAME TO u"), (V{"app.t", "app.u"}));
  EXPECT_EQ(names("app", "DROP TABLE IF EXISTS a, b.c /* generated by server */"),
            (V{"app.a", "b.c"}));
  EXPECT_EQ(names("app", "RENAME TABLE a TO b, x.c TO x.d"), (V{"app.a", "app.b", "x.c", "x.d"}));
  EXPECT_EQ(names("app", "TRUNCATE TABLE t"), V{"app.t"});
  EXPECT_EQ(names("app", "TRUNCATE t"), V{"app.t"});
  EXPECT_EQ(names("app", "CREATE TABLE IF NOT EXISTS n (id INT)"), V{"app.n"});
  EXPECT_EQ(names("app", "CREATE UNIQUE INDEX i ON t (c)"), V{"app.t"});
  EXPECT_EQ(names("app", "ALTER TABLE t ADD CONSTRAINT fk FOREIGN KEY (p) REFERENCES q (id)"),
            V{});
  EXPECT_EQ(names("app", "ALTER TABLE t DROP FOREIGN KEY fk, ADD FOREIGN KEY (p) REFERENCES q(id)"),
            V{});
  EXPECT_EQ(names("app", "ALTER TABLE t DROP FOREIGN KEY fk, ADD COLUMN z INT"), V{"app.t"});
  EXPECT_EQ(names("app", "ALTER TABLE t ADD FOREIGN KEY (p) REFERENCES q (id) ON DELETE RESTRICT "
                         "ON UPDATE NO ACTION"),
            V{});
  EXPECT_EQ(names("app", "GRANT SELECT ON t TO u"), V{});
  EXPECT_EQ(names("app", "CREATE DATABASE x"), V{});
}

// Guards: a foreign key whose referential action the server carries out
// without logging it (CASCADE, SET NULL, SET DEFAULT) added to a subscribed
// table by a later ALTER passing as "no change": the target would then keep
// rows the source's cascades removed, silently.
TEST(DdlTablesTest, ForeignKeyWithAnUnloggedActionYieldsItsTable) {
  auto action = [](std::string_view q) -> std::string {
    std::vector<DdlTarget> out = DdlTables("app", q);
    if (out.size() != 1) return absl::StrCat(out.size(), " tables");
    EXPECT_FALSE(out[0].redefines) << q;
    return absl::StrCat(out[0].db, ".", out[0].table, " ", out[0].unlogged_action);
  };
  EXPECT_EQ(action("ALTER TABLE t ADD CONSTRAINT fk FOREIGN KEY (p) REFERENCES q (id) "
                   "ON DELETE CASCADE"),
            "app.t ON DELETE CASCADE");
  EXPECT_EQ(action("alter table `x`.`t` add foreign key (p) references q (id) on delete restrict "
                   "on update set null"),
            "x.t ON UPDATE SET NULL");
  EXPECT_EQ(action("ALTER TABLE t DROP FOREIGN KEY old, ADD FOREIGN KEY (p) REFERENCES q (id) "
                   "ON UPDATE SET DEFAULT"),
            "app.t ON UPDATE SET DEFAULT");
  EXPECT_EQ(action("ALTER TABLE t ADD FOREIGN KEY (a) REFERENCES q (id), ADD FOREIGN KEY (b) "
                   "REFERENCES r (id) ON DELETE CASCADE"),
            "app.t ON DELETE CASCADE");
  // With another change the table is redefined anyway (the usual DDL stop).
  std::vector<DdlTarget> mixed =
      DdlTables("app", "ALTER TABLE t ADD COLUMN z INT, ADD FOREIGN KEY (p) REFERENCES q (id) "
                       "ON DELETE CASCADE");
  ASSERT_EQ(mixed.size(), 1u);
  EXPECT_TRUE(mixed[0].redefines);
}

// Guards: the start's check missing a cascading key in the text SHOW CREATE
// TABLE prints (MariaDB and MySQL forms), or taking a RESTRICT one for it.
TEST(DdlTablesTest, UnloggedForeignKeysOfShowCreateTable) {
  const std::string maria =
      "CREATE TABLE `child` (\n  `id` int(11) NOT NULL,\n  `p` int(11) DEFAULT NULL,\n"
      "  `q` int(11) DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  KEY `p` (`p`),\n"
      "  CONSTRAINT `keep` FOREIGN KEY (`q`) REFERENCES `other` (`id`),\n"
      "  CONSTRAINT `child_parent` FOREIGN KEY (`p`) REFERENCES `parent` (`id`) ON DELETE "
      "CASCADE\n) ENGINE=InnoDB DEFAULT CHARSET=latin1 COMMENT='ON DELETE CASCADE'";
  std::vector<UnloggedForeignKey> keys = UnloggedForeignKeys(maria);
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0].name, "child_parent");
  EXPECT_EQ(keys[0].action, "ON DELETE CASCADE");
  const std::string mysql =
      "CREATE TABLE `c` (\n  `id` int NOT NULL,\n  `p` int DEFAULT NULL,\n  PRIMARY KEY "
      "(`id`),\n  CONSTRAINT `c_ibfk_1` FOREIGN KEY (`p`) REFERENCES `parent` (`id`) ON DELETE "
      "RESTRICT ON UPDATE SET NULL\n) ENGINE=InnoDB";
  keys = UnloggedForeignKeys(mysql);
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0].name, "c_ibfk_1");
  EXPECT_EQ(keys[0].action, "ON UPDATE SET NULL");
  EXPECT_TRUE(UnloggedForeignKeys("CREATE TABLE `t` (\n  `id` int NOT NULL\n) ENGINE=InnoDB")
                  .empty());
}

TableShape Shape(std::vector<ShapeColumn> cols, std::vector<uint32_t> pk) {
  TableShape s;
  s.db = "app";
  s.table = "t";
  s.columns = std::move(cols);
  s.primary_key = std::move(pk);
  return s;
}

// Guards: a target of another shape accepted (rows would land in the wrong
// columns or lose bytes), and display widths refused for nothing.
TEST(TableShapeTest, TargetMustMatchColumnsTypesCharsetsAndKey) {
  TableShape src = Shape({{"id", "int", "int", "", "", false},
                          {"name", "varchar", "varchar(20)", "utf8mb4", "utf8mb4_general_ci", false}},
                         {0});
  EXPECT_EQ(NormaliseColumnType("INT(11) UNSIGNED", "int"), "int unsigned");
  EXPECT_EQ(NormaliseColumnType("varchar(20)", "varchar"), "varchar(20)");
  BR_EXPECT_OK(CheckTargetShape(src, src, "target"));
  TableShape t = src;
  t.columns[1].column_type = "varchar(30)";
  absl::Status s = CheckTargetShape(src, t, "target x:1 table app.t");
  EXPECT_TRUE(absl::IsFailedPrecondition(s));
  EXPECT_NE(s.message().find("`name` is varchar(20) on the source but varchar(30)"),
            std::string::npos) << s;
  t = src;
  t.columns[1].charset = "latin1";
  EXPECT_NE(CheckTargetShape(src, t, "t").message().find("character set"), std::string::npos);
  t = src;
  t.columns.pop_back();
  EXPECT_NE(CheckTargetShape(src, t, "t").message().find("lacks column 2 `name`"),
            std::string::npos);
  t = src;
  t.primary_key = {1};
  EXPECT_NE(CheckTargetShape(src, t, "t").message().find("primary key"), std::string::npos);
  t = src;
  t.columns[1].collation = "utf8mb4_bin";
  EXPECT_NE(CheckTargetShape(src, t, "t").message().find("collation"), std::string::npos);
  t = src;
  t.unique_keys = {{1}};
  EXPECT_NE(CheckTargetShape(src, t, "t").message().find("UNIQUE indexes differ"),
            std::string::npos);
  TableShape nopk = src;
  nopk.primary_key.clear();
  EXPECT_NE(CheckTargetShape(nopk, nopk, "t").message().find("has no primary key"),
            std::string::npos);
  EXPECT_TRUE(KeyIsMemComparable(src));
  EXPECT_FALSE(KeyIsMemComparable(Shape(src.columns, {1})));  // a collated VARCHAR
  TableShape bin = Shape({{"k", "varbinary", "varbinary(8)", "", "", false}}, {0});
  EXPECT_TRUE(KeyIsMemComparable(bin));
  TableShape dbl = Shape({{"k", "double", "double", "", "", false}}, {0});
  EXPECT_FALSE(KeyIsMemComparable(dbl));
}

// Guards: a MariaDB table and the MySQL table made from its definition
// refused for how each server spells the same type (year(4)/year, utf8/
// utf8mb3, MariaDB's JSON as a checked LONGTEXT), and a real difference let
// through because of it.
TEST(TableShapeTest, FlavoursSpellingTheSameTypeAgreeAndRealDifferencesDoNot) {
  // As MariaDB 10.5 reports it, then as MySQL 9.7 does.
  auto year = [](const char* column_type) {
    return ShapeColumn{"y", "year", NormaliseColumnType(column_type, "year"), "", "", false};
  };
  TableShape mariadb = Shape({{"id", "int", NormaliseColumnType("int(11)", "int"), "", "", false},
                              year("year(4)"),
                              {"name", "varchar", "varchar(20)", "utf8", "utf8_general_ci", false},
                              {"doc", "longtext", "longtext", "utf8mb4", "utf8mb4_bin", false}},
                             {0});
  mariadb.columns[3].json_checked = true;
  TableShape mysql = Shape({{"id", "int", NormaliseColumnType("int", "int"), "", "", false},
                            year("year"),
                            {"name", "varchar", "varchar(20)", "utf8mb3", "utf8mb3_general_ci", false},
                            {"doc", "json", "json", "", "", false}},
                           {0});
  BR_EXPECT_OK(CheckTargetShape(mariadb, mysql, "target"));
  BR_EXPECT_OK(CheckTargetShape(mysql, mariadb, "target"));
  // A LONGTEXT without MariaDB's json_valid CHECK takes any text: not JSON.
  TableShape unchecked = mariadb;
  unchecked.columns[3].json_checked = false;
  absl::Status s = CheckTargetShape(mysql, unchecked, "target x:1 table app.t");
  EXPECT_NE(s.message().find("`doc` is json on the source but longtext on the target"),
            std::string::npos) << s;
  // Another collation is a real difference, spelled either way.
  TableShape other = mysql;
  other.columns[2].collation = "utf8mb3_bin";
  s = CheckTargetShape(mariadb, other, "t");
  EXPECT_NE(s.message().find("collation 'utf8_general_ci' on the source but 'utf8mb3_bin'"),
            std::string::npos) << s;
  // So is a wider type.
  other = mysql;
  other.columns[0].column_type = "bigint";
  s = CheckTargetShape(mariadb, other, "t");
  EXPECT_NE(s.message().find("`id` is int on the source but bigint on the target"),
            std::string::npos) << s;
}


// A buffered upsert of `image`. BufferedRow only views its image (the
// buffer's arena owns the bytes), so the test keeps them here.
BufferedRow Row(std::string image) {
  static std::deque<std::string>* kept = new std::deque<std::string>;
  kept->push_back(std::move(image));
  return BufferedRow{false, kept->back(), kept->back().size()};
}

// A full row image of (INT id, VARCHAR(20) name): NULL bitmap, then values.
std::string Image(int32_t id, std::optional<std::string> name) {
  std::string img;
  img.push_back(name ? 0 : 2);
  for (int i = 0; i < 4; ++i) img.push_back(static_cast<char>((id >> (8 * i)) & 0xFF));
  if (name) {
    img.push_back(static_cast<char>(name->size()));
    img += *name;
  }
  return img;
}

ApplyTable TwoColumnTable(bool generated_second = false) {
  TableShape s = Shape({{"id", "int", "int", "", "", false},
                        {"name", "varchar", "varchar(20)", "utf8mb4", "utf8mb4_general_ci",
                         generated_second}},
                       {0});
  ApplyTable t = MakeApplyTable(s, s);
  protocol::TableDef map;
  map.db = "app";
  map.table = "t";
  map.columns.resize(2);
  map.columns[0].type = protocol::kTypeLong;
  map.columns[1].type = protocol::kTypeVarchar;
  map.columns[1].meta = 80;
  EXPECT_TRUE(MergeTableMap(map, &t).ok());
  return t;
}

// Guards: batches that ignore batch_rows or batch_bytes (one statement per
// drain, or a row split), generated columns written, deletes by the wrong
// column, and keys decoded with the wrong signedness.
TEST(ApplyTableTest, ReplaceAndDeleteBatchesFollowTheLimits) {
  ApplyTable t = TwoColumnTable();
  std::vector<BufferedRow> rows = {Row(Image(1, "a")), Row(Image(-2, std::nullopt)),
                                   Row(Image(3, "c"))};
  std::vector<const BufferedRow*> ptrs;
  for (auto& r : rows) ptrs.push_back(&r);
  std::vector<std::string> sqls;
  std::vector<size_t> counts;
  auto emit = [&](std::string_view sql, size_t n) {
    sqls.emplace_back(sql);
    counts.push_back(n);
    return absl::OkStatus();
  };
  BR_ASSERT_OK(BuildReplaces(t, ptrs.data(), ptrs.size(), 2, 1 << 20, emit));
  ASSERT_EQ(sqls.size(), 2u);
  EXPECT_EQ(sqls[0],
            "REPLACE INTO `app`.`t` (`id`,`name`) VALUES (1,_utf8mb4'a'),(-2,NULL)");
  EXPECT_EQ(counts[0], 2u);
  EXPECT_EQ(sqls[1], "REPLACE INTO `app`.`t` (`id`,`name`) VALUES (3,_utf8mb4'c')");
  sqls.clear();
  counts.clear();
  BR_ASSERT_OK(BuildReplaces(t, ptrs.data(), ptrs.size(), 1000, 10, emit));
  EXPECT_EQ(sqls.size(), 3u) << "every statement past batch_bytes ends after its first row";
  sqls.clear();
  BR_ASSERT_OK(BuildDeletes(t, ptrs.data(), ptrs.size(), 1000, 1 << 20, emit));
  ASSERT_EQ(sqls.size(), 1u);
  EXPECT_EQ(sqls[0], "DELETE FROM `app`.`t` WHERE `id` = 1 OR `id` = -2 OR `id` = 3");

  ApplyTable small = TwoColumnTable();
  small.max_statement_bytes = small.replace_head.size() + 20;
  sqls.clear();
  BR_ASSERT_OK(BuildReplaces(small, ptrs.data(), ptrs.size(), 1000, 1 << 20, emit));
  EXPECT_EQ(sqls.size(), 3u) << "max_allowed_packet caps statements below batch_bytes";
  std::vector<BufferedRow> huge = {Row(Image(9, std::string(60, 'x')))};
  const BufferedRow* huge_ptr = &huge[0];
  absl::Status too_big = BuildReplaces(small, &huge_ptr, 1, 10, 1 << 20, emit);
  EXPECT_TRUE(absl::IsFailedPrecondition(too_big)) << too_big;
  EXPECT_NE(too_big.message().find("max_allowed_packet"), std::string::npos);

  ApplyTable g = TwoColumnTable(/*generated_second=*/true);
  sqls.clear();
  BR_ASSERT_OK(BuildReplaces(g, ptrs.data(), 1, 10, 1 << 20, emit));
  EXPECT_EQ(sqls[0], "REPLACE INTO `app`.`t` (`id`) VALUES (1)");

  KeyEncoder keys;
  std::string k1, k2;
  BR_ASSERT_OK(keys.Encode(rows[0].image, t.def, t.def.primary_key, &k1));
  BR_ASSERT_OK(keys.Encode(Image(1, "other"), t.def, t.def.primary_key, &k2));
  EXPECT_EQ(k1, k2) << "the key is the primary key only";
  BR_ASSERT_OK(keys.Encode(rows[1].image, t.def, t.def.primary_key, &k2));
  EXPECT_NE(k1, k2);
}

// Guards the bulk path's batching and values: commands that ignore
// batch_rows, batch_bytes or max_allowed_packet, a row split across two
// commands or sent twice at a cut, generated columns given a parameter, and
// values sent as the wrong type (a signed id as unsigned, a string as text
// that the server would re-encode from character_set_client).
TEST(ApplyTableTest, BulkReplacesFollowTheLimitsAndSendBinaryValues) {
  ApplyTable t = TwoColumnTable();
  EXPECT_EQ(t.bulk_replace, "REPLACE INTO `app`.`t` (`id`,`name`) VALUES (?,?)");
  EXPECT_EQ(t.bulk_params, 2);
  std::vector<BufferedRow> rows = {Row(Image(1, "a")), Row(Image(-2, std::nullopt)),
                                   Row(Image(3, "c"))};
  std::vector<const BufferedRow*> ptrs;
  for (auto& r : rows) ptrs.push_back(&r);
  protocol::BulkExecuteBuilder bulk;
  std::vector<std::string> cmds;
  std::vector<size_t> counts;
  auto emit = [&](size_t n) {
    cmds.emplace_back(bulk.payload());
    counts.push_back(n);
    EXPECT_EQ(n, bulk.rows());
    return absl::OkStatus();
  };
  BR_ASSERT_OK(BuildBulkReplaces(t, ptrs.data(), ptrs.size(), 2, 1 << 20, &bulk, emit));
  ASSERT_EQ(counts, (std::vector<size_t>{2, 1}));
  auto b = [](std::initializer_list<int> v) {
    std::string s;
    for (int x : v) s.push_back(static_cast<char>(x));
    return s;
  };
  const std::string header = b({0xFA, 0, 0, 0, 0, 0x80, 0, 8, 0, 252, 0});
  EXPECT_EQ(cmds[0], header + b({0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 'a'}) +
                         b({0, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1}));
  EXPECT_EQ(cmds[1], header + b({0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 1, 'c'}));

  cmds.clear();
  counts.clear();
  BR_ASSERT_OK(BuildBulkReplaces(t, ptrs.data(), ptrs.size(), 1000, 20, &bulk, emit));
  EXPECT_EQ(counts, (std::vector<size_t>{1, 1, 1})) << "each command past batch_bytes holds one row";

  ApplyTable small = TwoColumnTable();
  small.max_statement_bytes = 34;  // the header (11) and the first two rows (12 + 10)
  cmds.clear();
  counts.clear();
  BR_ASSERT_OK(BuildBulkReplaces(small, ptrs.data(), ptrs.size(), 1000, 1 << 20, &bulk, emit));
  EXPECT_EQ(counts, (std::vector<size_t>{2, 1})) << "max_allowed_packet caps commands";
  std::vector<BufferedRow> huge = {Row(Image(9, std::string(60, 'x')))};
  const BufferedRow* huge_ptr = &huge[0];
  absl::Status too_big = BuildBulkReplaces(small, &huge_ptr, 1, 10, 1 << 20, &bulk, emit);
  EXPECT_TRUE(absl::IsFailedPrecondition(too_big)) << too_big;
  EXPECT_NE(too_big.message().find("max_allowed_packet"), std::string::npos);

  ApplyTable g = TwoColumnTable(/*generated_second=*/true);
  EXPECT_EQ(g.bulk_replace, "REPLACE INTO `app`.`t` (`id`) VALUES (?)");
  cmds.clear();
  BR_ASSERT_OK(BuildBulkReplaces(g, ptrs.data(), 1, 10, 1 << 20, &bulk, emit));
  EXPECT_EQ(cmds[0], b({0xFA, 0, 0, 0, 0, 0x80, 0, 8, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}));
}

// Guards the bulk writer's reading of images straight from their bytes:
// integer widths and sign extension (TINYINT -128, MEDIUMINT -8388608),
// unsigned flags (SMALLINT 65535, BIGINT 2^64-1), a VARCHAR whose length
// takes two bytes (more than 255 bytes of column), a generated column
// skipped between them, and a BLOB after it.
TEST(ApplyTableTest, BulkValuesReadStraightFromImagesKeepWidthsSignsAndLengths) {
  TableShape s = Shape({{"a", "tinyint", "tinyint", "", "", false},
                        {"b", "smallint", "smallint unsigned", "", "", false},
                        {"c", "mediumint", "mediumint", "", "", false},
                        {"d", "bigint", "bigint unsigned", "", "", false},
                        {"e", "varchar", "varchar(300)", "latin1", "latin1_swedish_ci", false},
                        {"f", "int", "int", "", "", true},
                        {"g", "blob", "blob", "", "", false}},
                       {0});
  ApplyTable t = MakeApplyTable(s, s);
  protocol::TableDef map;
  map.db = "app";
  map.table = "t";
  map.columns.resize(7);
  map.columns[0].type = protocol::kTypeTiny;
  map.columns[1].type = protocol::kTypeShort;
  map.columns[2].type = protocol::kTypeInt24;
  map.columns[3].type = protocol::kTypeLongLong;
  map.columns[4].type = protocol::kTypeVarchar;
  map.columns[4].meta = 300;
  map.columns[5].type = protocol::kTypeLong;
  map.columns[6].type = protocol::kTypeBlob;
  map.columns[6].meta = 2;
  BR_ASSERT_OK(MergeTableMap(map, &t));
  auto b = [](std::initializer_list<int> v) {
    std::string out;
    for (int x : v) out.push_back(static_cast<char>(x));
    return out;
  };
  const std::string text(270, 'v');
  std::string image = b({0});                       // no NULLs
  image += b({0x80});                               // a = -128
  image += b({0xFF, 0xFF});                         // b = 65535
  image += b({0x00, 0x00, 0x80});                   // c = -8388608
  image += std::string(8, '\xFF');                  // d = 2^64 - 1
  image += b({0x0E, 0x01}) + text;                  // e: 270 bytes, 2-byte length
  image += b({5, 0, 0, 0});                         // f (generated)
  image += b({4, 0}) + "blob";                      // g
  std::vector<BufferedRow> rows = {Row(image)};
  const BufferedRow* row = &rows[0];
  protocol::BulkExecuteBuilder bulk;
  std::string cmd;
  BR_ASSERT_OK(BuildBulkReplaces(t, &row, 1, 10, 1 << 20, &bulk, [&](size_t) {
    cmd = std::string(bulk.payload());
    return absl::OkStatus();
  }));
  std::string want = b({0xFA, 0, 0, 0, 0, 0x80, 0});
  want += b({8, 0, 8, 0x80, 8, 0, 8, 0x80, 252, 0, 252, 0});  // six parameters, not f
  want += b({0, 0x80, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF});
  want += b({0, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0});
  want += b({0, 0x00, 0x00, 0x80, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF});
  want += b({0}) + std::string(8, '\xFF');
  want += b({0, 0xFC, 0x0E, 0x01}) + text;
  want += b({0, 4}) + "blob";
  EXPECT_EQ(cmd, want);

  // A truncated image is refused, naming the table and the column.
  rows = {Row(image.substr(0, 20))};
  row = &rows[0];
  absl::Status cut = BuildBulkReplaces(t, &row, 1, 10, 1 << 20, &bulk,
                                       [](size_t) { return absl::OkStatus(); });
  EXPECT_FALSE(cut.ok());
  EXPECT_NE(cut.message().find("column 5 `e`"), std::string::npos) << cut;
}

}  // namespace
}  // namespace binrelay::apply

namespace binrelay::apply {
namespace {

// Image of (INT id, INT grp, INT seq), none NULL.
std::string IntImage(std::vector<int32_t> values) {
  std::string img(1, '\0');
  for (int32_t v : values) {
    for (int i = 0; i < 4; ++i) img.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
  return img;
}

// Guards: batches of a table with a UNIQUE (grp, seq) index that interleave
// index ranges (neighbouring batches would then run in one wave and take
// next-key locks on each other's entries), cuts inside a group that would
// fit, batches over max_rows, and rows lost or duplicated by the sort.
TEST(PartitionUpsertsTest, SortsByTheClusteringUniqueIndexAndCutsAtValueChanges) {
  TableShape s = Shape({{"id", "int", "int", "", "", false},
                        {"grp", "int", "int", "", "", false},
                        {"seq", "int", "int", "", "", false}},
                       {0});
  s.unique_keys = {{2}, {1, 2}};  // seq alone (all distinct) and (grp, seq) (3 groups)
  ApplyTable t = MakeApplyTable(s, s);
  protocol::TableDef map;
  map.db = "app";
  map.table = "t";
  map.columns.resize(3);
  for (auto& c : map.columns) c.type = protocol::kTypeLong;
  BR_ASSERT_OK(MergeTableMap(map, &t));
  std::vector<BufferedRow> rows;
  // grp 2: 3 rows, grp -1: 2 rows, grp 7: 4 rows, interleaved.
  const std::vector<std::vector<int32_t>> values = {
      {1, 2, 30}, {2, -1, 5}, {3, 7, 1}, {4, 2, 10}, {5, 7, 4},
      {6, -1, 2}, {7, 7, 3},  {8, 2, 20}, {9, 7, 2}};
  for (const auto& v : values) rows.push_back(Row(IntImage(v)));
  std::vector<const BufferedRow*> ptrs;
  for (auto& r : rows) ptrs.push_back(&r);
  BR_ASSERT_OK_AND_ASSIGN(auto batches, PartitionUpserts(t, &ptrs, 3));
  ASSERT_EQ(ptrs.size(), rows.size());
  // Sorted by (grp, seq): -1,-1 | 2,2,2 | 7,7,7,7 (split at 3 rows).
  std::vector<int> ids;
  for (const BufferedRow* r : ptrs) ids.push_back(static_cast<uint8_t>(r->image[1]));
  EXPECT_EQ(ids, (std::vector<int>{6, 2, 4, 8, 1, 3, 9, 7, 5}));
  std::vector<std::pair<size_t, size_t>> want = {{0, 2}, {2, 5}, {5, 8}, {8, 9}};
  EXPECT_EQ(batches, want);
  // Without unique secondary indexes: chunks in the given order.
  TableShape plain = s;
  plain.unique_keys.clear();
  ApplyTable p = MakeApplyTable(plain, plain);
  BR_ASSERT_OK(MergeTableMap(map, &p));
  BR_ASSERT_OK_AND_ASSIGN(auto chunks, PartitionUpserts(p, &ptrs, 4));
  EXPECT_EQ(chunks, (std::vector<std::pair<size_t, size_t>>{{0, 4}, {4, 8}, {8, 9}}));
}

}  // namespace
}  // namespace binrelay::apply

namespace binrelay::apply {
namespace {

// Guards (found in review): DDL hidden behind SET STATEMENT ... FOR or in
// executable comments, DROP DATABASE, EXCHANGE PARTITION's second table,
// and statement-format row changes, all passing unnoticed.
// Guards the flags a pipeline's start relies on: a TRUNCATE or an index
// taken as explaining a difference in definitions (rows would then be read
// with a wrong one), and a table skipped as "created later" when the
// statement ahead of it only altered or renamed it away (its rows before
// the statement would be lost).
TEST(DdlTablesTest, SaysWhichStatementsRedefineOrCreateATable) {
  auto flags = [](std::string_view q) {
    std::vector<std::string> out;
    for (const auto& t : DdlTables("app", q)) {
      out.push_back(absl::StrCat(t.table, t.redefines ? " redefines" : "",
                                 t.appears ? " appears" : ""));
    }
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(flags("ALTER TABLE t ADD COLUMN c INT"), V{"t redefines"});
  EXPECT_EQ(flags("ALTER TABLE t RENAME TO u"), (V{"t redefines", "u redefines appears"}));
  EXPECT_EQ(flags("CREATE TABLE t (id INT)"), V{"t redefines appears"});
  EXPECT_EQ(flags("CREATE TABLE IF NOT EXISTS t (id INT)"), V{"t redefines"});
  EXPECT_EQ(flags("CREATE OR REPLACE TABLE t (id INT)"), V{"t redefines appears"});
  EXPECT_EQ(flags("DROP TABLE t, u"), (V{"t redefines", "u redefines"}));
  EXPECT_EQ(flags("RENAME TABLE a TO b, c TO d"),
            (V{"a redefines", "b redefines appears", "c redefines", "d redefines appears"}));
  EXPECT_EQ(flags("TRUNCATE TABLE t"), V{"t"});
  EXPECT_EQ(flags("CREATE INDEX i ON t (c)"), V{"t"});
  EXPECT_EQ(flags("DROP INDEX i ON t"), V{"t"});
  EXPECT_EQ(flags("DROP DATABASE app"), V{" redefines"});
}

TEST(DdlTablesTest, SeesThroughPrefixesCommentsAndStatementDml) {
  auto names = [](std::string_view q) {
    std::vector<std::string> out;
    for (const auto& t : DdlTables("app", q)) {
      out.push_back(absl::StrCat(t.dml ? "dml " : "", t.db, ".", t.table));
    }
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names("SET STATEMENT lock_wait_timeout=5 FOR ALTER TABLE t MODIFY e ENUM('a','x')"),
            V{"app.t"});
  EXPECT_EQ(names("SET STATEMENT a=1, b=(2) FOR TRUNCATE t"), V{"app.t"});
  EXPECT_EQ(names("/*!40000 ALTER TABLE t DISABLE KEYS */"), V{"app.t"});
  EXPECT_EQ(names("/*M!100100 ALTER TABLE t ADD COLUMN c INT */"), V{"app.t"});
  EXPECT_EQ(names("DROP DATABASE IF EXISTS app"), V{"app."});
  EXPECT_EQ(names("ALTER TABLE a EXCHANGE PARTITION p WITH TABLE b"), (V{"app.a", "app.b"}));
  EXPECT_EQ(names("INSERT INTO t VALUES (1)"), V{"dml app.t"});
  EXPECT_EQ(names("UPDATE LOW_PRIORITY x.t SET a = 1"), V{"dml x.t"});
  EXPECT_EQ(names("DELETE QUICK FROM t WHERE 1"), V{"dml app.t"});
  EXPECT_EQ(names("LOAD DATA INFILE 'f' INTO TABLE t"), V{"dml app.t"});
  EXPECT_EQ(names("BEGIN"), V{});
}

// Guards: an xid read differently from the statement than from the
// XA_PREPARE event (the COMMIT would find nothing held and lose the rows),
// ONE PHASE taken for a two-phase commit, and plain-text xids.
TEST(XaStatementTest, XidsFromStatementsMatchTheEventsForm) {
  protocol::XaPrepareEvent ev;
  ev.format_id = 1;
  ev.gtrid = "t1";
  ev.bqual = "";
  const std::string from_event = XaEventXid(ev);
  EXPECT_EQ(from_event, "7431,,1");
  XaStatement c = ParseXaStatement("XA COMMIT X'7431',X'',1");
  EXPECT_EQ(c.kind, XaStatement::Kind::kCommit);
  EXPECT_EQ(c.xid, from_event);
  XaStatement r = ParseXaStatement("  xa rollback X'7431',X'',1");
  EXPECT_EQ(r.kind, XaStatement::Kind::kRollback);
  EXPECT_EQ(r.xid, from_event);
  XaStatement o = ParseXaStatement("XA COMMIT X'7431',X'',1 ONE PHASE");
  EXPECT_EQ(o.kind, XaStatement::Kind::kCommitOnePhase);
  EXPECT_EQ(ParseXaStatement("XA COMMIT 't1'").xid, from_event) << "default bqual and format";
  EXPECT_EQ(ParseXaStatement("XA PREPARE X'7431',X'',1").kind, XaStatement::Kind::kPrepare);
  EXPECT_EQ(ParseXaStatement("XA START X'7431',X'',1").kind, XaStatement::Kind::kStart);
  EXPECT_EQ(ParseXaStatement("XA END X'7431',X'',1").kind, XaStatement::Kind::kOther);
  EXPECT_EQ(ParseXaStatement("XA COMMIT X'zz'").kind, XaStatement::Kind::kOther);
  EXPECT_EQ(ParseXaStatement("XA COMMIT X'7431',X'',999999999999999999999").kind,
            XaStatement::Kind::kOther);
  // formatID: 4 bytes in the event, a long in the statement.
  ev.format_id = static_cast<int32_t>(3000000000u);
  EXPECT_EQ(ParseXaStatement("XA COMMIT X'7431',X'',3000000000").xid, XaEventXid(ev));
  ev.format_id = -1;
  EXPECT_EQ(ParseXaStatement("XA COMMIT X'7431',X'',18446744073709551615").xid, XaEventXid(ev));
}

// Guards: held rows applied before their COMMIT, kept after ROLLBACK, the
// checkpoint bound (earliest) not the oldest held group, and byte counts
// that drift (the soft limit would stop the pipeline for nothing).
TEST(XaHoldsTest, RowsWaitForTheirOutcome) {
  using replication::BinlogPosition;
  XaHolds xa;
  xa.BeginGroup(BinlogPosition{"b.000002", 100});
  xa.Stage(HeldRow{nullptr, RowOp::kInsert, "", "aaaa"});
  xa.Prepare("a,,1");
  xa.BeginGroup(BinlogPosition{"b.000002", 500});
  xa.Stage(HeldRow{nullptr, RowOp::kInsert, "", "bb"});
  xa.Prepare("b,,1");
  EXPECT_EQ(xa.held(), 2u);
  EXPECT_EQ(xa.bytes(), 6u);
  ASSERT_TRUE(xa.earliest().has_value());
  EXPECT_EQ(xa.earliest()->offset, 100u);
  bool seen = true;
  EXPECT_TRUE(xa.Commit("zz,,1", &seen).empty()) << "an xid never held";
  EXPECT_FALSE(seen) << "its PREPARE was never read";
  xa.Rollback("a,,1");
  EXPECT_EQ(xa.bytes(), 2u);
  EXPECT_EQ(xa.earliest()->offset, 500u);
  std::vector<HeldRow> rows = xa.Commit("b,,1", &seen);
  EXPECT_TRUE(seen);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].after_image, "bb");
  // Until the committing transaction ends, its rows may be handed off in
  // parts: the checkpoint must not pass its group start yet.
  ASSERT_TRUE(xa.earliest().has_value());
  EXPECT_EQ(xa.earliest()->offset, 500u);
  xa.EndTransaction();
  EXPECT_FALSE(xa.earliest().has_value());
  EXPECT_EQ(xa.bytes(), 0u);
  // A group prepared without rows of ours holds nothing back.
  xa.BeginGroup(BinlogPosition{"b.000003", 4});
  xa.Prepare("c,,1");
  EXPECT_FALSE(xa.earliest().has_value());
  // One phase: the staged rows come straight back.
  xa.BeginGroup(BinlogPosition{"b.000003", 9});
  xa.Stage(HeldRow{nullptr, RowOp::kDelete, "x", ""});
  EXPECT_EQ(xa.TakeStaged().size(), 1u);
  EXPECT_FALSE(xa.in_group());
  EXPECT_EQ(xa.bytes(), 0u);
}

// Guards: a phase written to a move's checkpoint that reads back as
// another (a resumed move would take the wrong path) or a damaged one read
// as some phase.
TEST(MovePhaseTest, EveryPhaseReadsBackFromItsCheckpointTextAndNothingElseDoes) {
  std::set<std::string> names;
  for (int i = 0; i <= static_cast<int>(MovePhase::kError); ++i) {
    const auto p = static_cast<MovePhase>(i);
    EXPECT_EQ(ParseMovePhase(MovePhaseName(p)), p) << MovePhaseName(p);
    names.insert(MovePhaseName(p));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(MovePhase::kError) + 1) << "two phases share a name";
  EXPECT_EQ(ParseMovePhase("ready for cutover"), MovePhase::kReadyForCutover);
  EXPECT_FALSE(ParseMovePhase("").has_value());
  EXPECT_FALSE(ParseMovePhase("Done").has_value());
  EXPECT_STREQ(PipelineStateName(PipelineState::kCaughtUp), "caught up");
}

// Guards the statements a MySQL target prepares: a batch must be covered by
// pieces that add up to it exactly (a row skipped or sent twice), each of
// `full` rows or a power of two (else every batch length prepares its own
// statement, and a connection soon holds hundreds), and none over the
// marker limit the target's memory is sized for.
TEST(ExecutePiecesTest, BatchesAreCoveredByFullStatementsAndPowersOfTwo) {
  EXPECT_EQ(ExecuteRowsPerStatement(4, 1000), 512u);
  EXPECT_EQ(ExecuteRowsPerStatement(2, 1000), 512u) << "a power of two whatever the batch size";
  EXPECT_EQ(ExecuteRowsPerStatement(38, 1000), 32u);
  EXPECT_EQ(ExecuteRowsPerStatement(5000, 1000), 1u) << "one row even past the limit";
  for (size_t full : {1u, 4u, 64u, 512u}) {
    std::set<size_t> sizes;
    for (size_t k = 1; k <= 3 * full + 5; ++k) {
      size_t covered = 0;
      while (covered < k) {
        const size_t piece = NextExecutePiece(k - covered, full);
        ASSERT_GE(piece, 1u);
        ASSERT_LE(piece, std::min(full, k - covered));
        sizes.insert(piece);
        covered += piece;
      }
      EXPECT_EQ(covered, k);
    }
    size_t log2 = 0;
    while ((size_t{2} << log2) <= full) ++log2;
    EXPECT_LE(sizes.size(), log2 + 2) << "statements prepared for full = " << full;
  }
  EXPECT_EQ(MultiRowStatement("REPLACE INTO `d`.`t(1)` (`a`,`b`) VALUES (?,?)", 3),
            "REPLACE INTO `d`.`t(1)` (`a`,`b`) VALUES (?,?),(?,?),(?,?)");
  EXPECT_EQ(MultiRowStatement("INSERT INTO t (a) VALUES (?)", 1), "INSERT INTO t (a) VALUES (?)");
}

}  // namespace
}  // namespace binrelay::apply
