#include "protocol/byte_cursor.h"

#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {

absl::Status ByteCursor::status(std::string_view what) const {
  if (!failed_) return absl::OkStatus();
  return absl::OutOfRangeError(absl::StrCat("truncated or malformed ", AV(what), " at byte ", pos_,
                                            " of ", data_.size()));
}

uint64_t ByteCursor::Lenenc(bool* is_null) {
  if (is_null) *is_null = false;
  if (!Need(1)) return 0;
  uint8_t first = static_cast<uint8_t>(data_[pos_]);
  ++pos_;
  if (first < 0xFB) return first;
  switch (first) {
    case 0xFB:
      if (is_null) {
        *is_null = true;
        return 0;
      }
      failed_ = true;
      return 0;
    case 0xFC:
      return Fixed(2);
    case 0xFD:
      return Fixed(3);
    case 0xFE:
      return Fixed(8);
    default:
      failed_ = true;
      return 0;
  }
}

std::string_view ByteCursor::NulString() {
  if (failed_) return {};
  size_t end = data_.find('\0', pos_);
  if (end == std::string_view::npos) {
    failed_ = true;
    return {};
  }
  std::string_view v = data_.substr(pos_, end - pos_);
  pos_ = end + 1;
  return v;
}

void AppendFixed(std::string* out, uint64_t v, size_t width) {
  const size_t at = out->size();
  out->resize(at + width);
  char* p = out->data() + at;
  for (size_t i = 0; i < width; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

void AppendLenenc(std::string* out, uint64_t v) {
  if (v < 251) {
    out->push_back(static_cast<char>(v));
  } else if (v < (1u << 16)) {
    out->push_back(static_cast<char>(0xFC));
    AppendFixed(out, v, 2);
  } else if (v < (1u << 24)) {
    out->push_back(static_cast<char>(0xFD));
    AppendFixed(out, v, 3);
  } else {
    out->push_back(static_cast<char>(0xFE));
    AppendFixed(out, v, 8);
  }
}

}  // namespace binrelay::protocol
