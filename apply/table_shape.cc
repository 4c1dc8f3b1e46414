#include "apply/table_shape.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "apply/sql_literal.h"
#include "protocol/status_macros.h"

namespace binrelay::apply {
namespace {

bool IsIntegerType(std::string_view t) {
  return t == "tinyint" || t == "smallint" || t == "mediumint" || t == "int" || t == "bigint";
}

std::string Value(const replication::SqlRow& row, size_t i) {
  return i < row.size() && row[i] ? *row[i] : std::string();
}

// MariaDB before 10.6 names the 3-byte UTF-8 set "utf8", MySQL 8 and
// MariaDB 10.6+ "utf8mb3" (MariaDB 10.6 release notes; MySQL manual, "The
// utf8mb3 Character Set"): one character set, its collations alike.
std::string CanonicalCharset(std::string_view name) {
  if (name == "utf8") return "utf8mb3";
  if (absl::StartsWith(AV(name), "utf8_")) return absl::StrCat("utf8mb3_", AV(name.substr(5)));
  return std::string(name);
}

// MySQL's JSON type, or MariaDB's: an alias for LONGTEXT with a
// json_valid() CHECK (MariaDB KB, "JSON Data Type"). Both take and give
// back the JSON text; MySQL normalises it on the way in.
bool IsJsonColumn(const ShapeColumn& c) {
  return c.data_type == "json" || (c.data_type == "longtext" && c.json_checked);
}

std::string KeyNames(const TableShape& s, const std::vector<uint32_t>& key) {
  std::vector<std::string> names;
  for (uint32_t i : key) names.push_back(s.columns[i].name);
  return absl::StrCat("(", absl::StrJoin(names, ", "), ")");
}

}  // namespace

std::string NormaliseColumnType(std::string_view column_type, std::string_view data_type) {
  std::string t = absl::AsciiStrToLower(AV(column_type));
  const std::string type = absl::AsciiStrToLower(AV(data_type));
  if (IsIntegerType(type) || type == "year") {
    // Display widths: "int(11)" and "year(4)" on MariaDB and MySQL 5.7,
    // "int" and "year" on MySQL 8 (a width changes no value).
    size_t open = t.find('(');
    size_t close = t.find(')', open);
    if (open != std::string::npos && close != std::string::npos) t.erase(open, close - open + 1);
  }
  return t;
}

absl::StatusOr<TableShape> LoadTableShape(replication::SqlSource& server, std::string_view db,
                                          std::string_view table) {
  std::string where;
  where.append(" WHERE TABLE_SCHEMA = ");
  AppendQuotedString(db, &where);
  where.append(" AND TABLE_NAME = ");
  AppendQuotedString(table, &where);
  BR_ASSIGN_OR_RETURN(
      std::vector<replication::SqlRow> cols,
      server.Query(absl::StrCat(
          "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IFNULL(CHARACTER_SET_NAME, ''), "
          "IFNULL(COLLATION_NAME, ''), EXTRA, IS_NULLABLE FROM information_schema.COLUMNS",
          where, " ORDER BY ORDINAL_POSITION")));
  if (cols.empty()) {
    return absl::NotFoundError(absl::StrCat("table `", AV(db), "`.`", AV(table),
                                            "` does not exist on ", server.Peer()));
  }
  TableShape s;
  s.db = std::string(db);
  s.table = std::string(table);
  for (const auto& row : cols) {
    ShapeColumn c;
    c.name = Value(row, 0);
    c.data_type = absl::AsciiStrToLower(Value(row, 1));
    c.column_type = NormaliseColumnType(Value(row, 2), c.data_type);
    c.charset = Value(row, 3);
    c.collation = Value(row, 4);
    const std::string extra = absl::AsciiStrToUpper(Value(row, 5));
    // "VIRTUAL GENERATED", "STORED GENERATED" (both servers), "PERSISTENT"
    // (old MariaDB); MySQL 8's "DEFAULT_GENERATED" is an expression default,
    // an ordinary column.
    c.generated = absl::StrContains(extra, "VIRTUAL") ||
                  absl::StrContains(extra, "STORED GENERATED") ||
                  absl::StrContains(extra, "PERSISTENT");
    c.nullable = Value(row, 6) != "NO";
    s.columns.push_back(std::move(c));
  }
  // MariaDB's JSON columns are LONGTEXT with a CHECK (json_valid(`c`)) of
  // their own (information_schema.CHECK_CONSTRAINTS, MariaDB 10.2+; MySQL's
  // view has no TABLE_NAME and its JSON is a type of its own).
  bool has_longtext = false;
  for (const ShapeColumn& c : s.columns) has_longtext = has_longtext || c.data_type == "longtext";
  if (has_longtext) {
    std::string sql = absl::StrCat(
        "SELECT CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS WHERE "
        "CONSTRAINT_SCHEMA = ");
    AppendQuotedString(db, &sql);
    sql.append(" AND TABLE_NAME = ");
    AppendQuotedString(table, &sql);
    if (auto checks = server.Query(sql); checks.ok()) {
      for (const auto& row : *checks) {
        const std::string clause = absl::AsciiStrToLower(Value(row, 0));
        for (ShapeColumn& c : s.columns) {
          std::string want = "json_valid(";
          AppendIdentifier(absl::AsciiStrToLower(c.name), &want);
          want.push_back(')');
          if (c.data_type == "longtext" && clause == want) c.json_checked = true;
        }
      }
    }
  }
  BR_ASSIGN_OR_RETURN(
      std::vector<replication::SqlRow> idx,
      server.Query(absl::StrCat("SELECT INDEX_NAME, NON_UNIQUE, COLUMN_NAME FROM "
                                "information_schema.STATISTICS",
                                where, " ORDER BY INDEX_NAME = 'PRIMARY' DESC, INDEX_NAME, "
                                "SEQ_IN_INDEX")));
  std::string current;
  std::vector<uint32_t>* key = nullptr;
  for (const auto& row : idx) {
    const std::string name = Value(row, 0);
    if (Value(row, 1) != "0") continue;  // not unique
    if (name != current || key == nullptr) {
      current = name;
      if (name == "PRIMARY") {
        key = &s.primary_key;
      } else {
        s.unique_keys.emplace_back();
        key = &s.unique_keys.back();
      }
    }
    const std::string column = Value(row, 2);
    for (uint32_t i = 0; i < s.columns.size(); ++i) {
      if (s.columns[i].name == column) key->push_back(i);
    }
  }
  // MySQL 8 functional index parts have no column: such an index is left
  // out (it cannot be partitioned on).
  s.unique_keys.erase(std::remove_if(s.unique_keys.begin(), s.unique_keys.end(),
                                     [](const std::vector<uint32_t>& k) { return k.empty(); }),
                      s.unique_keys.end());
  return s;
}

absl::StatusOr<bool> TableExists(replication::SqlSource& server, std::string_view db,
                                 std::string_view table) {
  std::string sql = "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ";
  AppendQuotedString(db, &sql);
  sql.append(" AND TABLE_NAME = ");
  AppendQuotedString(table, &sql);
  BR_ASSIGN_OR_RETURN(auto rows, server.Query(sql));
  return !rows.empty() && !rows[0].empty() && rows[0][0] && *rows[0][0] != "0";
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ListTables(
    replication::SqlSource& server) {
  BR_ASSIGN_OR_RETURN(
      std::vector<replication::SqlRow> rows,
      server.Query("SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE "
                   "TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA NOT IN ('mysql', "
                   "'information_schema', 'performance_schema', 'sys') ORDER BY 1, 2"));
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& row : rows) out.emplace_back(Value(row, 0), Value(row, 1));
  return out;
}

absl::Status CheckTargetShape(const TableShape& source, const TableShape& target,
                              std::string_view target_name) {
  auto fail = [&](const std::string& what) {
    return absl::FailedPreconditionError(absl::StrCat(
        AV(target_name), " cannot take the rows of source table `", source.db, "`.`",
        source.table, "`: ", what, "; make the target table match (nothing was written)"));
  };
  if (source.primary_key.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "source table `", source.db, "`.`", source.table,
        "` has no primary key: apply pipelines key their buffers by it; add one or leave "
        "the table out of `tables`"));
  }
  const size_t n = std::max(source.columns.size(), target.columns.size());
  for (size_t i = 0; i < n; ++i) {
    if (i >= target.columns.size()) {
      return fail(absl::StrCat("the target lacks column ", i + 1, " `", source.columns[i].name,
                               "`"));
    }
    if (i >= source.columns.size()) {
      return fail(absl::StrCat("the target has an extra column ", i + 1, " `",
                               target.columns[i].name, "`"));
    }
    const ShapeColumn& s = source.columns[i];
    const ShapeColumn& t = target.columns[i];
    if (s.name != t.name) {
      return fail(absl::StrCat("column ", i + 1, " is `", s.name, "` on the source but `",
                               t.name, "` on the target"));
    }
    if (IsJsonColumn(s) && IsJsonColumn(t)) {
      // JSON on both sides (MySQL's type or MariaDB's checked LONGTEXT):
      // the text travels as utf8mb4 whatever each side reports.
      if (s.generated != t.generated) {
        return fail(absl::StrCat("column `", s.name, "` is generated on one side only"));
      }
      continue;
    }
    if (s.column_type != t.column_type) {
      return fail(absl::StrCat("column `", s.name, "` is ", s.column_type,
                               " on the source but ", t.column_type, " on the target"));
    }
    if (CanonicalCharset(s.charset) != CanonicalCharset(t.charset)) {
      return fail(absl::StrCat("column `", s.name, "` has character set '", s.charset,
                               "' on the source but '", t.charset, "' on the target"));
    }
    if (CanonicalCharset(s.collation) != CanonicalCharset(t.collation)) {
      return fail(absl::StrCat("column `", s.name, "` has collation '", s.collation,
                               "' on the source but '", t.collation,
                               "' on the target (keys and unique values would compare "
                               "differently)"));
    }
    if (s.generated != t.generated) {
      return fail(absl::StrCat("column `", s.name, "` is ", s.generated ? "" : "not ",
                               "generated on the source but ", t.generated ? "" : "not ",
                               "generated on the target"));
    }
  }
  auto sorted_keys = [](const TableShape& t) {
    auto keys = t.unique_keys;
    std::sort(keys.begin(), keys.end());
    return keys;
  };
  if (sorted_keys(source) != sorted_keys(target)) {
    return fail("the UNIQUE indexes differ (a REPLACE would delete rows the source keeps, or "
                "keep rows the source cannot hold); give the target the source's unique indexes");
  }
  if (source.primary_key != target.primary_key) {
    return fail(absl::StrCat("the primary key is ", KeyNames(source, source.primary_key),
                             " on the source but ",
                             target.primary_key.empty() ? std::string("absent")
                                                        : KeyNames(target, target.primary_key),
                             " on the target"));
  }
  return absl::OkStatus();
}

bool KeyIsMemComparable(const TableShape& target) {
  for (uint32_t i : target.primary_key) {
    const ShapeColumn& c = target.columns[i];
    const std::string& t = c.data_type;
    if (IsIntegerType(t) || t == "decimal" || t == "date" || t == "time" || t == "datetime" ||
        t == "timestamp" || t == "year" || t == "bit" || t == "enum" || t == "set") {
      continue;
    }
    if ((t == "binary" || t == "varbinary" || absl::EndsWith(t, "blob")) && c.charset.empty()) {
      continue;
    }
    return false;  // character data under a collation, FLOAT/DOUBLE (-0 = 0), anything else
  }
  return true;
}

}  // namespace binrelay::apply
