#include "protocol/json_binary_writer.h"

#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/column_type.h"
#include "protocol/decimal.h"
#include "protocol/json_binary.h"
#include "protocol/json_binary_format.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

using namespace json_binary;  // type bytes, literals, kMaxDepth

void PutVarLength(uint64_t len, std::string* out) {
  do {
    uint8_t b = len & 0x7F;
    len >>= 7;
    if (len != 0) b |= 0x80;
    out->push_back(static_cast<char>(b));
  } while (len != 0);
}

// One encoded value: its type byte and its data (what follows the type byte
// in a document, or what a value entry's offset points at).
struct Encoded {
  uint8_t type = kLiteral;
  std::string data;
};

bool Inlined(uint8_t type, bool large) {
  switch (type) {
    case kLiteral:
    case kInt16:
    case kUint16:
      return true;
    case kInt32:
    case kUint32:
      return large;
    default:
      return false;
  }
}

// Packed DECIMAL (strings/decimal.cc decimal2bin) of `int_digits`.`frac_digits`.
void PackDecimal(bool negative, std::string_view int_digits, std::string_view frac_digits,
                 std::string* out) {
  static constexpr int kDigitBytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
  const size_t start = out->size();
  auto group = [&](std::string_view digits) {
    uint32_t v = 0;
    for (char ch : digits) v = v * 10 + static_cast<uint32_t>(ch - '0');
    const int bytes = digits.size() == 9 ? 4 : kDigitBytes[digits.size()];
    for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  };
  const size_t lead = int_digits.size() % 9;
  if (lead != 0) group(int_digits.substr(0, lead));
  for (size_t i = lead; i < int_digits.size(); i += 9) group(int_digits.substr(i, 9));
  const size_t full = frac_digits.size() / 9 * 9;
  for (size_t i = 0; i < full; i += 9) group(frac_digits.substr(i, 9));
  if (full < frac_digits.size()) group(frac_digits.substr(full));
  if (negative) {
    for (size_t i = start; i < out->size(); ++i) (*out)[i] = static_cast<char>(~(*out)[i]);
  }
  (*out)[start] = static_cast<char>((*out)[start] ^ 0x80);
}

// "-12.340" or "123456789012345678901234567890" (a DECIMAL of scale 0
// beyond 64 bits) as an opaque DECIMAL; false when it is not plain decimal
// text or does not fit DECIMAL(65,30).
bool EncodeDecimalText(std::string_view text, Encoded* e) {
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) text.remove_prefix(1);
  const size_t dot = text.find('.');
  std::string_view int_digits = text.substr(0, dot);
  std::string_view frac_digits =
      dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  if (int_digits.empty()) return false;
  for (std::string_view part : {int_digits, frac_digits}) {
    for (char ch : part) {
      if (ch < '0' || ch > '9') return false;
    }
  }
  while (!int_digits.empty() && int_digits[0] == '0') int_digits.remove_prefix(1);
  const size_t scale = frac_digits.size();
  const size_t precision = std::max<size_t>(1, int_digits.size() + scale);
  if (scale > static_cast<size_t>(kMaxDecimalScale) ||
      precision > static_cast<size_t>(kMaxDecimalPrecision) || precision < scale) {
    return false;
  }
  std::string value;
  value.push_back(static_cast<char>(precision));
  value.push_back(static_cast<char>(scale));
  // Integer digits padded to precision - scale, as decimal2bin stores them.
  std::string padded(precision - scale - int_digits.size(), '0');
  padded.append(int_digits);
  PackDecimal(negative, padded, frac_digits, &value);
  e->type = kOpaque;
  e->data.push_back(static_cast<char>(kTypeNewDecimal));
  PutVarLength(value.size(), &e->data);
  e->data.append(value);
  return true;
}

void EncodeDouble(double d, Encoded* e) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  e->type = kDouble;
  AppendFixed(&e->data, bits, 8);
}

void EncodeNumber(std::string_view text, Encoded* e) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (text.find_first_of(".eE") == std::string_view::npos) {
    int64_t i;
    if (auto r = std::from_chars(begin, end, i); r.ec == std::errc() && r.ptr == end) {
      if (i >= INT16_MIN && i <= INT16_MAX) {
        e->type = kInt16;
        AppendFixed(&e->data, static_cast<uint64_t>(i), 2);
      } else if (i >= INT32_MIN && i <= INT32_MAX) {
        e->type = kInt32;
        AppendFixed(&e->data, static_cast<uint64_t>(i), 4);
      } else {
        e->type = kInt64;
        AppendFixed(&e->data, static_cast<uint64_t>(i), 8);
      }
      return;
    }
    uint64_t u;
    if (auto r = std::from_chars(begin, end, u); r.ec == std::errc() && r.ptr == end) {
      e->type = kUint64;  // above INT64_MAX, so wider than 32 bits
      AppendFixed(&e->data, u, 8);
      return;
    }
  }
  double d = 0;
  std::from_chars(begin, end, d);  // out of range keeps d at 0 and is caught below
  std::string printed;
  AppendMysqlJsonDouble(d, &printed);
  if (printed == text) return EncodeDouble(d, e);
  if (EncodeDecimalText(text, e)) return;
  // Neither prints back (an exponent a double does not reproduce, an
  // integer of more than 65 digits): stored as the double MySQL's parser
  // would make.
  EncodeDouble(d, e);
}

absl::Status Encode(const JsonNode& node, int depth, Encoded* e);

absl::Status EncodeContainer(const JsonNode& node, int depth, Encoded* e) {
  const bool object = node.kind == JsonNode::Kind::kObject;
  const size_t n = node.items.size();
  std::vector<Encoded> values(n);
  for (size_t i = 0; i < n; ++i) BR_RETURN_IF_ERROR(Encode(node.items[i], depth + 1, &values[i]));
  size_t key_bytes = 0;
  if (object) {
    for (const std::string& key : node.keys) {
      if (key.size() > UINT16_MAX) {
        return absl::InvalidArgumentError(absl::StrCat(
            "a JSON object key of ", key.size(), " bytes is longer than 65535"));
      }
      key_bytes += key.size();
    }
  }
  // Small while every offset fits in 16 bits, as serialize_json_value tries.
  for (const bool large : {false, true}) {
    const size_t offset_size = large ? 4 : 2;
    size_t size = 2 * offset_size + n * (1 + offset_size);
    if (object) size += n * (offset_size + 2) + key_bytes;
    for (const Encoded& v : values) {
      if (!Inlined(v.type, large)) size += v.data.size();
    }
    const uint64_t limit = large ? UINT32_MAX : UINT16_MAX;
    if (size > limit || n > limit) {
      if (large) {
        return absl::InvalidArgumentError(
            absl::StrCat("a JSON container of ", size, " bytes exceeds 4 GiB"));
      }
      continue;
    }
    e->type = object ? (large ? kLargeObject : kSmallObject) : (large ? kLargeArray : kSmallArray);
    std::string& out = e->data;
    out.reserve(size);
    AppendFixed(&out, n, offset_size);
    AppendFixed(&out, size, offset_size);
    size_t offset = 2 * offset_size + n * (1 + offset_size);
    if (object) {
      offset += n * (offset_size + 2);
      for (const std::string& key : node.keys) {
        AppendFixed(&out, offset, offset_size);
        AppendFixed(&out, key.size(), 2);
        offset += key.size();
      }
    }
    for (const Encoded& v : values) {
      out.push_back(static_cast<char>(v.type));
      if (Inlined(v.type, large)) {
        // The value itself in the offset field, zero-extended.
        std::string inlined = v.data;
        inlined.resize(offset_size, '\0');
        out.append(inlined);
      } else {
        AppendFixed(&out, offset, offset_size);
        offset += v.data.size();
      }
    }
    if (object) {
      for (const std::string& key : node.keys) out.append(key);
    }
    for (const Encoded& v : values) {
      if (!Inlined(v.type, large)) out.append(v.data);
    }
    return absl::OkStatus();
  }
  return absl::InternalError("unreachable");
}

absl::Status Encode(const JsonNode& node, int depth, Encoded* e) {
  switch (node.kind) {
    case JsonNode::Kind::kNull:
      e->type = kLiteral;
      e->data.assign(1, static_cast<char>(kLiteralNull));
      return absl::OkStatus();
    case JsonNode::Kind::kTrue:
      e->type = kLiteral;
      e->data.assign(1, static_cast<char>(kLiteralTrue));
      return absl::OkStatus();
    case JsonNode::Kind::kFalse:
      e->type = kLiteral;
      e->data.assign(1, static_cast<char>(kLiteralFalse));
      return absl::OkStatus();
    case JsonNode::Kind::kNumber:
      EncodeNumber(node.text, e);
      return absl::OkStatus();
    case JsonNode::Kind::kString:
      e->type = kString;
      PutVarLength(node.text.size(), &e->data);
      e->data.append(node.text);
      return absl::OkStatus();
    case JsonNode::Kind::kArray:
    case JsonNode::Kind::kObject:
      if (depth >= kMaxDepth) {
        return absl::InvalidArgumentError(
            absl::StrCat("a JSON document nests deeper than ", kMaxDepth, " levels"));
      }
      return EncodeContainer(node, depth, e);
  }
  return absl::InternalError("unknown JSON node kind");
}

}  // namespace

absl::Status EncodeJsonBinary(const JsonNode& doc, std::string* out) {
  Encoded e;
  BR_RETURN_IF_ERROR(Encode(doc, 0, &e));
  out->push_back(static_cast<char>(e.type));
  out->append(e.data);
  return absl::OkStatus();
}

absl::Status EncodeJsonTextAsBinary(std::string_view text, std::string* out) {
  JsonNode doc;
  BR_RETURN_IF_ERROR(ParseJsonText(text, &doc));
  return EncodeJsonBinary(doc, out);
}

}  // namespace binrelay::protocol
