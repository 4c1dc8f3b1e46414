#include "apply/ordered_key.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "protocol/column_type.h"
#include "protocol/row_image.h"
#include "protocol/status_macros.h"

namespace binrelay::apply {
namespace {

void AppendBigEndian(uint64_t v, std::string* out) {
  char buf[8];
  for (int i = 0; i < 8; ++i) buf[i] = static_cast<char>(v >> (56 - 8 * i));
  out->append(buf, sizeof buf);
}

// Signed order as unsigned: flip the sign bit.
void AppendSigned(int64_t v, std::string* out) {
  AppendBigEndian(static_cast<uint64_t>(v) ^ (uint64_t{1} << 63), out);
}

// IEEE doubles in numeric order: negative ones bit-inverted, positive ones
// with the sign bit set; -0.0 is 0.0 (the server compares them equal).
void AppendDouble(double d, std::string* out) {
  if (d == 0) d = 0;
  uint64_t bits = 0;
  std::memcpy(&bits, &d, sizeof bits);
  bits = (bits >> 63) != 0 ? ~bits : bits | (uint64_t{1} << 63);
  AppendBigEndian(bits, out);
}

// Bytes in byte order, self-delimiting: 0x00 becomes 00 FF and the end is
// 00 00, so a shorter string sorts before its extensions.
void AppendBytes(std::string_view s, std::string* out) {
  for (char c : s) {
    out->push_back(c);
    if (c == '\0') out->push_back('\xFF');
  }
  out->append("\0\0", 2);
}

absl::Status Bad(const protocol::ColumnDef& col, std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("primary-key column `", col.name, "` value '",
                                                 AV(text.substr(0, 80)), "': ", AV(why)));
}

// DECIMAL(p,s) text ("-12.50") as a sign byte and exactly p digits (integer
// part zero-padded to p-s, fraction to s), negative values with every digit
// complemented, so that byte order is numeric order.
absl::Status AppendDecimal(const protocol::ColumnDef& col, std::string_view text,
                           std::string* out) {
  const int precision = col.meta >> 8, scale = col.meta & 0xFF;
  std::string_view t = text;
  bool negative = false;
  if (!t.empty() && (t[0] == '-' || t[0] == '+')) {
    negative = t[0] == '-';
    t.remove_prefix(1);
  }
  const size_t dot = t.find('.');
  std::string_view whole = t.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view() : t.substr(dot + 1);
  while (whole.size() > 1 && whole[0] == '0') whole.remove_prefix(1);
  if (whole == "0") whole = {};
  const size_t int_digits = static_cast<size_t>(precision - scale);
  if (whole.size() > int_digits || frac.size() > static_cast<size_t>(scale)) {
    return Bad(col, text, absl::StrCat("does not fit DECIMAL(", precision, ",", scale, ")"));
  }
  std::string digits(int_digits - whole.size(), '0');
  digits.append(whole);
  digits.append(frac);
  digits.append(static_cast<size_t>(scale) - frac.size(), '0');
  bool zero = true;
  for (char c : digits) {
    if (c < '0' || c > '9') return Bad(col, text, "not a decimal number");
    zero = zero && c == '0';
  }
  negative = negative && !zero;
  out->push_back(negative ? '\x01' : '\x02');
  for (char c : digits) out->push_back(negative ? static_cast<char>('9' - (c - '0')) : c);
  return absl::OkStatus();
}

// TIME text ("-838:59:59.000000") as signed microseconds.
absl::Status AppendTime(const protocol::ColumnDef& col, std::string_view text, std::string* out) {
  std::string_view t = text;
  const bool negative = !t.empty() && t[0] == '-';
  if (negative) t.remove_prefix(1);
  uint64_t parts[3] = {0, 0, 0};
  size_t part = 0;
  uint64_t micro = 0;
  size_t i = 0;
  for (; i < t.size() && t[i] != '.'; ++i) {
    if (t[i] == ':') {
      if (++part > 2) return Bad(col, text, "not a TIME");
      continue;
    }
    if (t[i] < '0' || t[i] > '9' || parts[part] > 100000) return Bad(col, text, "not a TIME");
    parts[part] = parts[part] * 10 + static_cast<uint64_t>(t[i] - '0');
  }
  if (part != 2) return Bad(col, text, "not a TIME");
  if (i < t.size()) {
    std::string_view f = t.substr(i + 1);
    if (f.size() > 6) return Bad(col, text, "more than 6 fractional digits");
    for (char c : f) {
      if (c < '0' || c > '9') return Bad(col, text, "not a TIME");
      micro = micro * 10 + static_cast<uint64_t>(c - '0');
    }
    for (size_t k = f.size(); k < 6; ++k) micro *= 10;
  }
  const int64_t v =
      static_cast<int64_t>(((parts[0] * 60 + parts[1]) * 60 + parts[2]) * 1000000 + micro);
  AppendSigned(negative ? -v : v, out);
  return absl::OkStatus();
}

bool IsCivilTemporal(uint8_t type) {
  using namespace protocol;
  switch (type) {
    case kTypeDate:
    case kTypeNewDate:
    case kTypeDatetime:
    case kTypeDatetime2:
    case kTypeTimestamp:
    case kTypeTimestamp2:
      return true;
    default:
      return false;
  }
}

bool IsTime(uint8_t type) {
  return type == protocol::kTypeTime || type == protocol::kTypeTime2;
}

// BINARY(n) values are logged without their trailing 0x00 bytes and read
// back with them: both compare equal to the server, and here too.
std::string_view TrimBinaryPad(const protocol::ColumnDef& col, std::string_view s) {
  if (col.type != protocol::kTypeString || col.collation != 63) return s;  // 63: binary
  while (!s.empty() && s.back() == '\0') s.remove_suffix(1);
  return s;
}

}  // namespace

absl::Status AppendOrderedComponent(const protocol::ColumnDef& col, const protocol::ValueView& v,
                                    std::string* out) {
  using protocol::ValueKind;
  switch (v.kind) {
    case ValueKind::kNull:
      return absl::InvalidArgumentError(
          absl::StrCat("primary-key column `", col.name, "` is NULL in a row image"));
    case ValueKind::kSigned:
      AppendSigned(v.i, out);
      return absl::OkStatus();
    case ValueKind::kUnsigned:
    case ValueKind::kYear:
    case ValueKind::kEnum:
    case ValueKind::kSet:
      AppendBigEndian(v.u, out);
      return absl::OkStatus();
    case ValueKind::kFloat:
    case ValueKind::kDouble:
      AppendDouble(v.d, out);
      return absl::OkStatus();
    case ValueKind::kFormatted:
      if (col.type == protocol::kTypeNewDecimal) return AppendDecimal(col, v.bytes, out);
      if (IsTime(col.type)) return AppendTime(col, v.bytes, out);
      if (IsCivilTemporal(col.type)) {
        // Fixed width per column (4-digit year, the column's fsp): the
        // text's byte order is time order.
        AppendBytes(v.bytes, out);
        return absl::OkStatus();
      }
      break;
    case ValueKind::kText:
    case ValueKind::kBinary:
      AppendBytes(TrimBinaryPad(col, v.bytes), out);
      return absl::OkStatus();
    default:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "primary-key column `", col.name, "` has a type a move cannot order (type code ",
      static_cast<int>(col.type), ")"));
}

absl::Status AppendOrderedComponentFromText(const protocol::ColumnDef& col, std::string_view text,
                                            std::string* out) {
  using protocol::ValueKind;
  protocol::ValueView v;
  v.bytes = text;
  if (protocol::IntegerWidth(col.type) != 0 || col.type == protocol::kTypeYear) {
    if (col.is_unsigned || col.type == protocol::kTypeYear) {
      if (!absl::SimpleAtoi(AV(text), &v.u)) return Bad(col, text, "not an integer");
      v.kind = ValueKind::kUnsigned;
    } else {
      if (!absl::SimpleAtoi(AV(text), &v.i)) return Bad(col, text, "not an integer");
      v.kind = ValueKind::kSigned;
    }
  } else if (col.type == protocol::kTypeFloat) {
    // A row image's FLOAT is the float widened to double: parse as float.
    float f = 0;
    if (!absl::SimpleAtof(AV(text), &f)) return Bad(col, text, "not a number");
    v.d = f;
    v.kind = ValueKind::kDouble;
  } else if (col.type == protocol::kTypeDouble) {
    if (!absl::SimpleAtod(AV(text), &v.d)) return Bad(col, text, "not a number");
    v.kind = ValueKind::kDouble;
  } else if (col.type == protocol::kTypeNewDecimal || IsTime(col.type) ||
             IsCivilTemporal(col.type)) {
    v.kind = ValueKind::kFormatted;
  } else if (col.type == protocol::kTypeEnum || col.type == protocol::kTypeSet) {
    // A SELECT returns the member names; a move orders these keys by
    // SELECT pk + 0 (the index), which it asks for instead.
    if (!absl::SimpleAtoi(AV(text), &v.u)) return Bad(col, text, "expected the member's index");
    v.kind = ValueKind::kUnsigned;
  } else {
    v.kind = ValueKind::kBinary;
  }
  return AppendOrderedComponent(col, v, out);
}

absl::Status EncodeOrderedKey(std::string_view image, const protocol::TableDef& table,
                              const std::vector<uint32_t>& primary_key, std::string* scratch,
                              std::string* out) {
  out->clear();
  // Components in primary-key order, which need not be column order.
  std::vector<std::string> parts(primary_key.size());
  uint32_t last = 0;
  for (uint32_t c : primary_key) last = std::max(last, c);
  absl::Status failed;
  absl::Status s = protocol::ForEachImageValue(
      image, table, scratch, [&](size_t i, const protocol::ValueView* v) {
        for (size_t k = 0; k < primary_key.size(); ++k) {
          if (primary_key[k] != i) continue;
          protocol::ValueView null;
          absl::Status a = AppendOrderedComponent(table.columns[i], v ? *v : null, &parts[k]);
          if (!a.ok()) {
            failed = a;
            return false;
          }
        }
        return i < last;
      });
  if (!s.ok()) return s;
  if (!failed.ok()) return failed;
  for (const auto& p : parts) out->append(p);
  return absl::OkStatus();
}

}  // namespace binrelay::apply
