#include "tests/harness/erlang_term.h"

#include <cctype>

#include "absl/strings/str_cat.h"

namespace binrelay::testing {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  absl::StatusOr<std::vector<ErlTerm>> All() {
    std::vector<ErlTerm> out;
    while (true) {
      Space();
      if (p_ >= s_.size()) return out;
      ErlTerm t;
      if (!Term(&t) || !Expect('.')) return Error();
      out.push_back(std::move(t));
    }
  }

 private:
  absl::Status Error() const {
    size_t line = 1;
    for (size_t i = 0; i < p_ && i < s_.size(); ++i) line += s_[i] == '\n';
    return absl::InvalidArgumentError(
        absl::StrCat("Erlang term syntax error at line ", line, " (byte ", p_, "): ", err_));
  }
  bool Fail(std::string what) {
    if (err_.empty()) err_ = std::move(what);
    return false;
  }

  void Space() {
    while (p_ < s_.size()) {
      if (std::isspace(static_cast<unsigned char>(s_[p_]))) {
        ++p_;
      } else if (s_[p_] == '%') {
        while (p_ < s_.size() && s_[p_] != '\n') ++p_;
      } else {
        return;
      }
    }
  }
  bool Peek(char c) {
    Space();
    return p_ < s_.size() && s_[p_] == c;
  }
  bool Expect(char c) {
    if (!Peek(c)) return Fail(absl::StrCat("expected '", std::string(1, c), "'"));
    ++p_;
    return true;
  }
  bool Expect2(std::string_view t) {
    Space();
    if (s_.substr(p_, t.size()) != t) return Fail(absl::StrCat("expected ", std::string(t)));
    p_ += t.size();
    return true;
  }

  // One UTF-8 code point of the file text.
  bool CodePoint(uint32_t* cp) {
    const auto b = static_cast<uint8_t>(s_[p_]);
    int n = b < 0x80 ? 0 : b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : b >= 0xC0 ? 1 : -1;
    if (n < 0 || p_ + n >= s_.size()) return Fail("bad UTF-8");
    *cp = n == 0 ? b : b & (0x3F >> n);
    for (int k = 1; k <= n; ++k) *cp = (*cp << 6) | (static_cast<uint8_t>(s_[p_ + k]) & 0x3F);
    p_ += n + 1;
    return true;
  }

  // "..." -> code points.
  bool QuotedCodePoints(char quote, std::vector<uint32_t>* out) {
    if (!Expect(quote)) return false;
    while (p_ < s_.size() && s_[p_] != quote) {
      if (s_[p_] == '\\' && p_ + 1 < s_.size()) {
        const char e = s_[++p_];
        ++p_;
        switch (e) {
          case 'n': out->push_back('\n'); break;
          case 't': out->push_back('\t'); break;
          case 'r': out->push_back('\r'); break;
          case 'v': out->push_back('\v'); break;
          case 'f': out->push_back('\f'); break;
          case 'b': out->push_back('\b'); break;
          case 'e': out->push_back(0x1b); break;
          case 's': out->push_back(' '); break;
          case 'd': out->push_back(0x7f); break;
          default:
            if (e >= '0' && e <= '7') {
              uint32_t v = e - '0';
              for (int k = 0; k < 2 && p_ < s_.size() && s_[p_] >= '0' && s_[p_] <= '7'; ++k) {
                v = v * 8 + (s_[p_++] - '0');
              }
              out->push_back(v);
            } else {
              out->push_back(static_cast<uint8_t>(e));
            }
        }
        continue;
      }
      uint32_t cp;
      if (!CodePoint(&cp)) return false;
      out->push_back(cp);
    }
    if (p_ >= s_.size()) return Fail("unterminated string");
    ++p_;
    return true;
  }

  bool Latin1(const std::vector<uint32_t>& cps, std::string* out) {
    for (uint32_t cp : cps) {
      if (cp > 255) return Fail("code point above 255 in a latin-1 string");
      out->push_back(static_cast<char>(cp));
    }
    return true;
  }

  static void AppendUtf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  bool Integer(int64_t* v) {
    Space();
    bool neg = false;
    if (p_ < s_.size() && s_[p_] == '-') {
      neg = true;
      ++p_;
    }
    size_t start = p_;
    while (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_]))) ++p_;
    if (p_ == start) return Fail("expected an integer");
    int64_t base = 10;
    int64_t value = std::stoll(std::string(s_.substr(start, p_ - start)));
    if (p_ < s_.size() && s_[p_] == '#') {
      base = value;
      start = ++p_;
      while (p_ < s_.size() && std::isalnum(static_cast<unsigned char>(s_[p_]))) ++p_;
      if (p_ == start || base < 2 || base > 36) return Fail("bad based integer");
      value = std::stoll(std::string(s_.substr(start, p_ - start)), nullptr, static_cast<int>(base));
    }
    *v = neg ? -value : value;
    return true;
  }

  bool Binary(ErlTerm* t) {
    t->kind = ErlTerm::Kind::kBinary;
    if (!Expect2("<<")) return false;
    if (Peek('>')) return Expect2(">>");
    while (true) {
      if (Peek('"')) {
        std::vector<uint32_t> cps;
        if (!QuotedCodePoints('"', &cps)) return false;
        if (Peek('/')) {
          if (!Expect2("/utf8")) return false;
          for (uint32_t cp : cps) AppendUtf8(cp, &t->text);
        } else if (!Latin1(cps, &t->text)) {
          return false;
        }
      } else {
        int64_t v;
        if (!Integer(&v)) return false;
        if (v < 0 || v > 255) return Fail("binary element outside 0..255");
        t->text.push_back(static_cast<char>(v));
      }
      if (Peek(',')) {
        ++p_;
        continue;
      }
      return Expect2(">>");
    }
  }

  bool Sequence(char close, std::vector<ErlTerm>* items) {
    if (Peek(close)) {
      ++p_;
      return true;
    }
    while (true) {
      ErlTerm item;
      if (!Term(&item)) return false;
      items->push_back(std::move(item));
      if (Peek(',')) {
        ++p_;
        continue;
      }
      return Expect(close);
    }
  }

  bool Map(ErlTerm* t) {
    t->kind = ErlTerm::Kind::kMap;
    if (!Expect2("#{")) return false;
    if (Peek('}')) return Expect('}');
    while (true) {
      ErlTerm k, v;
      if (!Term(&k) || !Expect2("=>") || !Term(&v)) return false;
      t->map.emplace_back(std::move(k), std::move(v));
      if (Peek(',')) {
        ++p_;
        continue;
      }
      return Expect('}');
    }
  }

  bool Term(ErlTerm* t) {
    Space();
    if (p_ >= s_.size()) return Fail("unexpected end of text");
    const char c = s_[p_];
    if (c == '<') return Binary(t);
    if (c == '#') return Map(t);
    if (c == '{') {
      ++p_;
      t->kind = ErlTerm::Kind::kTuple;
      return Sequence('}', &t->items);
    }
    if (c == '[') {
      ++p_;
      t->kind = ErlTerm::Kind::kList;
      return Sequence(']', &t->items);
    }
    if (c == '"') {
      std::vector<uint32_t> cps;
      t->kind = ErlTerm::Kind::kString;
      return QuotedCodePoints('"', &cps) && Latin1(cps, &t->text);
    }
    if (c == '\'') {
      std::vector<uint32_t> cps;
      t->kind = ErlTerm::Kind::kAtom;
      return QuotedCodePoints('\'', &cps) && Latin1(cps, &t->text);
    }
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      t->kind = ErlTerm::Kind::kInt;
      return Integer(&t->i);
    }
    if (std::islower(static_cast<unsigned char>(c))) {
      t->kind = ErlTerm::Kind::kAtom;
      while (p_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[p_])) || s_[p_] == '_' || s_[p_] == '@')) {
        t->text.push_back(s_[p_++]);
      }
      return true;
    }
    return Fail(absl::StrCat("unexpected character '", std::string(1, c), "'"));
  }

  std::string_view s_;
  size_t p_ = 0;
  std::string err_;
};

}  // namespace

const ErlTerm* ErlTerm::Find(std::string_view key) const {
  for (const auto& [k, v] : map) {
    if (k.is_atom(key)) return &v;
  }
  return nullptr;
}

std::string ErlTerm::DebugString() const {
  std::string out;
  auto join = [&](const std::vector<ErlTerm>& xs) {
    for (size_t n = 0; n < xs.size(); ++n) absl::StrAppend(&out, n ? "," : "", xs[n].DebugString());
  };
  switch (kind) {
    case Kind::kInt: return absl::StrCat(i);
    case Kind::kAtom: return text;
    case Kind::kString: return absl::StrCat("\"", text, "\"");
    case Kind::kBinary:
      out = "<<";
      for (size_t n = 0; n < text.size(); ++n) {
        absl::StrAppend(&out, n ? "," : "", static_cast<uint8_t>(text[n]));
      }
      return out + ">>";
    case Kind::kList: out = "["; join(items); return out + "]";
    case Kind::kTuple: out = "{"; join(items); return out + "}";
    case Kind::kMap:
      out = "#{";
      for (size_t n = 0; n < map.size(); ++n) {
        absl::StrAppend(&out, n ? "," : "", map[n].first.DebugString(), "=>",
                        map[n].second.DebugString());
      }
      return out + "}";
  }
  return out;
}

absl::StatusOr<std::vector<ErlTerm>> ParseErlangTerms(std::string_view text) {
  return Parser(text).All();
}

}  // namespace binrelay::testing
