#include "proxy/admin_parser.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"

namespace binrelay::proxy {
namespace {

struct Token {
  enum class Kind { kEnd, kWord, kQuoted, kNumber, kAt, kAtAt, kSymbol };
  Kind kind = Kind::kEnd;
  std::string value;  // words as written; quoted strings unescaped; symbols
  size_t begin = 0;   // byte offsets into the statement
  size_t end = 0;
};

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// Quoted string or backtick identifier starting at sql[*pos]; handles doubled
// quotes and backslash escapes (the statements replicas send use neither,
// but an unterminated quote must be an error, not a read past the end).
absl::Status ReadQuoted(std::string_view sql, size_t* pos, std::string* out) {
  const char quote = sql[*pos];
  size_t i = *pos + 1;
  while (i < sql.size()) {
    char c = sql[i];
    if (c == '\\' && quote != '`' && i + 1 < sql.size()) {
      char e = sql[i + 1];
      // As MySQL: "\%" and "\_" keep their backslash (they matter to LIKE).
      if (e == '%' || e == '_') out->push_back('\\');
      out->push_back(e == 'n' ? '\n' : e == 't' ? '\t' : e == '0' ? '\0' : e);
      i += 2;
    } else if (c == quote) {
      if (i + 1 < sql.size() && sql[i + 1] == quote) {
        out->push_back(quote);
        i += 2;
      } else {
        *pos = i + 1;
        return absl::OkStatus();
      }
    } else {
      out->push_back(c);
      ++i;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unterminated ", std::string(1, quote), " quote starting at byte ", *pos));
}

absl::StatusOr<std::vector<Token>> Tokenize(std::string_view sql) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < sql.size()) {
    char c = sql[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      size_t close = sql.find("*/", i + 2);
      if (close == std::string_view::npos) {
        return absl::InvalidArgumentError(absl::StrCat("unterminated comment at byte ", i));
      }
      i = close + 2;
      continue;
    }
    Token t;
    t.begin = i;
    if (c == '\'' || c == '"' || c == '`') {
      t.kind = c == '`' ? Token::Kind::kWord : Token::Kind::kQuoted;
      BR_RETURN_IF_ERROR(ReadQuoted(sql, &i, &t.value));
    } else if (c == '@') {
      bool two = i + 1 < sql.size() && sql[i + 1] == '@';
      t.kind = two ? Token::Kind::kAtAt : Token::Kind::kAt;
      i += two ? 2 : 1;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      t.kind = Token::Kind::kNumber;
      while (i < sql.size() && (std::isdigit(static_cast<unsigned char>(sql[i])) || sql[i] == '.')) {
        t.value.push_back(sql[i++]);
      }
    } else if (IsWordChar(c)) {
      t.kind = Token::Kind::kWord;
      while (i < sql.size() && IsWordChar(sql[i])) t.value.push_back(sql[i++]);
    } else if (c == ':' && i + 1 < sql.size() && sql[i + 1] == '=') {
      t.kind = Token::Kind::kSymbol;
      t.value = "=";  // ':=' and '=' mean the same in SET
      i += 2;
    } else {
      t.kind = Token::Kind::kSymbol;
      t.value = std::string(1, c);
      ++i;
    }
    t.end = i;
    tokens.push_back(std::move(t));
  }
  // Trailing semicolons are harmless; a semicolon elsewhere is a second
  // statement, which the expression parser refuses as unexpected input.
  while (!tokens.empty() && tokens.back().kind == Token::Kind::kSymbol &&
         tokens.back().value == ";") {
    tokens.pop_back();
  }
  Token end;
  end.begin = end.end = sql.size();
  tokens.push_back(end);
  return tokens;
}

class Parser {
 public:
  Parser(std::string_view sql, std::vector<Token> tokens) : sql_(sql), t_(std::move(tokens)) {}

  absl::StatusOr<AdminStatement> Statement();

 private:
  const Token& Peek(size_t ahead = 0) const { return t_[std::min(pos_ + ahead, t_.size() - 1)]; }
  bool AtEnd() const { return Peek().kind == Token::Kind::kEnd; }
  bool IsWord(std::string_view w, size_t ahead = 0) const {
    const Token& t = Peek(ahead);
    return t.kind == Token::Kind::kWord && absl::EqualsIgnoreCase(AV(t.value), AV(w));
  }
  bool IsSymbol(char s) const {
    return Peek().kind == Token::Kind::kSymbol && Peek().value.size() == 1 && Peek().value[0] == s;
  }
  bool AcceptWord(std::string_view w) {
    if (!IsWord(w)) return false;
    ++pos_;
    return true;
  }
  bool AcceptSymbol(char s) {
    if (!IsSymbol(s)) return false;
    ++pos_;
    return true;
  }
  bool AcceptWords(std::initializer_list<std::string_view> words) {
    size_t i = 0;
    for (std::string_view w : words) {
      if (!IsWord(w, i++)) return false;
    }
    pos_ += words.size();
    return true;
  }
  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(
        "syntax error at byte ", Peek().begin, " near '", AV(sql_.substr(Peek().begin, 20)),
        "': expected ", AV(what)));
  }
  absl::Status ExpectEnd() const { return AtEnd() ? absl::OkStatus() : Error("end of statement"); }
  std::string Text(size_t first_token) const {
    size_t b = t_[first_token].begin, e = t_[pos_ - 1].end;
    return std::string(sql_.substr(b, e - b));
  }

  absl::StatusOr<std::string> Name();
  absl::StatusOr<AdminExpr> Expr();
  absl::StatusOr<AdminStatement> Set();
  absl::StatusOr<AdminStatement> Select();
  absl::StatusOr<AdminStatement> Show();
  absl::StatusOr<AdminStatement> Purge();
  // Parses [GLOBAL.|SESSION.|LOCAL.]name after '@@'.
  absl::Status SystemVariable(std::string* scope, std::string* name);

  std::string_view sql_;
  std::vector<Token> t_;
  size_t pos_ = 0;
};

absl::StatusOr<std::string> Parser::Name() {
  const Token& t = Peek();
  if (t.kind != Token::Kind::kWord && t.kind != Token::Kind::kQuoted) return Error("a name");
  ++pos_;
  return absl::AsciiStrToLower(AV(t.value));
}

absl::Status Parser::SystemVariable(std::string* scope, std::string* name) {
  for (std::string_view s : {"global", "session", "local"}) {
    if (IsWord(s) && Peek(1).kind == Token::Kind::kSymbol && Peek(1).value == ".") {
      *scope = s == "local" ? "session" : std::string(s);
      pos_ += 2;
      break;
    }
  }
  BR_ASSIGN_OR_RETURN(*name, Name());
  return absl::OkStatus();
}

absl::StatusOr<AdminExpr> Parser::Expr() {
  const size_t first = pos_;
  AdminExpr e;
  const Token& t = Peek();
  if (t.kind == Token::Kind::kQuoted) {
    e.kind = AdminExpr::Kind::kString;
    e.value = t.value;
    ++pos_;
  } else if (t.kind == Token::Kind::kNumber || (IsSymbol('-') && Peek(1).kind == Token::Kind::kNumber)) {
    e.kind = AdminExpr::Kind::kNumber;
    if (AcceptSymbol('-')) e.value = "-";
    e.value += Peek().value;
    ++pos_;
  } else if (t.kind == Token::Kind::kAt) {
    ++pos_;
    e.kind = AdminExpr::Kind::kUserVar;
    BR_ASSIGN_OR_RETURN(e.value, Name());
  } else if (t.kind == Token::Kind::kAtAt) {
    ++pos_;
    e.kind = AdminExpr::Kind::kSystemVar;
    BR_RETURN_IF_ERROR(SystemVariable(&e.scope, &e.value));
  } else if (t.kind == Token::Kind::kWord) {
    ++pos_;
    if (AcceptSymbol('(')) {
      e.kind = AdminExpr::Kind::kFunction;
      e.value = absl::AsciiStrToLower(AV(t.value));
      if (!AcceptSymbol(')')) {
        do {
          BR_ASSIGN_OR_RETURN(AdminExpr arg, Expr());
          e.args.push_back(std::move(arg));
        } while (AcceptSymbol(','));
        if (!AcceptSymbol(')')) return Error("')'");
      }
    } else {
      e.kind = AdminExpr::Kind::kIdentifier;
      e.value = t.value;
    }
  } else {
    // Not one of the expression forms replicas use (e.g. '*', a subquery):
    // unsupported rather than a syntax error.
    return absl::UnimplementedError(
        absl::StrCat("expression at byte ", t.begin, " of a SELECT or SET"));
  }
  e.text = Text(first);
  return e;
}

absl::StatusOr<AdminStatement> Parser::Set() {
  AdminStatement s;
  s.kind = AdminStatement::Kind::kSet;
  do {
    AdminAssignment a;
    if (AcceptWord("names")) {
      // SET NAMES cs [COLLATE c]: connection charset; recorded, not acted on.
      a.name = "names";
      BR_ASSIGN_OR_RETURN(a.value, Expr());
      if (AcceptWord("collate")) BR_RETURN_IF_ERROR(Expr().status());
      s.assignments.push_back(std::move(a));
      continue;
    }
    if (Peek().kind == Token::Kind::kAt) {
      ++pos_;
      a.user_variable = true;
      BR_ASSIGN_OR_RETURN(a.name, Name());
    } else if (Peek().kind == Token::Kind::kAtAt) {
      ++pos_;
      BR_RETURN_IF_ERROR(SystemVariable(&a.scope, &a.name));
    } else {
      if (AcceptWord("global")) {
        a.scope = "global";
      } else if (AcceptWord("session") || AcceptWord("local")) {
        a.scope = "session";
      }
      BR_ASSIGN_OR_RETURN(a.name, Name());
    }
    if (!AcceptSymbol('=')) return Error("'=' or ':='");
    BR_ASSIGN_OR_RETURN(a.value, Expr());
    s.assignments.push_back(std::move(a));
  } while (AcceptSymbol(','));
  BR_RETURN_IF_ERROR(ExpectEnd());
  return s;
}

absl::StatusOr<AdminStatement> Parser::Select() {
  AdminStatement s;
  s.kind = AdminStatement::Kind::kSelect;
  do {
    BR_ASSIGN_OR_RETURN(AdminExpr e, Expr());
    bool as = AcceptWord("as");
    if (as || (Peek().kind == Token::Kind::kWord && !IsWord("from") && !IsWord("limit")) ||
        Peek().kind == Token::Kind::kQuoted) {
      if (Peek().kind != Token::Kind::kWord && Peek().kind != Token::Kind::kQuoted) {
        return Error("an alias");
      }
      e.text = Peek().value;
      ++pos_;
    }
    s.items.push_back(std::move(e));
  } while (AcceptSymbol(','));
  if (AcceptWord("from") && !AcceptWord("dual")) {
    return absl::UnimplementedError("SELECT ... FROM a table");
  }
  if (AcceptWord("limit")) {
    if (Peek().kind != Token::Kind::kNumber) return Error("a LIMIT count");
    ++pos_;
  }
  BR_RETURN_IF_ERROR(ExpectEnd());
  return s;
}

absl::StatusOr<AdminStatement> Parser::Show() {
  AdminStatement s;
  using K = AdminStatement::Kind;
  if (AcceptWord("global") || AcceptWord("session") || AcceptWord("local") ||
      IsWord("variables")) {
    if (!AcceptWord("variables")) return absl::UnimplementedError("SHOW GLOBAL/SESSION other than VARIABLES");
    if (!AcceptWord("like")) return absl::UnimplementedError("SHOW VARIABLES without LIKE");
    if (Peek().kind != Token::Kind::kQuoted) return Error("a quoted LIKE pattern");
    s.kind = K::kShowVariables;
    s.argument = Peek().value;
    ++pos_;
  } else if (AcceptWords({"master", "status"}) || AcceptWords({"binary", "log", "status"})) {
    s.kind = K::kShowMasterStatus;
  } else if (AcceptWords({"binary", "logs"}) || AcceptWords({"master", "logs"})) {
    s.kind = K::kShowBinaryLogs;
  } else if (AcceptWords({"slave", "hosts"}) || AcceptWord("replicas")) {
    s.kind = K::kShowReplicas;
  } else if (AcceptWords({"relay", "status"})) {
    s.kind = K::kShowRelayStatus;
  } else {
    return absl::UnimplementedError("this SHOW statement");
  }
  BR_RETURN_IF_ERROR(ExpectEnd());
  return s;
}

absl::StatusOr<AdminStatement> Parser::Purge() {
  if (!(AcceptWord("binary") || AcceptWord("master")) || !AcceptWord("logs")) {
    return absl::UnimplementedError("this PURGE statement");
  }
  if (!AcceptWord("to")) return absl::UnimplementedError("PURGE BINARY LOGS other than TO 'file'");
  if (Peek().kind != Token::Kind::kQuoted) return Error("a quoted binlog file name");
  AdminStatement s;
  s.kind = AdminStatement::Kind::kPurgeBinaryLogsTo;
  s.argument = Peek().value;
  ++pos_;
  BR_RETURN_IF_ERROR(ExpectEnd());
  return s;
}

absl::StatusOr<AdminStatement> Parser::Statement() {
  if (AcceptWord("set")) return Set();
  if (AcceptWord("select")) return Select();
  if (AcceptWord("show")) return Show();
  if (AcceptWord("purge")) return Purge();
  return absl::UnimplementedError("statement");
}

}  // namespace

absl::StatusOr<AdminStatement> ParseAdminStatement(std::string_view sql) {
  BR_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(sql));
  return Parser(sql, std::move(tokens)).Statement();
}

}  // namespace binrelay::proxy
