#include "protocol/json_text_dom.h"

#include "protocol/charset.h"

#include "absl/strings/str_cat.h"
#include "protocol/json_writer.h"

namespace binrelay::protocol {
namespace {

constexpr int kMaxDepth = 200;

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  absl::Status Parse(JsonNode* out) {
    absl::Status st = Value(out, 0);
    if (!st.ok()) return st;
    Ws();
    if (pos_ != s_.size()) return Error("trailing characters");
    return absl::OkStatus();
  }

 private:
  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid JSON text at offset ", pos_, ": ", absl::string_view(what.data(), what.size())));
  }
  void Ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' ||
                                s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Eat(char c) {
    Ws();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Word(std::string_view w) {
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }

  absl::Status Value(JsonNode* out, int depth) {
    if (depth > kMaxDepth) return Error("nesting too deep");
    Ws();
    if (pos_ >= s_.size()) return Error("unexpected end");
    const char c = s_[pos_];
    if (c == '{') return Object(out, depth);
    if (c == '[') return Array(out, depth);
    if (c == '"') {
      out->kind = JsonNode::Kind::kString;
      return String(&out->text);
    }
    if (Word("null")) {
      out->kind = JsonNode::Kind::kNull;
      return absl::OkStatus();
    }
    if (Word("true")) {
      out->kind = JsonNode::Kind::kTrue;
      return absl::OkStatus();
    }
    if (Word("false")) {
      out->kind = JsonNode::Kind::kFalse;
      return absl::OkStatus();
    }
    return Number(out);
  }

  absl::Status Number(JsonNode* out) {
    const size_t start = pos_;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
        ++pos_;
      } else {
        break;
      }
    }
    if (pos_ == start) return Error("unexpected character");
    out->kind = JsonNode::Kind::kNumber;
    out->text.assign(s_.substr(start, pos_ - start));
    return absl::OkStatus();
  }

  bool Hex4(uint32_t* v) {
    if (pos_ + 4 > s_.size()) return false;
    *v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[pos_++];
      *v <<= 4;
      if (c >= '0' && c <= '9') *v |= c - '0';
      else if (c >= 'a' && c <= 'f') *v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') *v |= c - 'A' + 10;
      else return false;
    }
    return true;
  }

  absl::Status String(std::string* out) {
    ++pos_;  // opening quote
    out->clear();
    while (pos_ < s_.size()) {
      const char c = s_[pos_++];
      if (c == '"') return absl::OkStatus();
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) break;
      const char e = s_[pos_++];
      switch (e) {
        case '"': case '\\': case '/': out->push_back(e); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(&cp)) return Error("bad \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF && s_.substr(pos_, 2) == "\\u") {
            pos_ += 2;
            uint32_t lo;
            if (!Hex4(&lo) || lo < 0xDC00 || lo > 0xDFFF) return Error("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xD800 && cp <= 0xDFFF) {
            cp = 0xFFFD;
          }
          AppendUtf8Codepoint(cp, out);
          break;
        }
        default:
          return Error("bad escape");
      }
    }
    return Error("unterminated string");
  }

  absl::Status Array(JsonNode* out, int depth) {
    ++pos_;
    out->kind = JsonNode::Kind::kArray;
    if (Eat(']')) return absl::OkStatus();
    do {
      out->items.emplace_back();
      absl::Status st = Value(&out->items.back(), depth + 1);
      if (!st.ok()) return st;
    } while (Eat(','));
    if (!Eat(']')) return Error("expected ']'");
    return absl::OkStatus();
  }

  absl::Status Object(JsonNode* out, int depth) {
    ++pos_;
    out->kind = JsonNode::Kind::kObject;
    if (Eat('}')) return absl::OkStatus();
    do {
      Ws();
      if (pos_ >= s_.size() || s_[pos_] != '"') return Error("expected key");
      out->keys.emplace_back();
      absl::Status st = String(&out->keys.back());
      if (!st.ok()) return st;
      if (!Eat(':')) return Error("expected ':'");
      out->items.emplace_back();
      st = Value(&out->items.back(), depth + 1);
      if (!st.ok()) return st;
    } while (Eat(','));
    if (!Eat('}')) return Error("expected '}'");
    return absl::OkStatus();
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

absl::Status ParseJsonText(std::string_view text, JsonNode* out) {
  *out = JsonNode();
  return Parser(text).Parse(out);
}

void AppendJsonNode(const JsonNode& node, std::string* out) {
  switch (node.kind) {
    case JsonNode::Kind::kNull: out->append("null"); return;
    case JsonNode::Kind::kTrue: out->append("true"); return;
    case JsonNode::Kind::kFalse: out->append("false"); return;
    case JsonNode::Kind::kNumber: out->append(node.text); return;
    case JsonNode::Kind::kString: AppendJsonString(node.text, out); return;
    case JsonNode::Kind::kArray:
      out->push_back('[');
      for (size_t i = 0; i < node.items.size(); ++i) {
        if (i) out->append(", ");
        AppendJsonNode(node.items[i], out);
      }
      out->push_back(']');
      return;
    case JsonNode::Kind::kObject:
      out->push_back('{');
      for (size_t i = 0; i < node.items.size(); ++i) {
        if (i) out->append(", ");
        AppendJsonString(node.keys[i], out);
        out->append(": ");
        AppendJsonNode(node.items[i], out);
      }
      out->push_back('}');
      return;
  }
}

size_t FindKeySlot(const JsonNode& object, std::string_view key, bool* found) {
  *found = false;
  for (size_t i = 0; i < object.keys.size(); ++i) {
    const std::string& k = object.keys[i];
    if (k.size() > key.size() || (k.size() == key.size() && std::string_view(k) >= key)) {
      *found = k == key;
      return i;
    }
  }
  return object.keys.size();
}

}  // namespace binrelay::protocol
