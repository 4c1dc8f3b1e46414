// `binrelay tail` live against every release users run (ServerFlavour::All:
// MariaDB 10.5, 10.11, 11.8, MySQL 9.7), each with its own defaults
// (MySQL: caching_sha2_password; MariaDB 11: uca1400 collations and
// end_log_pos 0 inside transactions) and the variants users turn on.
// Every value is compared with what SELECT returns for the same row.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
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
    auto rows = source_->Query(
        absl::StrCat("SELECT ", absl::StrJoin(exprs, ", "), " FROM ", table, " ORDER BY id"));
    EXPECT_TRUE(rows.ok()) << rows.status();
    std::map<int, Row> out;
    if (!rows.ok()) return out;
    for (auto& r : *rows) {
      int id = std::atoi(r[0]->c_str());
      r.erase(r.begin());
      out[id] = std::move(r);
    }
    return out;
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

// The charsets binrelay decodes, by name as information_schema lists them.
bool DecodedCharset(const std::string& cs) {
  for (const char* c : {"utf8mb4", "utf8mb3", "utf8", "latin1", "ascii", "ucs2", "utf16",
                        "utf16le", "utf32"}) {
    if (cs == c) return true;
  }
  return false;
}

// Text every such charset can hold, so the conversion is really exercised.
std::string SampleFor(const std::string& cs) {
  if (cs == "ascii") return "plain \\\\ text";
  if (cs == "latin1") return "caf\xC3\xA9 \xE2\x82\xAC \xC3\xBF";                 // café € ÿ
  if (cs == "ucs2" || cs == "utf8mb3" || cs == "utf8") return "\xC3\xA9\xE2\x82\xAC\xD0\xB6";  // é€ж
  return "\xC3\xA9\xE2\x82\xAC\xD0\xB6\xF0\x9F\x98\x80";  // é€ж😀
}

// Guards: text in a collation read as binary (base64), as MariaDB 11's
// default utf8mb4_uca1400_ai_ci was, or in the wrong charset. Every
// collation of the release whose charset binrelay decodes gets a column, once
// with the release's default binlog_row_metadata (charsets from the
// schema or TABLE_MAP) and once with FULL.
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
    if (!r[0] || !r[1] || !r[2] || !DecodedCharset(*r[1])) continue;
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
    // At most 100 columns a table (row size limits), one row each.
    std::map<std::string, std::vector<Coll>> tables;
    for (size_t i = 0; i < colls.size(); ++i) {
      tables[absl::StrCat("t", i / 100)].push_back(colls[i]);
    }
    std::map<std::string, std::map<std::string, std::optional<std::string>>> want;
    for (const auto& [table, cs] : tables) {
      std::vector<std::string> defs = {"id INT PRIMARY KEY"}, names = {"id"}, values = {"1"};
      for (size_t i = 0; i < cs.size(); ++i) {
        const std::string col = absl::StrCat("c", i);
        defs.push_back(absl::StrCat(col, " VARCHAR(12) CHARACTER SET ", cs[i].charset,
                                    " COLLATE ", cs[i].name));
        names.push_back(col);
        values.push_back(absl::StrCat("'", SampleFor(cs[i].charset), "'"));
      }
      BR_ASSERT_OK(source_->Execute(absl::StrCat("CREATE TABLE ", db, ".", table, " (",
                                                 absl::StrJoin(defs, ", "), ") ENGINE=InnoDB")));
      BR_ASSERT_OK(source_->Execute(absl::StrCat("INSERT INTO ", db, ".", table, " VALUES (",
                                                 absl::StrJoin(values, ", "), ")")));
      BR_ASSERT_OK_AND_ASSIGN(SqlRows got, source_->Query(absl::StrCat(
                                               "SELECT ", absl::StrJoin(names, ", "), " FROM ",
                                               db, ".", table)));
      ASSERT_EQ(got.size(), 1u);
      for (size_t i = 0; i < cs.size(); ++i) want[table][absl::StrCat("c", i)] = got[0][i + 1];
    }
    std::vector<JsonValue> lines = Tail(db + ".*", start);
    ASSERT_EQ(lines.size(), tables.size()) << db;
    for (const JsonValue& l : lines) {
      const std::string table = l.Find("table") ? l.Find("table")->text : "?";
      const JsonValue* after = l.Find("after");
      ASSERT_TRUE(after && after->is_object()) << table;
      const std::vector<Coll>& cs = tables[table];
      for (size_t i = 0; i < cs.size(); ++i) {
        const std::string col = absl::StrCat("c", i);
        const JsonValue* v = after->Find(col);
        ASSERT_NE(v, nullptr) << db << "." << table << "." << col;
        EXPECT_EQ(CompareWithSelect({"", "", Kind::kText}, *v, want[table][col]), "")
            << GetParam() << " " << db << ": collation " << cs[i].name << " (id " << cs[i].id
            << ", " << cs[i].charset << ")";
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
    std::map<int, Row> out;
    auto rows = source.Query(absl::StrCat("SELECT id, j, s, n FROM ", table, " ORDER BY id"));
    EXPECT_TRUE(rows.ok()) << rows.status();
    if (!rows.ok()) return out;
    for (auto& r : *rows) {
      int id = std::atoi(r[0]->c_str());
      r.erase(r.begin());
      out[id] = std::move(r);
    }
    return out;
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

INSTANTIATE_TEST_SUITE_P(Flavours, LiveTailTest, ::testing::ValuesIn(ServerFlavour::All()),
                         FlavourTestName<::testing::TestParamInfo<std::string>>);

}  // namespace
}  // namespace binrelay::testing
