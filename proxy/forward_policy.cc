#include "proxy/forward_policy.h"

#include <algorithm>
#include <array>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"
#include "proxy/sql_tokens.h"

namespace binrelay::proxy {
namespace {

using Kind = SqlToken::Kind;

// Statements that change something: refused as by a read-only server.
constexpr std::array kWriteKeywords = {
    "INSERT",  "UPDATE",   "DELETE",    "REPLACE",  "CREATE",   "DROP",     "ALTER",
    "TRUNCATE", "RENAME",  "GRANT",     "REVOKE",   "LOAD",     "CALL",     "DO",
    "HANDLER", "LOCK",     "UNLOCK",    "FLUSH",    "RESET",    "CHANGE",   "START",
    "STOP",    "SAVEPOINT", "RELEASE",  "XA",       "INSTALL",  "UNINSTALL", "OPTIMIZE",
    "ANALYZE", "REPAIR",   "CHECK",     "CHECKSUM", "PREPARE",  "EXECUTE",  "DEALLOCATE",
    "SHUTDOWN", "BINLOG",  "PURGE",     "SET",      "CACHE",    "BACKUP",   "IMPORT",
    "CLONE",   "RESTART",  "SIGNAL",    "RESIGNAL", "UPGRADE"};

// Functions a forwarded SELECT may not call: they wait, lock, read files or
// act on replication.
constexpr std::array kDeniedFunctions = {
    "sleep", "benchmark", "get_lock", "release_lock", "release_all_locks", "is_free_lock",
    "is_used_lock", "load_file", "master_pos_wait", "source_pos_wait", "master_gtid_wait",
    "wait_for_executed_gtid_set", "wait_until_sql_thread_after_gtids", "sys_exec", "sys_eval",
    "get_format", "uuid_short", "row_count", "found_rows", "last_insert_id", "nextval",
    "setval", "lastval"};

class Classifier {
 public:
  Classifier(std::string_view sql, const std::vector<SqlToken>& t, std::string_view db)
      : sql_(sql), t_(t), db_(db) {}

  bool Word(size_t i, std::string_view w) const { return i < t_.size() && IsKeyword(sql_, t_[i], w); }
  std::string Upper(size_t i) const {
    return absl::AsciiStrToUpper(AV(TokenText(sql_, t_[i])));
  }

  // The allowed SHOW forms (after SHOW at index 0).
  bool AllowedShow() const {
    size_t i = 1;
    if (Word(i, "full") || Word(i, "extended")) ++i;
    if (Word(i, "full")) ++i;
    if (Word(i, "columns") || Word(i, "fields") || Word(i, "index") || Word(i, "indexes") ||
        Word(i, "keys") || Word(i, "tables") || Word(i, "databases") || Word(i, "schemas") ||
        Word(i, "charset") || Word(i, "collation") || Word(i, "engines") ||
        Word(i, "triggers")) {
      return true;
    }
    if (Word(i, "create")) {
      return Word(i + 1, "table") || Word(i + 1, "view") || Word(i + 1, "database") ||
             Word(i + 1, "schema");
    }
    if (Word(i, "table") && Word(i + 1, "status")) return true;
    if (Word(i, "character") && Word(i + 1, "set")) return true;
    return false;
  }

  // DESCRIBE t [col] / EXPLAIN t: a table, not EXPLAIN SELECT.
  bool AllowedDescribe() const {
    size_t i = 1;
    if (Word(i, "select") || Word(i, "update") || Word(i, "delete") || Word(i, "insert") ||
        Word(i, "replace") || Word(i, "format") || Word(i, "extended") ||
        Word(i, "partitions") || Word(i, "analyze") || Word(i, "for")) {
      return false;
    }
    return t_[i].kind == Kind::kWord || t_[i].kind == Kind::kQuoted;
  }

  // A SELECT reading only information_schema (or nothing and no variables).
  bool AllowedSelect(std::string* reason) const {
    bool any_table = false;
    bool variables = false;
    for (size_t i = 0; i < t_.size(); ++i) {
      const SqlToken& tok = t_[i];
      if (tok.kind == Kind::kAt || tok.kind == Kind::kAtAt) variables = true;
      if (IsSymbol(sql_, tok, ';')) {
        *reason = "more than one statement";
        return false;
      }
      if (Word(i, "into") || (Word(i, "for") && (Word(i + 1, "update") || Word(i + 1, "share"))) ||
          (Word(i, "lock") && Word(i + 1, "in"))) {
        *reason = absl::StrCat("a SELECT with ", Upper(i), " (binrelay forwards reads only)");
        return false;
      }
      if (tok.kind == Kind::kWord && !tok.backticked && i + 1 < t_.size() &&
          IsSymbol(sql_, t_[i + 1], '(')) {
        std::string f = absl::AsciiStrToLower(AV(TokenText(sql_, tok)));
        if (std::find(kDeniedFunctions.begin(), kDeniedFunctions.end(), f) !=
            kDeniedFunctions.end()) {
          *reason = absl::StrCat("a SELECT calling ", absl::AsciiStrToUpper(f), "()");
          return false;
        }
      }
      const bool from = Word(i, "from");
      if (from || Word(i, "join") || Word(i, "straight_join")) {
        size_t j = i + 1;
        while (true) {
          if (j >= t_.size() || IsSymbol(sql_, t_[j], '(')) break;  // a subquery: scanned as we go
          any_table = true;
          if (!InformationSchemaTable(&j, reason)) return false;
          // [AS] alias, then another table of a FROM list after ','.
          if (Word(j, "as")) ++j;
          if (j < t_.size() && t_[j].kind == Kind::kWord && !IsClauseWord(j)) ++j;
          if (!from || j >= t_.size() || !IsSymbol(sql_, t_[j], ',')) break;
          ++j;
        }
      }
    }
    if (!any_table && variables) {
      *reason = "a SELECT of variables that binrelay does not answer itself";
      return false;
    }
    return true;
  }

 private:
  bool IsClauseWord(size_t j) const {
    for (const char* w : {"where", "join", "left", "right", "inner", "outer", "cross", "natural",
                          "straight_join", "on", "using", "group", "order", "limit", "having",
                          "union", "window", "for", "lock", "into", "procedure"}) {
      if (Word(j, w)) return true;
    }
    return false;
  }

  // The source's thread list is not for binrelay's clients to read through
  // forward_user (it would bypass SHOW PROCESSLIST's per-user view).
  static bool NotProcesslist(const std::string& table, std::string* reason) {
    if (!absl::EqualsIgnoreCase(table, "processlist")) return true;
    *reason = "a SELECT from information_schema.PROCESSLIST (the source's threads; use SHOW "
              "PROCESSLIST for binrelay's)";
    return false;
  }

  // A table name at *j ([db.]table); advances past it.
  bool InformationSchemaTable(size_t* j, std::string* reason) const {
    const SqlToken& a = t_[*j];
    if (a.kind != Kind::kWord) {
      *reason = "a SELECT from something other than a table name";
      return false;
    }
    std::string first = TokenValue(sql_, a);
    if (*j + 2 < t_.size() && IsSymbol(sql_, t_[*j + 1], '.')) {
      std::string table = TokenValue(sql_, t_[*j + 2]);
      *j += 3;
      if (absl::EqualsIgnoreCase(first, "information_schema")) return NotProcesslist(table, reason);
      *reason = absl::StrCat("a SELECT from ", first, ".", table,
                             " (binrelay forwards reads of information_schema only)");
      return false;
    }
    *j += 1;
    if (absl::EqualsIgnoreCase(AV(db_), "information_schema")) return NotProcesslist(first, reason);
    *reason = absl::StrCat("a SELECT from ", first,
                           " (binrelay forwards reads of information_schema only)");
    return false;
  }

  std::string_view sql_;
  const std::vector<SqlToken>& t_;
  std::string_view db_;
};

}  // namespace

ForwardDecision ClassifyStatement(std::string_view sql, std::string_view default_db) {
  ForwardDecision d;
  auto tokens = TokenizeSql(sql);
  if (!tokens.ok()) {
    d.reason = std::string(tokens.status().message());
    return d;
  }
  const std::vector<SqlToken>& t = *tokens;
  if (t.front().kind == SqlToken::Kind::kEnd) {
    d.reason = "an empty statement";
    return d;
  }
  Classifier c(sql, t, default_db);
  size_t first = 0;
  while (first < t.size() && IsSymbol(sql, t[first], '(')) ++first;  // (SELECT ...) UNION ...
  d.keyword = c.Upper(first);
  if (d.keyword == "SHOW") {
    if (c.AllowedShow()) d.kind = ForwardDecision::Kind::kForward;
    return d;
  }
  if (d.keyword == "DESCRIBE" || d.keyword == "DESC" || d.keyword == "EXPLAIN") {
    if (c.AllowedDescribe()) d.kind = ForwardDecision::Kind::kForward;
    return d;
  }
  if (d.keyword == "SELECT") {
    if (c.AllowedSelect(&d.reason)) d.kind = ForwardDecision::Kind::kForward;
    return d;
  }
  if (std::find(kWriteKeywords.begin(), kWriteKeywords.end(), d.keyword) != kWriteKeywords.end()) {
    d.kind = ForwardDecision::Kind::kWrite;
  }
  return d;
}

}  // namespace binrelay::proxy
