#include "apply/row_key.h"

#include <cstring>

#include "protocol/column_type.h"
#include "protocol/row_image.h"

namespace binrelay::apply {
namespace {

// `tag` then v's 8 bytes, most significant first, in one append (keys are
// encoded for every row change).
void AppendTagged(char tag, uint64_t v, std::string* out) {
  char buf[9];
  buf[0] = tag;
  for (int i = 0; i < 8; ++i) buf[1 + i] = static_cast<char>(v >> (56 - 8 * i));
  out->append(buf, sizeof buf);
}

void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

}  // namespace

void AppendKeyComponent(const protocol::ValueView* v, std::string* out) {
  using protocol::ValueKind;
  if (v == nullptr || v->kind == ValueKind::kNull) {
    out->push_back('N');
    return;
  }
  switch (v->kind) {
    case ValueKind::kSigned:
      AppendTagged('i', static_cast<uint64_t>(v->i), out);
      return;
    case ValueKind::kUnsigned:
    case ValueKind::kYear:
    case ValueKind::kEnum:
    case ValueKind::kSet:
      AppendTagged('u', v->u, out);
      return;
    case ValueKind::kFloat:
    case ValueKind::kDouble: {
      uint64_t bits = 0;
      std::memcpy(&bits, &v->d, sizeof(bits));
      AppendTagged('d', bits, out);
      return;
    }
    default:
      out->push_back('s');
      AppendVarint(v->bytes.size(), out);
      out->append(v->bytes);
      return;
  }
}

absl::Status KeyEncoder::Encode(std::string_view image, const protocol::TableDef& table,
                                const std::vector<uint32_t>& primary_key, std::string* out) {
  out->clear();
  if (primary_key.size() == 1 && primary_key[0] == 0 && !table.columns.empty()) {
    // The commonest key, an integer first column, read straight from the
    // image: the same bytes AppendKeyComponent writes for its ValueView.
    const protocol::ColumnDef& col = table.columns[0];
    const size_t width = protocol::IntegerWidth(col.type);
    const size_t bitmap = (table.columns.size() + 7) / 8;
    if (width != 0 && image.size() >= bitmap + width) {
      if (image[0] & 1) {
        out->push_back('N');
        return absl::OkStatus();
      }
      uint64_t v = 0;
      for (size_t i = 0; i < width; ++i) {
        v |= uint64_t{static_cast<uint8_t>(image[bitmap + i])} << (8 * i);
      }
      if (col.is_unsigned) {
        AppendTagged('u', v, out);
      } else {
        const int shift = 64 - 8 * static_cast<int>(width);
        AppendTagged('i', static_cast<uint64_t>(static_cast<int64_t>(v << shift) >> shift), out);
      }
      return absl::OkStatus();
    }
  }
  if (primary_key.size() == 1) {
    // The common case: one column, encoded straight into *out.
    const uint32_t want = primary_key[0];
    return protocol::ForEachImageValue(image, table, &scratch_,
                                       [&](size_t i, const protocol::ValueView* v) {
                                         if (i != want) return true;
                                         AppendKeyComponent(v, out);
                                         return false;
                                       });
  }
  uint32_t last = 0;
  for (uint32_t c : primary_key) last = std::max(last, c);
  parts_.resize(primary_key.size());
  for (auto& p : parts_) p.clear();
  absl::Status s = protocol::ForEachImageValue(
      image, table, &scratch_, [&](size_t i, const protocol::ValueView* v) {
        for (size_t k = 0; k < primary_key.size(); ++k) {
          if (primary_key[k] == i) AppendKeyComponent(v, &parts_[k]);
        }
        return i < last;
      });
  if (!s.ok()) return s;
  for (const auto& p : parts_) out->append(p);
  return absl::OkStatus();
}

}  // namespace binrelay::apply
