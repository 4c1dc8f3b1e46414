#include "tests/harness/erlang_terms.h"

#include <gtest/gtest.h>

#include <cctype>
#include <sstream>

#include "tests/harness/fixtures.h"

namespace binrelay::testing {
namespace {

// Drops %-comments (whole lines and line tails) outside string literals.
std::string StripComments(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    bool in_string = false;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\\' && in_string) {
        ++i;
      } else if (line[i] == '"') {
        in_string = !in_string;
      } else if (line[i] == '%' && !in_string) {
        line.resize(i);
        break;
      }
    }
    out += line;
    out += '\n';
  }
  return out;
}

// Parses the body of one binary; false if it holds anything else (variables,
// sized segments), which the callers skip.
bool ParseBinaryBody(const std::string& body, std::string* out) {
  size_t i = 0;
  auto skip_space = [&] {
    while (i < body.size() && (std::isspace(static_cast<unsigned char>(body[i])) || body[i] == ','))
      ++i;
  };
  for (skip_space(); i < body.size(); skip_space()) {
    if (body[i] == '"') {
      for (++i; i < body.size() && body[i] != '"'; ++i) {
        char ch = body[i];
        if (ch == '\\' && i + 1 < body.size()) {
          char e = body[++i];
          switch (e) {
            case 'n': ch = '\n'; break;
            case 't': ch = '\t'; break;
            case 'r': ch = '\r'; break;
            case 'v': ch = '\v'; break;
            case 'e': ch = '\x1b'; break;
            case 'b': ch = '\b'; break;
            case 'f': ch = '\f'; break;
            case 's': ch = ' '; break;
            case 'd': ch = '\x7f'; break;
            default:
              if (e >= '0' && e <= '7') {  // up to 3 octal digits
                int v = 0, n = 0;
                while (n < 3 && i < body.size() && body[i] >= '0' && body[i] <= '7') {
                  v = v * 8 + (body[i++] - '0');
                  ++n;
                }
                --i;
                ch = static_cast<char>(v);
              } else {
                ch = e;
              }
          }
        }
        out->push_back(ch);
      }
      ++i;  // closing quote
    } else if (std::isdigit(static_cast<unsigned char>(body[i]))) {
      size_t end = i;
      while (end < body.size() && std::isalnum(static_cast<unsigned char>(body[end]))) ++end;
      int base = 10;
      if (body.compare(end, 1, "#") == 0) {  // 16#ff
        base = std::stoi(body.substr(i, end - i));
        i = end + 1;
        end = i;
        while (end < body.size() && std::isxdigit(static_cast<unsigned char>(body[end]))) ++end;
      }
      if (end == i) return false;
      long v = std::stol(body.substr(i, end - i), nullptr, base);
      if (v < 0 || v > 255) return false;
      out->push_back(static_cast<char>(v));
      i = end;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

std::vector<std::string> ErlangBinaries(const std::string& raw) {
  const std::string text = StripComments(raw);
  std::vector<std::string> out;
  size_t pos = 0;
  while ((pos = text.find("<<", pos)) != std::string::npos) {
    size_t end = text.find(">>", pos + 2);
    if (end == std::string::npos) break;
    std::string bytes;
    if (ParseBinaryBody(text.substr(pos + 2, end - pos - 2), &bytes)) out.push_back(bytes);
    pos = end + 2;
  }
  return out;
}

std::vector<std::string> WirePacketsFromTerms(const std::string& relative) {
  std::vector<std::string> packets;
  for (std::string& b : ErlangBinaries(ReadFileOrDie(FixturePath(relative)))) {
    if (b.size() < 4) continue;
    const auto* u = reinterpret_cast<const unsigned char*>(b.data());
    size_t len = u[0] | (u[1] << 8) | (u[2] << 16);
    if (len + 4 == b.size()) packets.push_back(std::move(b));
  }
  return packets;
}

}  // namespace binrelay::testing
