#include "protocol/json_binary.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/column_type.h"
#include "protocol/decimal.h"
#include "protocol/json_binary_format.h"
#include "protocol/json_writer.h"
#include "protocol/status_macros.h"
#include "protocol/temporal.h"

namespace binrelay::protocol {
namespace {

using namespace json_binary;  // type bytes, kMaxDepth

absl::Status Corrupt(std::string_view what) {
  return absl::DataLossError(absl::StrCat("corrupt binary JSON: ", AV(what)));
}

uint64_t Le(std::string_view s, size_t at, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) v |= uint64_t{static_cast<uint8_t>(s[at + i])} << (8 * i);
  return v;
}

// Variable-length length: 7 bits per byte, low group first, at most 5 bytes.
bool ReadVarLength(std::string_view data, size_t* consumed, uint64_t* len) {
  uint64_t v = 0;
  for (size_t i = 0; i < 5 && i < data.size(); ++i) {
    uint8_t b = static_cast<uint8_t>(data[i]);
    v |= uint64_t{b & 0x7Fu} << (7 * i);
    if ((b & 0x80) == 0) {
      if (v > UINT32_MAX) return false;
      *consumed = i + 1;
      *len = v;
      return true;
    }
  }
  return false;
}

template <typename T>
void PutInt(T v, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

// MySQL's base64_encode breaks lines every 76 output characters.
void AppendMysqlBase64(std::string_view bytes, std::string* out) {
  std::string plain;
  AppendBase64(bytes, &plain);
  for (size_t i = 0; i < plain.size(); i += 76) {
    if (i) out->push_back('\n');
    out->append(plain, i, 76);
  }
}

class Printer {
 public:
  // `limit`: the size `out` may reach. Values may share bytes (two entries
  // can name one offset), so a small document could otherwise expand
  // exponentially within the depth limit.
  Printer(std::string* out, size_t limit) : out_(out), limit_(limit) {}

  absl::Status Value(uint8_t type, std::string_view data, int depth) {
    switch (type) {
      case kSmallObject:
      case kLargeObject:
      case kSmallArray:
      case kLargeArray:
        return Container(type, data, depth);
      case kLiteral:
        if (data.empty()) return Corrupt("truncated literal");
        return Literal(static_cast<uint8_t>(data[0]));
      case kInt16:
        return Fixed(data, 2, [&] { PutInt(static_cast<int16_t>(Le(data, 0, 2)), out_); });
      case kUint16:
        return Fixed(data, 2, [&] { PutInt(static_cast<uint16_t>(Le(data, 0, 2)), out_); });
      case kInt32:
        return Fixed(data, 4, [&] { PutInt(static_cast<int32_t>(Le(data, 0, 4)), out_); });
      case kUint32:
        return Fixed(data, 4, [&] { PutInt(static_cast<uint32_t>(Le(data, 0, 4)), out_); });
      case kInt64:
        return Fixed(data, 8, [&] { PutInt(static_cast<int64_t>(Le(data, 0, 8)), out_); });
      case kUint64:
        return Fixed(data, 8, [&] { PutInt(Le(data, 0, 8), out_); });
      case kDouble:
        return Fixed(data, 8, [&] {
          uint64_t bits = Le(data, 0, 8);
          double d;
          std::memcpy(&d, &bits, sizeof d);
          AppendMysqlJsonDouble(d, out_);
        });
      case kString: {
        std::string_view s;
        if (!Sized(data, &s)) return Corrupt("string length exceeds the document");
        AppendJsonString(s, out_);
        return absl::OkStatus();
      }
      case kOpaque:
        return Opaque(data);
      default:
        return Corrupt(absl::StrCat("unknown value type 0x", absl::Hex(type)));
    }
  }

 private:
  template <typename F>
  absl::Status Fixed(std::string_view data, size_t width, F print) {
    if (data.size() < width) return Corrupt("truncated number");
    print();
    return absl::OkStatus();
  }

  // Reads a var-length length and the bytes it covers.
  static bool Sized(std::string_view data, std::string_view* s) {
    size_t n;
    uint64_t len;
    if (!ReadVarLength(data, &n, &len) || len > data.size() - n) return false;
    *s = data.substr(n, len);
    return true;
  }

  absl::Status Literal(uint8_t v) {
    switch (v) {
      case 0: out_->append("null"); return absl::OkStatus();
      case 1: out_->append("true"); return absl::OkStatus();
      case 2: out_->append("false"); return absl::OkStatus();
      default: return Corrupt(absl::StrCat("unknown literal ", v));
    }
  }

  absl::Status Opaque(std::string_view data) {
    if (data.empty()) return Corrupt("truncated opaque value");
    const uint8_t field_type = static_cast<uint8_t>(data[0]);
    std::string_view v;
    if (!Sized(data.substr(1), &v)) return Corrupt("opaque length exceeds the document");
    switch (field_type) {
      case kTypeNewDecimal: {
        // precision(1), scale(1), packed decimal; printed as a JSON number.
        if (v.size() < 2) return Corrupt("opaque DECIMAL too short");
        absl::Status st = AppendDecimalText(v.substr(2), static_cast<uint8_t>(v[0]),
                                            static_cast<uint8_t>(v[1]), out_);
        if (!st.ok()) return Corrupt(absl::StrCat("opaque DECIMAL: ", st.message()));
        return absl::OkStatus();
      }
      case kTypeDate:
      case kTypeDatetime:
      case kTypeTimestamp:
      case kTypeTime: {
        if (v.size() < 8) return Corrupt("opaque temporal value shorter than 8 bytes");
        const int64_t packed = static_cast<int64_t>(Le(v, 0, 8));
        out_->push_back('"');
        if (field_type == kTypeTime) {
          AppendTimeText(UnpackTimePacked(packed), 6, out_);
        } else if (field_type == kTypeDate) {
          AppendDateText(UnpackDatetimePacked(packed), out_);
        } else {
          AppendDatetimeText(UnpackDatetimePacked(packed), 6, out_);
        }
        out_->push_back('"');
        return absl::OkStatus();
      }
      case kTypeVarString:
        // MySQL prints strings wrapped in opaque as plain JSON strings.
        AppendJsonString(v, out_);
        return absl::OkStatus();
      default: {
        std::string text = absl::StrCat("base64:type", field_type, ":");
        AppendMysqlBase64(v, &text);
        AppendJsonString(text, out_);
        return absl::OkStatus();
      }
    }
  }

  absl::Status Container(uint8_t type, std::string_view data, int depth) {
    if (depth >= kMaxDepth) return Corrupt("nesting deeper than 100 levels");
    const bool large = type == kLargeObject || type == kLargeArray;
    const bool object = type == kSmallObject || type == kLargeObject;
    const size_t w = large ? 4 : 2;
    if (data.size() < 2 * w) return Corrupt("truncated container header");
    const uint64_t count = Le(data, 0, w);
    const uint64_t size = Le(data, w, w);
    if (size > data.size() || size < 2 * w) {
      return Corrupt(absl::StrCat("container size ", size, " outside the ", data.size(),
                                  " bytes available"));
    }
    data = data.substr(0, size);
    const uint64_t key_entry = object ? w + 2 : 0, value_entry = 1 + w;
    // count is at most 32 bits, so this product cannot overflow 64 bits.
    if (2 * w + count * (key_entry + value_entry) > size) {
      return Corrupt(absl::StrCat("container of ", count, " elements does not fit in ", size,
                                  " bytes"));
    }
    const size_t values_at = 2 * w + count * key_entry;
    // Keys and values follow the entry tables (sql-common/json_binary.cc
    // serialize_json_object); an offset into the header or the entries
    // could make a container its own child.
    const size_t data_at = values_at + count * value_entry;
    out_->push_back(object ? '{' : '[');
    for (uint64_t i = 0; i < count; ++i) {
      if (out_->size() > limit_) {
        return absl::DataLossError(absl::StrCat(
            "corrupt binary JSON: its text exceeds ", kMaxJsonTextExpansion,
            " times the document's size (values shared between entries?)"));
      }
      if (i) out_->append(", ");
      if (object) {
        const size_t e = 2 * w + i * key_entry;
        const uint64_t koff = Le(data, e, w), klen = Le(data, e + w, 2);
        if (koff < data_at || koff > size || klen > size - koff) {
          return Corrupt(absl::StrCat("key offset ", koff, " outside the container's data"));
        }
        AppendJsonString(data.substr(koff, klen), out_);
        out_->append(": ");
      }
      const size_t e = values_at + i * value_entry;
      const uint8_t vtype = static_cast<uint8_t>(data[e]);
      const bool inlined = vtype == kLiteral || vtype == kInt16 || vtype == kUint16 ||
                           (large && (vtype == kInt32 || vtype == kUint32));
      if (inlined) {
        absl::Status st = Value(vtype, data.substr(e + 1, w), depth + 1);
        if (!st.ok()) return st;
        continue;
      }
      const uint64_t off = Le(data, e + 1, w);
      if (off < data_at || off >= size) {
        return Corrupt(absl::StrCat("value offset ", off, " outside the container's data"));
      }
      absl::Status st = Value(vtype, data.substr(off), depth + 1);
      if (!st.ok()) return st;
    }
    out_->push_back(object ? '}' : ']');
    return absl::OkStatus();
  }

  std::string* out_;
  size_t limit_;
};

}  // namespace

void AppendMysqlJsonDouble(double d, std::string* out) {
  if (!std::isfinite(d)) {  // not storable in JSON; keep output valid
    out->append("null");
    return;
  }
  // Shortest round-trip digits and exponent, then MySQL my_gcvt's choice
  // between fixed and scientific notation (field width 34, DBL_DIG 15).
  char sci[40];
  auto r = std::to_chars(sci, sci + sizeof(sci), d, std::chars_format::scientific);
  std::string_view s(sci, r.ptr - sci);
  const bool negative = s[0] == '-';
  if (negative) s.remove_prefix(1);
  const size_t e = s.find('e');
  char digits[24];
  int len = 0;
  for (size_t i = 0; i < e; ++i) {
    if (s[i] != '.') digits[len++] = s[i];
  }
  const int exp10 = std::atoi(std::string(s.substr(e + 1)).c_str());
  int decpt = exp10 + 1;  // value = 0.DIGITS * 10^decpt
  if (len == 1 && digits[0] == '0') decpt = 1;

  const int width = negative ? 33 : 34;
  const int f_len = decpt <= 0 ? len - decpt + 2 : decpt < len ? len + 1 : decpt;
  const bool fixed = f_len <= width && decpt >= -14 && (decpt <= 15 || len > decpt);
  if (negative) out->push_back('-');
  if (fixed) {
    if (decpt <= 0) {
      out->append("0.");
      out->append(static_cast<size_t>(-decpt), '0');
      out->append(digits, len);
    } else if (decpt < len) {
      out->append(digits, decpt);
      out->push_back('.');
      out->append(digits + decpt, len - decpt);
    } else {
      out->append(digits, len);
      out->append(static_cast<size_t>(decpt - len), '0');
      out->append(".0");  // JSON keeps integral doubles distinguishable
    }
    return;
  }
  out->push_back(digits[0]);
  if (len > 1) {
    out->push_back('.');
    out->append(digits + 1, len - 1);
  }
  out->push_back('e');
  PutInt(decpt - 1, out);
}

absl::Status AppendJsonBinaryValueText(uint8_t type, std::string_view data, std::string* out) {
  return Printer(out, out->size() + kMaxJsonTextExpansion * data.size() + 4096).Value(type, data, 0);
}

absl::Status AppendJsonBinaryText(std::string_view doc, std::string* out) {
  if (doc.empty()) {
    out->append("null");
    return absl::OkStatus();
  }
  return AppendJsonBinaryValueText(static_cast<uint8_t>(doc[0]), doc.substr(1), out);
}

}  // namespace binrelay::protocol
