#include "apply/sql_literal.h"

#include <charconv>
#include <cmath>

namespace binrelay::apply {
namespace {

void AppendHex(std::string_view bytes, std::string* out) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  out->append("X'");
  const size_t at = out->size();
  out->resize(at + 2 * bytes.size());
  char* p = out->data() + at;
  for (unsigned char b : bytes) {
    *p++ = kDigits[b >> 4];
    *p++ = kDigits[b & 0xF];
  }
  out->push_back('\'');
}

// 'bytes' with ', \ and NUL escaped (see the header for why byte-wise
// escaping is exact).
void AppendEscaped(std::string_view bytes, std::string* out) {
  out->push_back('\'');
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  while (p < end) {
    const char* run = p;
    while (run < end && *run != '\'' && *run != '\\' && *run != '\0') ++run;
    out->append(p, static_cast<size_t>(run - p));
    if (run == end) break;
    out->push_back('\\');
    out->push_back(*run == '\0' ? '0' : *run);
    p = run + 1;
  }
  out->push_back('\'');
}

template <typename T>
void AppendNumber(T v, std::string* out) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

}  // namespace

LiteralStyle ColumnStyle(std::string_view data_type) {
  if (data_type == "decimal") return LiteralStyle::kExactNumber;
  if (data_type == "binary" || data_type == "varbinary" || data_type == "tinyblob" ||
      data_type == "blob" || data_type == "mediumblob" || data_type == "longblob") {
    return LiteralStyle::kBinaryString;
  }
  return LiteralStyle::kDefault;
}

void AppendSqlLiteral(const protocol::ValueView* v, std::string_view charset, std::string* out,
                      LiteralStyle style) {
  using protocol::ValueKind;
  if (v == nullptr) {
    out->append("NULL");
    return;
  }
  switch (v->kind) {
    case ValueKind::kNull:
      out->append("NULL");
      return;
    case ValueKind::kSigned:
      AppendNumber(v->i, out);
      return;
    case ValueKind::kUnsigned:
    case ValueKind::kYear:
    case ValueKind::kEnum:
    case ValueKind::kSet:
      AppendNumber(v->u, out);
      return;
    case ValueKind::kFloat:
    case ValueKind::kDouble:
      // v->d holds a FLOAT already widened exactly to double.
      if (v->d == 0 && std::signbit(v->d)) {
        out->append("-0e0");
        return;
      }
      AppendNumber(v->d, out);
      return;
    case ValueKind::kFormatted:
      if (style == LiteralStyle::kExactNumber) {
        out->append(v->bytes);
        return;
      }
      // DECIMAL digits and temporal text: ASCII without quotes.
      out->push_back('\'');
      out->append(v->bytes);
      out->push_back('\'');
      return;
    case ValueKind::kJsonText:
      out->append("_utf8mb4");
      AppendEscaped(v->bytes, out);
      return;
    case ValueKind::kText:
    case ValueKind::kBinary:
      if (!charset.empty() && charset != "binary") {
        out->push_back('_');
        out->append(charset);
        AppendEscaped(v->bytes, out);
      } else if (style == LiteralStyle::kBinaryString || charset == "binary") {
        out->append("_binary");
        AppendEscaped(v->bytes, out);
      } else {
        AppendHex(v->bytes, out);  // BIT, GEOMETRY, VECTOR
      }
      return;
  }
}

void AppendIntroducedString(std::string_view bytes, std::string_view charset,
                            std::string* out) {
  out->push_back('_');
  out->append(charset);
  AppendEscaped(bytes, out);
}

void AppendIdentifier(std::string_view name, std::string* out) {
  out->push_back('`');
  for (char c : name) {
    if (c == '`') out->push_back('`');
    out->push_back(c);
  }
  out->push_back('`');
}

void AppendQuotedString(std::string_view text, std::string* out) {
  out->push_back('\'');
  for (char c : text) {
    switch (c) {
      case '\'': out->append("\\'"); break;
      case '\\': out->append("\\\\"); break;
      case '\0': out->append("\\0"); break;
      default: out->push_back(c);
    }
  }
  out->push_back('\'');
}

}  // namespace binrelay::apply
