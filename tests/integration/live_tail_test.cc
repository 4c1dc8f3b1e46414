// `binrelay tail` live against every release users run (ServerFlavour::All:
// MariaDB 10.5, 10.11, 11.8, MySQL 9.7), each with its own defaults
// (MySQL: caching_sha2_password; MariaDB 11: uca1400 collations and
// end_log_pos 0 inside transactions) and the variants users turn on.
// Every value is compared with what SELECT returns for the same row.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/harness/binrelay_process.h"
#include "tests/harness/every_type_table.h"
#include "tests/harness/fault_proxy.h"
#include "tests/harness/json_lite.h"
#include "tests/harness/server_flavour.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

constexpr char kUser[] = "tailer";
constexpr char kPassword[] = "tail-pw";
using Row = std::vector<std::optional<std::string>>;

class LiveTailTest : public ::testing::TestWithParam<std::string> {
 protected:
  // A source of this test's flavour with its defaults plus `args`, the tail
  // account, and a session in UTC and utf8mb4 with sql_mode '' (zero dates).
  void StartSource(std::vector<std::string> args = {}) {
    ServerSandboxOptions o;
    o.flavour = GetParam();
    o.extra_args = std::move(args);
    o.extra_args.push_back("--max-allowed-packet=256M");
    auto sb = ServerSandbox::Start(o);
    ASSERT_TRUE(sb.ok()) << sb.status();
    source_ = *std::move(sb);
    BR_ASSERT_OK(source_->CreateUser(kUser, kPassword, source_->Flavour().ReplicationGrants()));
    for (const char* sql : {"SET NAMES utf8mb4", "SET time_zone = '+00:00'", "SET sql_mode = ''"}) {
      BR_ASSERT_OK(source_->Execute(sql));
    }
  }

  // Runs tail from `start` to the binlog end; the JSON lines.
  std::vector<JsonValue> Tail(const std::string& tables, const std::string& start,
                              std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--start", start, "--until-end"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = RunBinrelay(TailArgs(*source_, kUser, tables, args),
                         {{"BINRELAY_SOURCE_PASSWORD", kPassword}}, std::chrono::seconds(90));
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return {};
    EXPECT_EQ(r->exit_code, 0) << r->Describe();
    auto lines = ParseJsonLines(r->out);
    EXPECT_TRUE(lines.ok()) << lines.status();
    return lines.ok() ? *std::move(lines) : std::vector<JsonValue>{};
  }

  // The same binlog file read with `tail --file`: (op, pos) of every row.
  std::vector<std::string> FileRowPositions(const std::string& file, const std::string& tables) {
    auto r = RunBinrelay({"tail", "--file", source_->DataDir() + "/" + file, "--tables", tables},
                         {}, std::chrono::seconds(60));
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return {};
    EXPECT_EQ(r->exit_code, 0) << r->Describe();
    std::vector<std::string> out;
    auto lines = ParseJsonLines(r->out);
    EXPECT_TRUE(lines.ok()) << lines.status();
    if (!lines.ok()) return out;
    for (const JsonValue& l : *lines) out.push_back(OpAndPos(l));
    return out;
  }

  static std::string OpAndPos(const JsonValue& l) {
    const JsonValue* op = l.Find("op");
    const JsonValue* pos = l.Find("pos");
    return absl::StrCat(op ? op->text : "?", "@", pos ? pos->text : "?");
  }

  // SELECT of every column (by its select expression) ordered by id.
  std::map<int, Row> Snapshot(const std::string& table, const std::vector<LiveColumn>& cols) {
    std::vector<std::string> exprs = {"id"};
    for (const LiveColumn& c : cols) {
      exprs.push_back(c.column.select.empty() ? c.column.name : c.column.select);
    }
    auto rows = RowsById(*source_, absl::StrCat("SELECT ", absl::StrJoin(exprs, ", "), " FROM ",
                                                table, " ORDER BY id"));
    EXPECT_TRUE(rows.ok()) << rows.status();
    return rows.ok() ? *std::move(rows) : std::map<int, Row>{};
  }


 public:
  // Every column of `image` agrees with `want` (SELECT's row).
  void CheckImage(const JsonValue* image, const Row& want, const std::vector<LiveColumn>& cols,
                   const std::string& what) {
    ASSERT_NE(image, nullptr) << what;
    ASSERT_TRUE(image->is_object()) << what;
    EXPECT_EQ(image->object.size(), cols.size() + 1) << what << ": column count";
    for (size_t i = 0; i < cols.size(); ++i) {
      const JsonValue* v = image->Find(cols[i].column.name);
      if (v == nullptr) {
        ADD_FAILURE() << what << ": column " << cols[i].column.name << " missing";
        continue;
      }
      EXPECT_EQ(CompareWithSelect(cols[i].column, *v, want[i]), "")
          << what << " column " << cols[i].column.name << " (" << cols[i].column.type << ")";
    }
  }


 protected:
  std::unique_ptr<ServerSandbox> source_;
};

// Guards: a type of the release decoded wrong (MariaDB UUID/INET4/INET6 as
// base64, VECTOR, MySQL's JSON text), before/after swapped, and positions
// that are not the real end offsets of the rows events: MariaDB 11.4+
// writes end_log_pos 0 inside transactions, where tail printed "pos":0.
TEST_P(LiveTailTest, EveryTypeOfTheReleaseMatchesSelectAtRealPositions) {
  BINRELAY_REQUIRE_FLAVOUR(GetParam());
  ASSERT_NO_FATAL_FAILURE(StartSource());
  const std::vector<LiveColumn> cols = EveryTypeColumns(source_->Flavour());
  BR_ASSERT_OK(source_->Execute("CREATE DATABASE itest CHARACTER SET utf8mb4"));
  BR_ASSERT_OK(source_->Execute(LiveTableDdl("itest.types", cols)));
  BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(*source_));
  const std::string file = start.substr(0, start.find(':'));

  // Four rows of values and one of NULLs; then every row changes to another
  // set (a row to NULLs, the NULL row to values); then all go.
  BR_ASSERT_OK(source_->Execute(absl::StrCat(
      "INSERT INTO itest.types VALUES ", LiveRowValues(1, cols, 0), ", ",
      LiveRowValues(2, cols, 1), ", ", LiveRowValues(3, cols, 2), ", ",
      LiveRowValues(4, cols, 99))));
  std::map<int, Row> inserted = Snapshot("itest.types", cols);
  ASSERT_EQ(inserted.size(), 4u);
  const std::vector<std::pair<int, size_t>> updates = {{1, 3}, {2, 2}, {3, 99}, {4, 1}};
  BR_ASSERT_OK(source_->Execute("BEGIN"));
  for (const auto& [id, which] : updates) {
    BR_ASSERT_OK(source_->Execute(absl::StrCat("UPDATE itest.types SET ",
                                               LiveSetClause(cols, which), " WHERE id = ", id)));
  }
  BR_ASSERT_OK(source_->Execute("COMMIT"));
  std::map<int, Row> updated = Snapshot("itest.types", cols);
  BR_ASSERT_OK(source_->Execute("DELETE FROM itest.types"));

  std::vector<JsonValue> lines = Tail("itest.types", start);
  ASSERT_EQ(lines.size(), 12u);
  for (size_t n = 0; n < lines.size(); ++n) {
    const JsonValue& l = lines[n];
    const std::string where = absl::StrCat(GetParam(), " line ", n + 1);
    const std::string op = n < 4 ? "insert" : n < 8 ? "update" : "delete";
    ASSERT_NE(l.Find("op"), nullptr) << where;
    EXPECT_EQ(l.Find("op")->text, op) << where;
    ASSERT_NE(l.Find("file"), nullptr) << where;
    EXPECT_EQ(l.Find("file")->text, file) << where;
    uint64_t pos = 0;
    ASSERT_TRUE(l.Find("pos") && absl::SimpleAtoi(l.Find("pos")->text, &pos)) << where;
    EXPECT_GT(pos, 4u) << where << ": a real end offset, never 0";
    const JsonValue* before = l.Find("before");
    const JsonValue* after = l.Find("after");
    ASSERT_TRUE(before && after) << where;
    const JsonValue* image = op == "delete" ? before : after;
    ASSERT_TRUE(image->is_object() && image->Find("id")) << where;
    const int id = std::atoi(image->Find("id")->text.c_str());
    if (op == "insert") {
      CheckImage(after, inserted[id], cols, where + " insert after");
    } else if (op == "update") {
      CheckImage(before, inserted[id], cols, where + " update before");
      CheckImage(after, updated[id], cols, where + " update after");
    } else {
      CheckImage(before, updated[id], cols, where + " delete before");
    }
  }
  // The same file read from disk gives the offsets the file really has.
  std::vector<std::string> live;
  for (const JsonValue& l : lines) live.push_back(OpAndPos(l));
  EXPECT_EQ(live, FileRowPositions(file, "itest.types"));
}

// Text every charset can hold (in UTF-8; the server converts it on INSERT),
// so each conversion is really exercised.
std::string SampleFor(const std::string& cs) {
  static const std::map<std::string, std::string> kSamples = {
      {"ascii", "plain \\\\ text"},
      {"latin1", "caf\u00e9 \u20ac \u00ff"},
      {"armscii8", "\u0540\u0561\u0575\u0565\u0580\u0565\u0576"},
      {"big5", "\u4e2d\u6587\u5b57"},
      {"cp1250", "\u0141\u00f3d\u017a \u017b\u00f3\u0142w"},
      {"cp1251", "\u041f\u0440\u0438\u0432\u0435\u0442"},
      {"cp1256", "\u0645\u0631\u062d\u0628\u0627"},
      {"cp1257", "\u0104\u010d\u0119\u0117\u012f\u0161\u0173\u016b\u017e"},
      {"cp850", "\u00dcn\u00efc\u00f6d\u00e9"},
      {"cp852", "\u0141\u00f3d\u017a"},
      {"cp866", "\u041f\u0440\u0438\u0432\u0435\u0442"},
      {"cp932", "\u65e5\u672c\u8a9e\u30c6\u30ad\u30b9\u30c8"},
      {"dec8", "\u00dcn\u00efc\u00f6d\u00e9"},
      {"eucjpms", "\u65e5\u672c\u8a9e"},
      {"euckr", "\ud55c\uad6d\uc5b4"},
      {"gb18030", "\u4e2d\u6587\U0001f600"},
      {"gb2312", "\u4e2d\u6587"},
      {"gbk", "\u4e2d\u6587"},
      {"geostd8", "\u10e5\u10d0\u10e0\u10d7\u10e3\u10da\u10d8"},
      {"greek", "\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac"},
      {"hebrew", "\u05e9\u05dc\u05d5\u05dd"},
      {"hp8", "\u00dcn\u00efc\u00f6d\u00e9"},
      {"keybcs2", "P\u0159\u00edli\u0161 \u017elu\u0165ou\u010dk\u00fd"},
      {"koi8r", "\u041f\u0440\u0438\u0432\u0435\u0442"},
      {"koi8u", "\u041f\u0440\u0438\u0432\u0456\u0442"},
      {"latin2", "\u0141\u00f3d\u017a"},
      {"latin5", "\u0130\u015f\u00e7i"},
      {"latin7", "\u0104\u010d\u0119\u0117\u012f\u0161\u0173\u016b\u017e"},
      {"macce", "\u0141\u00f3d\u017a"},
      {"macroman", "\u00dcn\u00efc\u00f6d\u00e9"},
      {"sjis", "\u65e5\u672c\u8a9e"},
      {"swe7", "\u00c5\u00c4\u00d6\u00e5\u00e4\u00f6"},
      {"tis620", "\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22"},
      {"ujis", "\u65e5\u672c\u8a9e"},
      {"ucs2", "\u00e9\u20ac\u0436"},
      {"utf8mb3", "\u00e9\u20ac\u0436"},
      {"utf8", "\u00e9\u20ac\u0436"},
  };
  auto it = kSamples.find(cs);
  // utf8mb4, utf16, utf16le, utf32: beyond the BMP too.
  return it != kSamples.end() ? it->second : "\u00e9\u20ac\u0436\U0001f600";
}

// The single-byte charsets besides latin1 and ascii: every byte of one is
// checked, including those the charset leaves undefined ('?' in SELECT).
bool SingleByteLegacy(const std::string& cs) {
  for (const char* c : {"armscii8", "cp1250", "cp1251", "cp1256", "cp1257", "cp850", "cp852",
                        "cp866", "dec8", "geostd8", "greek", "hebrew", "hp8", "keybcs2", "koi8r",
                        "koi8u", "latin2", "latin5", "latin7", "macce", "macroman", "swe7",
                        "tis620"}) {
    if (cs == c) return true;
  }
  return false;
}

// Guards: text in a collation read as binary (base64), as MariaDB 11's
// default utf8mb4_uca1400_ai_ci was, or in the wrong charset (the legacy
// ones, cp1251, sjis, ..., were read as UTF-8). Every collation of the
// release gets a column, once with the release's default
// binlog_row_metadata (charsets from the schema or TABLE_MAP) and once with
// FULL.
TEST_P(LiveTailTest, TextInEveryCollationOfTheReleaseDecodesAsText) {
  BINRELAY_REQUIRE_FLAVOUR(GetParam());
  ASSERT_NO_FATAL_FAILURE(StartSource());
  const ServerFlavour& f = source_->Flavour();
  // MariaDB 10.10+ lists the uca1400 collations per charset only in
  // COLLATION_CHARACTER_SET_APPLICABILITY.FULL_COLLATION_NAME.
  const bool full_names = !f.mysql && f.AtLeast(10, 10);
  BR_ASSERT_OK_AND_ASSIGN(
      SqlRows collations,
      source_->Query(full_names
                         ? "SELECT FULL_COLLATION_NAME, CHARACTER_SET_NAME, ID FROM "
                           "information_schema.COLLATION_CHARACTER_SET_APPLICABILITY ORDER BY ID"
                         : "SELECT COLLATION_NAME, CHARACTER_SET_NAME, ID FROM "
                           "information_schema.COLLATIONS ORDER BY ID"));
  struct Coll {
    std::string name, charset;
    uint64_t id;
  };
  std::vector<Coll> colls;
  bool saw_new_range = false;
  for (const auto& r : collations) {
    if (!r[0] || !r[1] || !r[2] || *r[1] == "binary") continue;
    uint64_t id = 0;
    ASSERT_TRUE(absl::SimpleAtoi(*r[2], &id));
    colls.push_back({*r[0], *r[1], id});
    // MariaDB's UCA 14.0 ids (2048+), MySQL's utf8mb4_0900 ids (255-323).
    if (full_names ? id >= 2048 : (f.mysql && id >= 255 && id <= 323)) saw_new_range = true;
  }
  ASSERT_GT(colls.size(), 20u);
  if (f.mysql || full_names) {
    EXPECT_TRUE(saw_new_range) << "no collation of the release's new range";
  }

  for (const char* metadata : {"", "FULL"}) {
    if (*metadata) {
      BR_ASSERT_OK(source_->Execute("SET GLOBAL binlog_row_metadata = 'FULL'"));
    }
    const std::string db = *metadata ? "coll_full" : "coll_default";
    BR_ASSERT_OK(source_->Execute(absl::StrCat("CREATE DATABASE ", db)));
    BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(*source_));
    // At most 30 collations a table (InnoDB's row size limit), one row each.
    std::map<std::string, std::vector<Coll>> tables;
    for (size_t i = 0; i < colls.size(); ++i) {
      tables[absl::StrCat("t", i / 30)].push_back(colls[i]);
    }
    std::map<std::string, std::map<std::string, std::optional<std::string>>> want;
    for (const auto& [table, cs] : tables) {
      std::vector<std::string> defs = {"id INT PRIMARY KEY"}, names = {"id"}, values = {"1"};
      for (size_t i = 0; i < cs.size(); ++i) {
        const std::string col = absl::StrCat("c", i);
        defs.push_back(absl::StrCat(col, " VARCHAR(40) CHARACTER SET ", cs[i].charset,
                                    " COLLATE ", cs[i].name));
        names.push_back(col);
        values.push_back(absl::StrCat("'", SampleFor(cs[i].charset), "'"));
        // And every byte from 0x20 up of the single-byte ones, as raw bytes;
        // but DEL (0x7F), which latin2_czech_cs prints as DEL on MySQL and
        // as '?' on MariaDB (binrelay follows MariaDB; legacy_charset.h).
        if (SingleByteLegacy(cs[i].charset)) {
          std::string hex;
          for (int b = 0x20; b <= 0xFF; ++b) {
            if (b != 0x7F) absl::StrAppend(&hex, absl::Hex(b, absl::kZeroPad2));
          }
          defs.push_back(absl::StrCat(col, "_bytes TEXT CHARACTER SET ", cs[i].charset,
                                      " COLLATE ", cs[i].name));
          names.push_back(col + "_bytes");
          values.push_back(absl::StrCat("CONVERT(UNHEX('", hex, "') USING ", cs[i].charset, ")"));
        }
      }
      BR_ASSERT_OK(source_->Execute(absl::StrCat("CREATE TABLE ", db, ".", table, " (",
                                                 absl::StrJoin(defs, ", "), ") ENGINE=InnoDB")));
      BR_ASSERT_OK(source_->Execute(absl::StrCat("INSERT INTO ", db, ".", table, " VALUES (",
                                                 absl::StrJoin(values, ", "), ")")));
      BR_ASSERT_OK_AND_ASSIGN(SqlRows got, source_->Query(absl::StrCat(
                                               "SELECT ", absl::StrJoin(names, ", "), " FROM ",
                                               db, ".", table)));
      ASSERT_EQ(got.size(), 1u);
      for (size_t i = 1; i < names.size(); ++i) want[table][names[i]] = got[0][i];
    }
    std::vector<JsonValue> lines = Tail(db + ".*", start);
    ASSERT_EQ(lines.size(), tables.size()) << db;
    for (const JsonValue& l : lines) {
      const std::string table = l.Find("table") ? l.Find("table")->text : "?";
      const JsonValue* after = l.Find("after");
      ASSERT_TRUE(after && after->is_object()) << table;
      const std::vector<Coll>& cs = tables[table];
      for (size_t i = 0; i < cs.size(); ++i) {
        for (const char* suffix : {"", "_bytes"}) {
          const std::string col = absl::StrCat("c", i, suffix);
          if (!want[table].contains(col)) continue;
          const JsonValue* v = after->Find(col);
          ASSERT_NE(v, nullptr) << db << "." << table << "." << col;
          EXPECT_EQ(CompareWithSelect({"", "", Kind::kText}, *v, want[table][col]), "")
              << GetParam() << " " << db << ": collation " << cs[i].name << " (id " << cs[i].id
              << ", " << cs[i].charset << ")" << suffix;
        }
      }
    }
  }
}


// One statement of a workload and the rows it changes, by id.
struct Step {
  std::string sql;
  std::string op;
  std::vector<int> ids;
};

// A small workload on v.t (id, j JSON, s VARCHAR, n INT) with JSON updates
// a server may log as diffs (MySQL PARTIAL_JSON).
std::vector<Step> JsonWorkload(const std::string& table) {
  return {
      {absl::StrCat("INSERT INTO ", table, " VALUES (1, '{\"a\": 1, \"b\": [1, 2, 3], \"c\": "
                                           "\"long text value to patch\"}', 'one', 1), (2, "
                                           "'[1, 2]', 'two', 2), (3, NULL, NULL, NULL)"),
       "insert",
       {1, 2, 3}},
      {absl::StrCat("UPDATE ", table, " SET j = JSON_SET(j, '$.a', 42, '$.d', 'new') WHERE id = 1"),
       "update",
       {1}},
      {absl::StrCat("UPDATE ", table,
                    " SET j = JSON_REPLACE(j, '$.b[1]', 'two'), s = 'uno' WHERE id = 1"),
       "update",
       {1}},
      {absl::StrCat("UPDATE ", table, " SET j = JSON_REMOVE(j, '$.c') WHERE id = 1"), "update", {1}},
      {absl::StrCat("UPDATE ", table, " SET j = JSON_ARRAY_APPEND(j, '$', 3), n = 20 WHERE id = 2"),
       "update",
       {2}},
      {absl::StrCat("UPDATE ", table, " SET j = '{}', s = 'three' WHERE id = 3"), "update", {3}},
      {absl::StrCat("DELETE FROM ", table, " WHERE id = 2"), "delete", {2}},
  };
}

// Runs `steps`, then checks tail's lines from `start`: one per changed row,
// in order, each image equal to SELECT's row before/after its statement, and
// each GTID matching `gtid_pattern` (a prefix, e.g. "0-1-" or "uuid:tag:").
void RunAndCompare(ServerSandbox& source, LiveTailTest* test, const std::string& table,
                   const std::vector<Step>& steps, const std::string& gtid_prefix,
                   const std::function<std::vector<JsonValue>(const std::string&)>& tail,
                   const std::string& what) {
  const std::vector<LiveColumn> cols = {
      {{"j", "JSON", Kind::kText}, {}},
      {{"s", "VARCHAR(20)", Kind::kText}, {}},
      {{"n", "INT", Kind::kInt}, {}}};
  auto snapshot = [&]() {
    auto rows = RowsById(source, absl::StrCat("SELECT id, j, s, n FROM ", table, " ORDER BY id"));
    EXPECT_TRUE(rows.ok()) << rows.status();
    return rows.ok() ? *std::move(rows) : std::map<int, Row>{};
  };
  BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(source));
  std::vector<std::map<int, Row>> states = {snapshot()};
  for (const Step& st : steps) {
    BR_ASSERT_OK(source.Execute(st.sql)) << what;
    states.push_back(snapshot());
  }
  std::vector<JsonValue> lines = tail(start);
  size_t n = 0;
  for (size_t k = 0; k < steps.size(); ++k) {
    for (int id : steps[k].ids) {
      const std::string where = absl::StrCat(what, ": statement ", k + 1, " id ", id);
      ASSERT_LT(n, lines.size()) << where << ": line missing";
      const JsonValue& l = lines[n++];
      ASSERT_NE(l.Find("op"), nullptr) << where;
      EXPECT_EQ(l.Find("op")->text, steps[k].op) << where;
      const JsonValue* gtid = l.Find("gtid");
      ASSERT_NE(gtid, nullptr) << where;
      if (gtid_prefix.empty()) {
        EXPECT_TRUE(gtid->is_null()) << where << ": gtid " << gtid->text;
      } else {
        EXPECT_TRUE(absl::StartsWith(gtid->text, gtid_prefix))
            << where << ": gtid " << gtid->text << ", want " << gtid_prefix << "N";
      }
      EXPECT_EQ(l.Find("image"), nullptr) << where << ": a FULL image must not be partial";
      if (steps[k].op != "insert") {
        ASSERT_NO_FATAL_FAILURE(test->CheckImage(l.Find("before"), states[k][id], cols,
                                                 where + " before"));
      }
      if (steps[k].op != "delete") {
        ASSERT_NO_FATAL_FAILURE(test->CheckImage(l.Find("after"), states[k + 1][id], cols,
                                                 where + " after"));
      }
    }
  }
  EXPECT_EQ(n, lines.size()) << what << ": more lines than changed rows";
}

// Guards each setting users turn on against a decoder that only knows the
// defaults: MySQL zstd TRANSACTION_PAYLOAD, PARTIAL_JSON diffs applied to the
// before image, tagged GTIDs (uuid:tag:n); MariaDB gtid_strict_mode, and on
// 11.4+ binlog_legacy_event_pos (both position styles agree).
TEST_P(LiveTailTest, SettingsUsersTurnOnDecodeLikeTheDefaults) {
  BINRELAY_REQUIRE_FLAVOUR(GetParam());
  ASSERT_NO_FATAL_FAILURE(StartSource());
  const ServerFlavour& f = source_->Flavour();
  BR_ASSERT_OK(source_->Execute("CREATE DATABASE v"));
  BR_ASSERT_OK_AND_ASSIGN(SqlRows uuid, source_->Query(f.mysql ? "SELECT @@server_uuid"
                                                                : "SELECT @@gtid_domain_id"));
  struct Variant {
    std::string name;
    std::vector<std::string> setup;
    std::string gtid_prefix;
  };
  std::vector<Variant> variants;
  if (f.mysql) {
    const std::string u = *uuid[0][0];
    variants = {
        {"defaults", {}, u + ":"},
        {"binlog_transaction_compression",
         {"SET SESSION binlog_transaction_compression = ON"}, u + ":"},
        {"PARTIAL_JSON", {"SET SESSION binlog_row_value_options = 'PARTIAL_JSON'"}, u + ":"},
        {"compression and PARTIAL_JSON",
         {"SET SESSION binlog_transaction_compression = ON",
          "SET SESSION binlog_row_value_options = 'PARTIAL_JSON'"},
         u + ":"},
        {"tagged GTIDs", {"SET gtid_next = 'AUTOMATIC:binrelay_tag'"}, u + ":binrelay_tag:"},
    };
  } else {
    variants = {{"defaults", {}, "0-1-"},
                {"gtid_strict_mode", {"SET GLOBAL gtid_strict_mode = 1"}, "0-1-"}};
    if (f.AtLeast(11, 4)) {
      variants.push_back(
          {"binlog_legacy_event_pos", {"SET GLOBAL binlog_legacy_event_pos = 1"}, "0-1-"});
    }
  }
  for (size_t i = 0; i < variants.size(); ++i) {
    const Variant& v = variants[i];
    const std::string table = absl::StrCat("v.t", i);
    BR_ASSERT_OK(source_->Execute(absl::StrCat(
        "CREATE TABLE ", table, " (id INT PRIMARY KEY, j JSON, s VARCHAR(20), n INT)")));
    for (const std::string& sql : v.setup) BR_ASSERT_OK(source_->Execute(sql)) << v.name;
    ASSERT_NO_FATAL_FAILURE(RunAndCompare(
        *source_, this, table, JsonWorkload(table), v.gtid_prefix,
        [&](const std::string& start) { return Tail(table, start); },
        absl::StrCat(GetParam(), " with ", v.name)));
    if (f.mysql) {
      for (const char* reset : {"SET SESSION binlog_transaction_compression = OFF",
                                "SET SESSION binlog_row_value_options = ''",
                                "SET gtid_next = 'AUTOMATIC'"}) {
        BR_ASSERT_OK(source_->Execute(reset));
      }
    }
  }
}

// Guards the GTID start of each flavour (MariaDB domain-server-seq, MySQL
// uuid sets, with a tagged GTID among them): tail prints exactly what came
// after the set, and MySQL with gtid_mode OFF prints null GTIDs.
TEST_P(LiveTailTest, StartsAfterAGtidSetAndRunsWithGtidsOff) {
  BINRELAY_REQUIRE_FLAVOUR(GetParam());
  ASSERT_NO_FATAL_FAILURE(StartSource());
  const ServerFlavour& f = source_->Flavour();
  BR_ASSERT_OK(source_->Execute("CREATE DATABASE g"));
  BR_ASSERT_OK(source_->Execute("CREATE TABLE g.t (id INT PRIMARY KEY, j JSON, s VARCHAR(20), n INT)"));
  BR_ASSERT_OK(source_->Execute("INSERT INTO g.t VALUES (100, '1', 'before', 0)"));
  if (f.mysql) {
    BR_ASSERT_OK(source_->Execute("SET gtid_next = 'AUTOMATIC:early'"));
    BR_ASSERT_OK(source_->Execute("INSERT INTO g.t VALUES (101, '2', 'tagged', 0)"));
    BR_ASSERT_OK(source_->Execute("SET gtid_next = 'AUTOMATIC'"));
  }
  BR_ASSERT_OK_AND_ASSIGN(SqlRows pos, source_->Query(f.mysql ? "SELECT @@gtid_executed"
                                                               : "SELECT @@gtid_binlog_pos"));
  std::string gtid_set = *pos[0][0];
  gtid_set.erase(std::remove(gtid_set.begin(), gtid_set.end(), '\n'), gtid_set.end());
  BR_ASSERT_OK_AND_ASSIGN(SqlRows uuid, source_->Query(f.mysql ? "SELECT @@server_uuid"
                                                                : "SELECT 1"));
  const std::string prefix = f.mysql ? *uuid[0][0] + ":" : "0-1-";
  ASSERT_NO_FATAL_FAILURE(RunAndCompare(
      *source_, this, "g.t", JsonWorkload("g.t"), prefix,
      [&](const std::string&) { return Tail("g.t", "gtid:" + gtid_set); },
      absl::StrCat(GetParam(), " from gtid:", gtid_set)));
  if (!f.mysql) return;
  // MySQL with GTIDs off: anonymous transactions, gtid null.
  source_.reset();
  ASSERT_NO_FATAL_FAILURE(StartSource({"--gtid-mode=OFF", "--enforce-gtid-consistency=OFF"}));
  BR_ASSERT_OK(source_->Execute("CREATE DATABASE g"));
  BR_ASSERT_OK(source_->Execute("CREATE TABLE g.t (id INT PRIMARY KEY, j JSON, s VARCHAR(20), n INT)"));
  ASSERT_NO_FATAL_FAILURE(RunAndCompare(
      *source_, this, "g.t", JsonWorkload("g.t"), "",
      [&](const std::string& start) { return Tail("g.t", start); },
      absl::StrCat(GetParam(), " with gtid_mode OFF")));
}


// Guards: a reconnect that repeats or loses rows, or miscounts positions,
// on a release whose transactions carry end_log_pos 0 inside (MariaDB
// 11.4+): the connection drops mid-transaction at random, the dump resumes
// after the last complete transaction and its first event (an FDE with
// end_log_pos 0) must not be counted as part of the transaction it left.
TEST_P(LiveTailTest, ConnectionFaultsMidTransactionPrintEveryRowOnce) {
  BINRELAY_REQUIRE_FLAVOUR(GetParam());
  ASSERT_NO_FATAL_FAILURE(StartSource());
  uint32_t seed = std::random_device{}();
  if (const char* env = std::getenv("BINRELAY_ITEST_SEED")) seed = std::stoul(env);
  SCOPED_TRACE(absl::StrCat("BINRELAY_ITEST_SEED=", seed));
  BR_ASSERT_OK(source_->Execute("CREATE DATABASE once"));
  BR_ASSERT_OK(source_->Execute("CREATE TABLE once.t (id INT PRIMARY KEY, pad VARCHAR(1000))"));
  BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(*source_));
  constexpr int kRows = 1500;
  for (int first = 1; first <= kRows; first += 5) {  // five rows per transaction
    std::string sql = "BEGIN;";
    for (int id = first; id < first + 5; ++id) {
      absl::StrAppend(&sql, " INSERT INTO once.t VALUES (", id, ", REPEAT('x', ", id % 900, "));");
    }
    absl::StrAppend(&sql, " COMMIT");
    for (absl::string_view stmt : absl::StrSplit(sql, ';', absl::SkipWhitespace())) {
      BR_ASSERT_OK(source_->Execute(std::string(stmt)));
    }
  }
  // No fault in the first 2 KiB: a first connection lost before the source
  // authenticated it is reported as a configuration error, by design
  // (TailReconnectTest covers the retry of one lost after that).
  BR_ASSERT_OK_AND_ASSIGN(auto proxy, FaultProxy::Start({.upstream_port = source_->Port(),
                                                         .seed = seed,
                                                         .min_bytes = 2048,
                                                         .max_bytes = 96 * 1024}));
  std::vector<std::string> args = {"--start", start, "--until-end", "--tls", "disabled",
                                   "--heartbeat", "1", "--reconnect-timeout", "60"};
  if (source_->IsMysql()) args.push_back("--get-server-public-key");
  std::vector<std::string> tail = {"tail", "--source", absl::StrCat("127.0.0.1:", proxy->port()),
                                   "--user", kUser, "--tables", "once.t"};
  tail.insert(tail.end(), args.begin(), args.end());
  BR_ASSERT_OK_AND_ASSIGN(ProcessResult r, RunBinrelay(tail, {{"BINRELAY_SOURCE_PASSWORD",
                                                               kPassword}},
                                                       std::chrono::seconds(180)));
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_GE(proxy->faults(), 3u) << "the faults did not happen";
  std::map<int, int> seen;
  std::vector<std::string> positions;
  auto lines = ParseJsonLines(r.out);
  ASSERT_TRUE(lines.ok()) << lines.status();
  for (const JsonValue& l : *lines) {
    const JsonValue* after = l.Find("after");
    ASSERT_TRUE(after && after->Find("id"));
    ++seen[std::atoi(after->Find("id")->text.c_str())];
    positions.push_back(OpAndPos(l));
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kRows));
  for (const auto& [id, n] : seen) EXPECT_EQ(n, 1) << "row " << id << " printed " << n << " times";
  // Positions as the file has them, whatever the reconnects.
  const std::string file = start.substr(0, start.find(':'));
  EXPECT_EQ(positions, FileRowPositions(file, "once.t"));
}

INSTANTIATE_TEST_SUITE_P(Flavours, LiveTailTest, ::testing::ValuesIn(ServerFlavour::All()),
                         FlavourTestName<::testing::TestParamInfo<std::string>>);

}  // namespace
}  // namespace binrelay::testing
