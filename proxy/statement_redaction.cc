#include "proxy/statement_redaction.h"

#include <algorithm>

namespace binrelay::proxy {
namespace {

bool IsWordByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c >= 0x80;
}

bool ContainsNoCase(std::string_view word, std::string_view upper) {
  if (word.size() < upper.size()) return false;
  for (size_t i = 0; i + upper.size() <= word.size(); ++i) {
    size_t j = 0;
    while (j < upper.size() && (word[i + j] & ~0x20) == upper[j]) ++j;
    if (j == upper.size()) return true;
  }
  return false;
}

}  // namespace

// Quotes of every kind (' " `) are skipped so that 'password' as data does
// not count.
bool NamesCredential(std::string_view sql) {
  size_t i = 0;
  while (i < sql.size()) {
    const char c = sql[i];
    if (c == '\'' || c == '"' || c == '`') {
      size_t j = i + 1;
      while (j < sql.size() && sql[j] != c) j += (sql[j] == '\\' && c != '`') ? 2 : 1;
      i = j + 1;
      continue;
    }
    if (!IsWordByte(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < sql.size() && IsWordByte(static_cast<unsigned char>(sql[j]))) ++j;
    std::string_view word = sql.substr(i, j - i);
    if (ContainsNoCase(word, "PASSWORD") ||
        (word.size() == 10 && ContainsNoCase(word, "IDENTIFIED"))) {
      return true;
    }
    i = j;
  }
  return false;
}

std::string RedactedStatement(std::string_view sql, size_t max_bytes) {
  if (!NamesCredential(sql)) return std::string(sql.substr(0, max_bytes));
  std::string out;
  out.reserve(std::min(sql.size(), max_bytes));
  size_t i = 0;
  while (i < sql.size() && out.size() < max_bytes) {
    const char c = sql[i];
    if (c == '`') {  // an identifier: shown
      size_t j = sql.find('`', i + 1);
      j = j == std::string_view::npos ? sql.size() : j + 1;
      out.append(sql.substr(i, j - i));
      i = j;
      continue;
    }
    if (c != '\'' && c != '"') {
      out.push_back(c);
      ++i;
      continue;
    }
    size_t j = i + 1;
    bool closed = false;
    bool escaped = false;
    while (j < sql.size()) {
      if (sql[j] == '\\') {
        escaped = true;
        break;
      }
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
    if (!closed || escaped) break;  // where the literal ends is not certain: hide the rest
    i = j + 1;
  }
  if (out.size() > max_bytes) out.resize(max_bytes);
  return out;
}

}  // namespace binrelay::proxy
