#include "apply/ddl_tables.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace binrelay::apply {
namespace {

struct Token {
  std::string text;  // identifiers unquoted; keywords as written
  bool quoted = false;
  char punct = 0;    // '.', ',', '(', ')', ';' or 0 for words
};

// Bounded by the statement's length: every step consumes at least a byte.
std::vector<Token> Tokenise(std::string_view q) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < q.size()) {
    char c = q[i];
    if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '/' && i + 2 < q.size() && q[i + 1] == '*' &&
               (q[i + 2] == '!' || (q[i + 2] == 'M' && i + 3 < q.size() && q[i + 3] == '!'))) {
      // An executable comment: its text is part of the statement.
      i += q[i + 2] == '!' ? 3 : 4;
      while (i < q.size() && absl::ascii_isdigit(static_cast<unsigned char>(q[i]))) ++i;
    } else if (c == '*' && i + 1 < q.size() && q[i + 1] == '/') {
      i += 2;  // the end of an executable comment
    } else if (c == '/' && i + 1 < q.size() && q[i + 1] == '*') {
      size_t end = q.find("*/", i + 2);
      i = end == std::string_view::npos ? q.size() : end + 2;
    } else if ((c == '-' && i + 2 < q.size() && q[i + 1] == '-' &&
                absl::ascii_isspace(static_cast<unsigned char>(q[i + 2]))) ||
               c == '#') {
      size_t end = q.find('\n', i);
      i = end == std::string_view::npos ? q.size() : end + 1;
    } else if (c == '`' || c == '"' || c == '\'') {
      Token t;
      t.quoted = true;
      ++i;
      while (i < q.size()) {
        if (q[i] == c) {
          if (i + 1 < q.size() && q[i + 1] == c) {
            t.text.push_back(c);
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        if (c != '`' && q[i] == '\\' && i + 1 < q.size()) ++i;
        t.text.push_back(q[i++]);
      }
      if (c == '\'') t.punct = '\'';  // a string literal, not a name
      out.push_back(std::move(t));
    } else if (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
               static_cast<unsigned char>(c) >= 0x80) {
      Token t;
      while (i < q.size() && (absl::ascii_isalnum(static_cast<unsigned char>(q[i])) ||
                              q[i] == '_' || q[i] == '$' ||
                              static_cast<unsigned char>(q[i]) >= 0x80)) {
        t.text.push_back(q[i++]);
      }
      out.push_back(std::move(t));
    } else {
      Token t;
      t.punct = c;
      out.push_back(std::move(t));
      ++i;
    }
  }
  return out;
}

bool Is(const std::vector<Token>& t, size_t i, std::string_view word) {
  return i < t.size() && !t[i].quoted && t[i].punct == 0 &&
         absl::EqualsIgnoreCase(t[i].text, absl::string_view(word.data(), word.size()));
}

bool IsName(const std::vector<Token>& t, size_t i) {
  return i < t.size() && t[i].punct == 0;
}

// Reads [db.]name at *i; false if none.
bool ReadName(const std::vector<Token>& t, size_t* i, std::string_view default_db,
              DdlTarget* out) {
  if (!IsName(t, *i)) return false;
  if (*i + 2 < t.size() && t[*i + 1].punct == '.' && IsName(t, *i + 2)) {
    out->db = t[*i].text;
    out->table = t[*i + 2].text;
    *i += 3;
    return true;
  }
  out->db = std::string(default_db);
  out->table = t[*i].text;
  *i += 1;
  return true;
}

// Within an ADD ... FOREIGN KEY clause [from, to): the first referential
// action InnoDB carries out without logging it (MySQL manual, "FOREIGN KEY
// Constraints": "cascading foreign key actions do not activate triggers"
// and are not written to the binary log as row events), as written; empty
// if none (RESTRICT, NO ACTION or no ON clause).
std::string UnloggedAction(const std::vector<Token>& t, size_t from, size_t to) {
  for (size_t j = from; j < to; ++j) {
    if (!Is(t, j, "ON") || !(Is(t, j + 1, "DELETE") || Is(t, j + 1, "UPDATE"))) continue;
    const std::string on = absl::StrCat("ON ", absl::AsciiStrToUpper(t[j + 1].text));
    if (Is(t, j + 2, "CASCADE")) return absl::StrCat(on, " CASCADE");
    if (Is(t, j + 2, "SET") && (Is(t, j + 3, "NULL") || Is(t, j + 3, "DEFAULT"))) {
      return absl::StrCat(on, " SET ", absl::AsciiStrToUpper(t[j + 3].text));
    }
  }
  return "";
}

// ALTER TABLE t <clauses>: true if every top-level clause is
// ADD [CONSTRAINT [name]] FOREIGN KEY ... or DROP FOREIGN KEY name. The
// first unlogged referential action of an added key goes to *action.
bool OnlyForeignKeyClauses(const std::vector<Token>& t, size_t i, std::string* action) {
  if (i >= t.size()) return false;
  bool any = false;
  while (i < t.size()) {
    size_t clause = i;
    bool fk = false;
    if (Is(t, clause, "ADD")) {
      size_t j = clause + 1;
      if (Is(t, j, "CONSTRAINT")) {
        ++j;
        if (!Is(t, j, "FOREIGN") && IsName(t, j)) ++j;
      }
      fk = Is(t, j, "FOREIGN") && Is(t, j + 1, "KEY");
    } else if (Is(t, clause, "DROP")) {
      fk = Is(t, clause + 1, "FOREIGN") && Is(t, clause + 2, "KEY");
    }
    if (!fk) return false;
    any = true;
    // Skip to the next top-level comma.
    int depth = 0;
    for (; i < t.size(); ++i) {
      if (t[i].punct == '(') ++depth;
      if (t[i].punct == ')') --depth;
      if (depth == 0 && (t[i].punct == ',' || t[i].punct == ';')) break;
    }
    if (action->empty() && Is(t, clause, "ADD")) *action = UnloggedAction(t, clause, i);
    if (i < t.size()) ++i;
  }
  return any;
}

}  // namespace

std::vector<DdlTarget> DdlTables(std::string_view default_db, std::string_view query) {
  std::vector<Token> t = Tokenise(query);
  std::vector<DdlTarget> out;
  size_t i = 0;
  DdlTarget name;
  // SET STATEMENT var = value [, ...] FOR <statement>
  if (Is(t, 0, "SET") && Is(t, 1, "STATEMENT")) {
    size_t j = 2;
    int depth = 0;
    for (; j < t.size(); ++j) {
      if (t[j].punct == '(') ++depth;
      if (t[j].punct == ')') --depth;
      if (depth == 0 && Is(t, j, "FOR")) break;
    }
    if (j >= t.size()) return out;
    t.erase(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(j + 1));
  }
  // Row changes written as statements.
  if (Is(t, 0, "INSERT") || Is(t, 0, "REPLACE") || Is(t, 0, "UPDATE") || Is(t, 0, "DELETE") ||
      (Is(t, 0, "LOAD") && (Is(t, 1, "DATA") || Is(t, 1, "XML")))) {
    size_t j = 1;
    if (Is(t, 0, "LOAD")) {
      while (j < t.size() && !(Is(t, j, "INTO") && Is(t, j + 1, "TABLE"))) ++j;
      j += 2;
    } else {
      while (Is(t, j, "LOW_PRIORITY") || Is(t, j, "DELAYED") || Is(t, j, "HIGH_PRIORITY") ||
             Is(t, j, "IGNORE") || Is(t, j, "QUICK") || Is(t, j, "INTO") || Is(t, j, "FROM")) {
        ++j;
      }
    }
    if (ReadName(t, &j, default_db, &name)) {
      name.dml = true;
      out.push_back(name);
    }
    return out;
  }
  if (Is(t, 0, "DROP") && (Is(t, 1, "DATABASE") || Is(t, 1, "SCHEMA"))) {
    i = 2;
    if (Is(t, i, "IF") && Is(t, i + 1, "EXISTS")) i += 2;
    if (IsName(t, i)) out.push_back(DdlTarget{t[i].text, "", false, true, false});
    return out;
  }
  if (Is(t, 0, "ALTER")) {
    i = 1;
    while (Is(t, i, "ONLINE") || Is(t, i, "IGNORE")) ++i;
    if (!Is(t, i, "TABLE")) return out;
    ++i;
    if (Is(t, i, "IF") && Is(t, i + 1, "EXISTS")) i += 2;
    if (!ReadName(t, &i, default_db, &name)) return out;
    std::string action;
    if (OnlyForeignKeyClauses(t, i, &action)) {
      if (!action.empty()) {
        name.unlogged_action = std::move(action);
        out.push_back(std::move(name));
      }
      return out;
    }
    name.redefines = true;
    out.push_back(name);
    // ALTER TABLE a RENAME [TO|AS] b: the new name is changed too; so is
    // the table of EXCHANGE PARTITION p WITH TABLE b.
    for (size_t j = i; j < t.size(); ++j) {
      if (Is(t, j, "WITH") && Is(t, j + 1, "TABLE")) {
        size_t k = j + 2;
        DdlTarget other;
        if (ReadName(t, &k, default_db, &other)) out.push_back(other);
      }
      if (Is(t, j, "RENAME") && !Is(t, j + 1, "COLUMN") && !Is(t, j + 1, "INDEX") &&
          !Is(t, j + 1, "KEY")) {
        size_t k = j + 1;
        if (Is(t, k, "TO") || Is(t, k, "AS")) ++k;
        DdlTarget renamed;
        renamed.redefines = true;
        renamed.appears = true;
        if (ReadName(t, &k, default_db, &renamed)) out.push_back(renamed);
      }
    }
    return out;
  }
  if (Is(t, 0, "CREATE") || Is(t, 0, "DROP")) {
    const bool create = Is(t, 0, "CREATE");
    i = 1;
    bool or_replace = false;
    if (create && Is(t, i, "OR") && Is(t, i + 1, "REPLACE")) {
      i += 2;
      or_replace = true;
    }
    while (Is(t, i, "TEMPORARY") || Is(t, i, "UNIQUE") || Is(t, i, "FULLTEXT") ||
           Is(t, i, "SPATIAL") || Is(t, i, "ONLINE")) {
      ++i;
    }
    if (Is(t, i, "INDEX")) {
      for (size_t j = i; j < t.size(); ++j) {
        if (Is(t, j, "ON")) {
          size_t k = j + 1;
          if (ReadName(t, &k, default_db, &name)) out.push_back(name);
          break;
        }
      }
      return out;
    }
    if (!Is(t, i, "TABLE") && !Is(t, i, "TABLES")) return out;
    ++i;
    bool if_not_exists = false;
    if (Is(t, i, "IF") && Is(t, i + 1, "NOT") && Is(t, i + 2, "EXISTS")) {
      i += 3;
      if_not_exists = true;
    }
    if (Is(t, i, "IF") && Is(t, i + 1, "EXISTS")) i += 2;
    while (ReadName(t, &i, default_db, &name)) {
      name.redefines = true;
      name.appears = create && (or_replace || !if_not_exists);
      out.push_back(name);
      if (create || i >= t.size() || t[i].punct != ',') break;
      ++i;
    }
    return out;
  }
  if (Is(t, 0, "RENAME") && (Is(t, 1, "TABLE") || Is(t, 1, "TABLES"))) {
    i = 2;
    if (Is(t, i, "IF") && Is(t, i + 1, "EXISTS")) i += 2;
    bool destination = false;  // names alternate: old, new, old, new
    while (ReadName(t, &i, default_db, &name)) {
      name.redefines = true;
      name.appears = destination;
      destination = !destination;
      out.push_back(name);
      if (Is(t, i, "TO") || Is(t, i, "WAIT") || Is(t, i, "NOWAIT")) {
        if (Is(t, i, "WAIT")) i += 2;
        if (Is(t, i, "NOWAIT")) ++i;
        if (Is(t, i, "TO")) ++i;
        continue;
      }
      if (i < t.size() && t[i].punct == ',') {
        ++i;
        continue;
      }
      break;
    }
    return out;
  }
  if (Is(t, 0, "TRUNCATE")) {
    i = 1;
    if (Is(t, i, "TABLE")) ++i;
    if (ReadName(t, &i, default_db, &name)) out.push_back(name);
    return out;
  }
  return out;
}

std::vector<UnloggedForeignKey> UnloggedForeignKeys(std::string_view create_table) {
  const std::vector<Token> t = Tokenise(create_table);
  std::vector<UnloggedForeignKey> out;
  int depth = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].punct == '(') ++depth;
    if (t[i].punct == ')') --depth;
    if (depth != 1 || !Is(t, i, "FOREIGN") || !Is(t, i + 1, "KEY")) continue;
    UnloggedForeignKey key;
    if (i >= 2 && Is(t, i - 2, "CONSTRAINT") && IsName(t, i - 1)) key.name = t[i - 1].text;
    // The clause runs to the next comma of the column list, or its end.
    size_t end = i;
    for (int d = 1; end < t.size(); ++end) {
      if (t[end].punct == '(') ++d;
      if (t[end].punct == ')' && --d == 0) break;
      if (d == 1 && t[end].punct == ',') break;
    }
    key.action = UnloggedAction(t, i, end);
    if (!key.action.empty()) out.push_back(std::move(key));
    i = end > i ? end - 1 : i;
  }
  return out;
}

}  // namespace binrelay::apply
