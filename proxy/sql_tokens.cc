#include "proxy/sql_tokens.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"

namespace binrelay::proxy {
namespace {

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// The end of the quoted token starting at sql[pos] (one past the closing
// quote), or npos when it is not closed.
size_t QuotedEnd(std::string_view sql, size_t pos) {
  const char quote = sql[pos];
  size_t i = pos + 1;
  while (i < sql.size()) {
    char c = sql[i];
    if (c == '\\' && quote != '`') {
      i += 2;
    } else if (c == quote) {
      if (i + 1 < sql.size() && sql[i + 1] == quote) {
        i += 2;
      } else {
        return i + 1;
      }
    } else {
      ++i;
    }
  }
  return std::string_view::npos;
}

}  // namespace

absl::StatusOr<std::vector<SqlToken>> TokenizeSql(std::string_view sql) {
  std::vector<SqlToken> tokens;
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
    if (c == '#' || (c == '-' && i + 2 < sql.size() && sql[i + 1] == '-' &&
                     std::isspace(static_cast<unsigned char>(sql[i + 2])))) {
      size_t nl = sql.find('\n', i);
      i = nl == std::string_view::npos ? sql.size() : nl + 1;
      continue;
    }
    if (tokens.size() >= kMaxSqlTokens) {
      return absl::InvalidArgumentError(absl::StrCat(
          "statement too long for binrelay to parse (more than ", kMaxSqlTokens, " tokens)"));
    }
    SqlToken t;
    t.begin = i;
    if (c == '\'' || c == '"' || c == '`') {
      size_t end = QuotedEnd(sql, i);
      if (end == std::string_view::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat("unterminated ", std::string(1, c), " quote starting at byte ", i));
      }
      t.kind = c == '`' ? SqlToken::Kind::kWord : SqlToken::Kind::kQuoted;
      t.backticked = c == '`';
      i = end;
    } else if (c == '@') {
      bool two = i + 1 < sql.size() && sql[i + 1] == '@';
      t.kind = two ? SqlToken::Kind::kAtAt : SqlToken::Kind::kAt;
      i += two ? 2 : 1;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      t.kind = SqlToken::Kind::kNumber;
      while (i < sql.size() && (std::isdigit(static_cast<unsigned char>(sql[i])) || sql[i] == '.')) {
        ++i;
      }
    } else if (IsWordChar(c)) {
      t.kind = SqlToken::Kind::kWord;
      while (i < sql.size() && IsWordChar(sql[i])) ++i;
    } else if (c == ':' && i + 1 < sql.size() && sql[i + 1] == '=') {
      t.kind = SqlToken::Kind::kSymbol;
      i += 2;
    } else {
      t.kind = SqlToken::Kind::kSymbol;
      ++i;
    }
    t.end = i;
    tokens.push_back(t);
  }
  // Trailing semicolons are harmless; a semicolon elsewhere is a second
  // statement, which the parsers refuse as unexpected input.
  while (!tokens.empty() && tokens.back().kind == SqlToken::Kind::kSymbol &&
         IsSymbol(sql, tokens.back(), ';')) {
    tokens.pop_back();
  }
  SqlToken end;
  end.begin = end.end = sql.size();
  tokens.push_back(end);
  return tokens;
}

std::string TokenValue(std::string_view sql, const SqlToken& t) {
  std::string_view text = TokenText(sql, t);
  if (t.kind == SqlToken::Kind::kSymbol && text == ":=") return "=";
  if (t.kind != SqlToken::Kind::kQuoted && !t.backticked) return std::string(text);
  const char quote = text.front();
  std::string out;
  out.reserve(text.size());
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && quote != '`' && i + 2 < text.size()) {
      char e = text[i + 1];
      if (e == '%' || e == '_') out.push_back('\\');
      out.push_back(e == 'n' ? '\n' : e == 't' ? '\t' : e == '0' ? '\0' : e);
      ++i;
    } else if (c == quote && i + 2 < text.size() && text[i + 1] == quote) {
      out.push_back(quote);
      ++i;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

bool IsKeyword(std::string_view sql, const SqlToken& t, std::string_view word) {
  return t.kind == SqlToken::Kind::kWord && !t.backticked &&
         absl::EqualsIgnoreCase(AV(TokenText(sql, t)), AV(word));
}

bool IsSymbol(std::string_view sql, const SqlToken& t, char c) {
  return t.kind == SqlToken::Kind::kSymbol && t.end - t.begin == 1 && sql[t.begin] == c;
}

}  // namespace binrelay::proxy
