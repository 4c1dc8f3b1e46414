#include "protocol/statement_redaction.h"

#include <algorithm>

namespace binrelay::protocol {
namespace {

bool ContainsNoCase(std::string_view text, std::string_view upper) {
  for (size_t i = 0; i + upper.size() <= text.size(); ++i) {
    size_t j = 0;
    while (j < upper.size() && (text[i + j] & ~0x20) == upper[j]) ++j;
    if (j == upper.size()) return true;
  }
  return false;
}

// "-- " starts a comment only when whitespace or a control byte (or the end)
// follows the dashes (MySQL's and MariaDB's lexers, sql/sql_lex.cc).
bool DashCommentAt(std::string_view sql, size_t i) {
  if (sql.compare(i, 2, "--") != 0) return false;
  return i + 2 == sql.size() || static_cast<unsigned char>(sql[i + 2]) <= ' ';
}

}  // namespace

bool NamesCredential(std::string_view sql) {
  return ContainsNoCase(sql, "PASSWORD") || ContainsNoCase(sql, "IDENTIFIED");
}

std::string RedactedStatement(std::string_view sql, size_t max_bytes) {
  if (!NamesCredential(sql)) return std::string(sql.substr(0, max_bytes));
  std::string out;
  out.reserve(std::min(sql.size(), max_bytes) + kRedactedLiteral.size());
  size_t i = 0;
  while (i < sql.size() && out.size() < max_bytes) {
    const char c = sql[i];
    if (c == '`') {  // an identifier, shown
      size_t close = sql.find('`', i + 1);
      if (close == std::string_view::npos) {
        out.append(kRedactedLiteral);
        break;
      }
      out.append(sql.substr(i, close + 1 - i));
      i = close + 1;
    } else if (sql.compare(i, 2, "/*") == 0) {
      if (i + 2 < sql.size() && (sql[i + 2] == '!' || sql.compare(i + 2, 2, "M!") == 0)) {
        // A version comment is code: its opener shown, its body scanned.
        out.append(sql.substr(i, sql[i + 2] == '!' ? 3 : 4));
        i += sql[i + 2] == '!' ? 3 : 4;
      } else {  // a comment: its body is not shown either
        size_t close = sql.find("*/", i + 2);
        if (close == std::string_view::npos) {
          out.append(kRedactedLiteral);
          break;
        }
        out.append("/* */");
        i = close + 2;
      }
    } else if (c == '#' || DashCommentAt(sql, i)) {
      out.append(c == '#' ? "#" : "--");
      size_t eol = sql.find('\n', i);
      i = eol == std::string_view::npos ? sql.size() : eol;
    } else if (c == '\'' || c == '"') {
      size_t j = i + 1;
      bool closed = false;
      while (j < sql.size() && sql[j] != '\\') {
        if (sql[j] == c) {
          if (j + 1 < sql.size() && sql[j + 1] == c) {  // '' inside '...'
            j += 2;
            continue;
          }
          closed = true;
          break;
        }
        ++j;
      }
      out.append(kRedactedLiteral);
      if (!closed) break;  // a backslash or no closing quote: where it ends is uncertain
      i = j + 1;
    } else {
      out.push_back(c);
      ++i;
    }
  }
  if (out.size() > max_bytes) out.resize(max_bytes);
  return out;
}

}  // namespace binrelay::protocol
