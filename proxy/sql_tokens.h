// SqlTokens: the tokenizer shared by the admin statement parser and the
// forwarding policy. Tokens are offsets into the statement (no copy per
// token); quoted strings and `identifiers` are unescaped only when a caller
// asks for their value. Comments (/* */, -- , #) and whitespace are
// skipped; trailing semicolons are dropped.
//
// Hostile input is bounded: a statement of more than kMaxSqlTokens tokens
// is InvalidArgument (nothing binrelay answers or forwards needs that many),
// and an unterminated quote or comment is InvalidArgument naming the byte.
//
// Thread safety: pure functions.
// Lifetime: tokens refer to the statement they were made from.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace binrelay::proxy {

inline constexpr size_t kMaxSqlTokens = 4096;

struct SqlToken {
  enum class Kind { kEnd, kWord, kQuoted, kNumber, kAt, kAtAt, kSymbol };
  Kind kind = Kind::kEnd;
  size_t begin = 0;  // byte offsets into the statement
  size_t end = 0;
  bool backticked = false;  // kWord written as `name`
};

// The tokens of `sql`, ending with one kEnd token at sql.size().
absl::StatusOr<std::vector<SqlToken>> TokenizeSql(std::string_view sql);

// The token as written (quotes included).
inline std::string_view TokenText(std::string_view sql, const SqlToken& t) {
  return sql.substr(t.begin, t.end - t.begin);
}
// Its value: quoted strings and backticked words unescaped (doubled quotes,
// backslash escapes; "\%" and "\_" keep their backslash, as MySQL does for
// LIKE), everything else as written. ':=' reads as '='.
std::string TokenValue(std::string_view sql, const SqlToken& t);
// A word equal to `word` ignoring case (never a backticked one).
bool IsKeyword(std::string_view sql, const SqlToken& t, std::string_view word);
bool IsSymbol(std::string_view sql, const SqlToken& t, char c);

}  // namespace binrelay::proxy
