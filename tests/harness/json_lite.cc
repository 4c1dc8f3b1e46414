#include "tests/harness/json_lite.h"

#include <algorithm>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"

namespace binrelay::testing {
namespace {

// Deep nesting is not something binrelay writes; the limit keeps a hostile
// input from overflowing the stack.
constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(std::string_view in) : in_(in) {}

  absl::StatusOr<JsonValue> ParseDocument() {
    JsonValue v;
    BR_RETURN_IF_ERROR(ParseValue(&v, 0));
    SkipSpace();
    if (pos_ != in_.size()) return Error("trailing characters after the JSON value");
    return v;
  }

 private:
  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("JSON: ", AV(what), " at offset ", pos_));
  }
  void SkipSpace() {
    while (pos_ < in_.size() &&
           (in_[pos_] == ' ' || in_[pos_] == '\t' || in_[pos_] == '\n' || in_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Consume(std::string_view lit) {
    if (in_.substr(pos_, lit.size()) != lit) return false;
    pos_ += lit.size();
    return true;
  }

  absl::Status ParseValue(JsonValue* v, int depth) {
    if (depth > kMaxDepth) return Error("nesting too deep");
    SkipSpace();
    if (pos_ >= in_.size()) return absl::OutOfRangeError("JSON: unexpected end of input");
    char c = in_[pos_];
    if (c == '{') return ParseObject(v, depth);
    if (c == '[') return ParseArray(v, depth);
    if (c == '"') {
      v->kind = JsonValue::Kind::kString;
      return ParseString(&v->text);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return ParseNumber(v);
    if (Consume("true")) {
      v->kind = JsonValue::Kind::kBool;
      v->boolean = true;
      return absl::OkStatus();
    }
    if (Consume("false")) {
      v->kind = JsonValue::Kind::kBool;
      return absl::OkStatus();
    }
    if (Consume("null")) {
      v->kind = JsonValue::Kind::kNull;
      return absl::OkStatus();
    }
    return Error("unexpected character");
  }

  absl::Status ParseObject(JsonValue* v, int depth) {
    v->kind = JsonValue::Kind::kObject;
    ++pos_;  // '{'
    SkipSpace();
    if (Consume("}")) return absl::OkStatus();
    while (true) {
      SkipSpace();
      if (pos_ >= in_.size() || in_[pos_] != '"') return Error("expected a member name");
      std::string key;
      BR_RETURN_IF_ERROR(ParseString(&key));
      if (v->Find(key) != nullptr) return Error(absl::StrCat("duplicate key \"", key, "\""));
      SkipSpace();
      if (!Consume(":")) return Error("expected ':'");
      JsonValue member;
      BR_RETURN_IF_ERROR(ParseValue(&member, depth + 1));
      v->object.emplace_back(std::move(key), std::move(member));
      SkipSpace();
      if (Consume("}")) return absl::OkStatus();
      if (!Consume(",")) return Error("expected ',' or '}'");
    }
  }

  absl::Status ParseArray(JsonValue* v, int depth) {
    v->kind = JsonValue::Kind::kArray;
    ++pos_;  // '['
    SkipSpace();
    if (Consume("]")) return absl::OkStatus();
    while (true) {
      JsonValue item;
      BR_RETURN_IF_ERROR(ParseValue(&item, depth + 1));
      v->array.push_back(std::move(item));
      SkipSpace();
      if (Consume("]")) return absl::OkStatus();
      if (!Consume(",")) return Error("expected ',' or ']'");
    }
  }

  absl::Status ParseNumber(JsonValue* v) {
    const size_t start = pos_;
    auto digits = [&] {
      size_t n = 0;
      while (pos_ < in_.size() && in_[pos_] >= '0' && in_[pos_] <= '9') ++pos_, ++n;
      return n;
    };
    if (in_[pos_] == '-') ++pos_;
    if (pos_ < in_.size() && in_[pos_] == '0') {
      ++pos_;
      if (pos_ < in_.size() && in_[pos_] >= '0' && in_[pos_] <= '9') {
        return Error("number with a leading zero");
      }
    } else if (digits() == 0) {
      return Error("number without digits");
    }
    if (pos_ < in_.size() && in_[pos_] == '.') {
      ++pos_;
      if (digits() == 0) return Error("number without digits after '.'");
    }
    if (pos_ < in_.size() && (in_[pos_] == 'e' || in_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < in_.size() && (in_[pos_] == '+' || in_[pos_] == '-')) ++pos_;
      if (digits() == 0) return Error("number without exponent digits");
    }
    v->kind = JsonValue::Kind::kNumber;
    v->text = std::string(in_.substr(start, pos_ - start));
    return absl::OkStatus();
  }

  absl::StatusOr<uint32_t> Hex4() {
    if (in_.size() - pos_ < 4) return absl::OutOfRangeError("JSON: truncated \\u escape");
    uint32_t u = 0;
    for (int i = 0; i < 4; ++i) {
      char c = in_[pos_++];
      u <<= 4;
      if (c >= '0' && c <= '9') {
        u |= c - '0';
      } else if (c >= 'a' && c <= 'f') {
        u |= c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        u |= c - 'A' + 10;
      } else {
        return Error("bad hex digit in \\u escape");
      }
    }
    return u;
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

  absl::Status ParseEscape(std::string* out) {
    if (pos_ >= in_.size()) return absl::OutOfRangeError("JSON: truncated escape");
    char e = in_[pos_++];
    switch (e) {
      case '"': out->push_back('"'); return absl::OkStatus();
      case '\\': out->push_back('\\'); return absl::OkStatus();
      case '/': out->push_back('/'); return absl::OkStatus();
      case 'b': out->push_back('\b'); return absl::OkStatus();
      case 'f': out->push_back('\f'); return absl::OkStatus();
      case 'n': out->push_back('\n'); return absl::OkStatus();
      case 'r': out->push_back('\r'); return absl::OkStatus();
      case 't': out->push_back('\t'); return absl::OkStatus();
      case 'u': break;
      default: return Error("unknown escape");
    }
    BR_ASSIGN_OR_RETURN(uint32_t cp, Hex4());
    if (cp >= 0xDC00 && cp <= 0xDFFF) return Error("lone low surrogate");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (!Consume("\\u")) return Error("high surrogate without a low surrogate");
      BR_ASSIGN_OR_RETURN(uint32_t lo, Hex4());
      if (lo < 0xDC00 || lo > 0xDFFF) return Error("high surrogate followed by a non-low one");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    AppendUtf8(cp, out);
    return absl::OkStatus();
  }

  absl::Status ParseString(std::string* out) {
    ++pos_;  // opening quote
    while (true) {
      if (pos_ >= in_.size()) return absl::OutOfRangeError("JSON: unterminated string");
      char c = in_[pos_];
      if (c == '"') {
        ++pos_;
        return absl::OkStatus();
      }
      if (static_cast<unsigned char>(c) < 0x20) return Error("raw control character in string");
      ++pos_;
      if (c == '\\') {
        BR_RETURN_IF_ERROR(ParseEscape(out));
      } else {
        out->push_back(c);
      }
    }
  }

  std::string_view in_;
  size_t pos_ = 0;
};

int Base64Index(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

const JsonValue* JsonValue::Find(std::string_view key) const {
  for (const auto& [k, v] : object) {
    if (k == key) return &v;
  }
  return nullptr;
}

absl::StatusOr<JsonValue> ParseJson(std::string_view text) { return Parser(text).ParseDocument(); }

absl::StatusOr<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("base64: length ", text.size(), " is not a multiple of 4"));
  }
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int pad = 0;
    uint32_t group = 0;
    for (size_t j = 0; j < 4; ++j) {
      char c = text[i + j];
      int v;
      if (c == '=' && last && j >= 2) {
        ++pad;
        v = 0;
      } else {
        v = Base64Index(c);
        if (v < 0 || pad > 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("base64: bad character at offset ", i + j));
        }
      }
      group = (group << 6) | static_cast<uint32_t>(v);
    }
    out.push_back(static_cast<char>(group >> 16));
    if (pad < 2) out.push_back(static_cast<char>((group >> 8) & 0xFF));
    if (pad < 1) out.push_back(static_cast<char>(group & 0xFF));
  }
  return out;
}

absl::StatusOr<std::vector<JsonValue>> ParseJsonLines(std::string_view text) {
  std::vector<JsonValue> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) {
      return absl::DataLossError(absl::StrCat("line ", out.size() + 1,
                                              " is not terminated by a newline (torn output): ",
                                              AV(text.substr(start, 200))));
    }
    absl::StatusOr<JsonValue> v = ParseJson(text.substr(start, nl - start));
    if (!v.ok() || !v->is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "line ", out.size() + 1, ": ", v.ok() ? "not an object" : v.status().message(), ": ",
          AV(text.substr(start, std::min<size_t>(nl - start, 300)))));
    }
    out.push_back(*std::move(v));
    start = nl + 1;
  }
  return out;
}

std::string ToHex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0xF]);
  }
  return out;
}

}  // namespace binrelay::testing
