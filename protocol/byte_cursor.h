// ByteCursor: a bounds-checked little-endian reader over a const byte view.
//
// Every wire decoder in binrelay reads through this one class. A read past the
// end never touches memory outside the view: it returns zero/empty and makes
// the cursor sticky-failed, so a decoder can read a run of fields and check
// ok() once. Length prefixes are checked against remaining() before anything
// is allocated by the caller (ReadBytes returns a view, never a copy).
//
// Thread safety: none; a cursor is a local value.
// Lifetime: views returned by ReadBytes/ReadRest point into the buffer the
// cursor was built on and are valid as long as that buffer is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace binrelay::protocol {

class ByteCursor {
 public:
  ByteCursor() = default;
  explicit ByteCursor(std::string_view data) : data_(data) {}

  size_t position() const { return pos_; }
  size_t size() const { return data_.size(); }
  size_t remaining() const { return failed_ ? 0 : data_.size() - pos_; }
  bool empty() const { return remaining() == 0; }
  bool ok() const { return !failed_; }
  std::string_view data() const { return data_; }

  // OutOfRange naming what was being read and the offset where input ran out.
  absl::Status status(std::string_view what) const;

  // Ensures n more bytes are present; fails the cursor otherwise.
  bool Need(size_t n) {
    if (failed_ || data_.size() - pos_ < n) {
      failed_ = true;
      return false;
    }
    return true;
  }

  uint8_t U8() { return static_cast<uint8_t>(Fixed(1)); }
  uint16_t U16() { return static_cast<uint16_t>(Fixed(2)); }
  uint32_t U24() { return static_cast<uint32_t>(Fixed(3)); }
  uint32_t U32() { return static_cast<uint32_t>(Fixed(4)); }
  uint64_t U48() { return Fixed(6); }
  uint64_t U64() { return Fixed(8); }
  // Little-endian unsigned of width 1..8.
  uint64_t Fixed(size_t width) {
    if (!Need(width)) return 0;
    uint64_t v = 0;
    const auto* p = reinterpret_cast<const uint8_t*>(data_.data() + pos_);
    for (size_t i = 0; i < width; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
    pos_ += width;
    return v;
  }
  // Big-endian unsigned of width 1..8.
  uint64_t FixedBE(size_t width) {
    if (!Need(width)) return 0;
    uint64_t v = 0;
    const auto* p = reinterpret_cast<const uint8_t*>(data_.data() + pos_);
    for (size_t i = 0; i < width; ++i) v = (v << 8) | p[i];
    pos_ += width;
    return v;
  }

  // Length-encoded integer
  // (https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_dt_integers.html).
  // 0xFB (NULL) and 0xFF fail the cursor unless
  // `is_null` is given, in which case 0xFB sets *is_null and returns 0.
  uint64_t Lenenc(bool* is_null = nullptr);
  // Length-encoded string; the length is checked against remaining() first.
  std::string_view LenencString(bool* is_null = nullptr) {
    uint64_t n = Lenenc(is_null);
    if (is_null && *is_null) return {};
    return Bytes(n);
  }
  // NUL-terminated string; fails if no NUL is found.
  std::string_view NulString();

  std::string_view Bytes(uint64_t n) {
    if (n > remaining()) {
      failed_ = true;
      return {};
    }
    std::string_view v = data_.substr(pos_, n);
    pos_ += n;
    return v;
  }
  std::string_view Rest() { return Bytes(remaining()); }
  void Skip(uint64_t n) { (void)Bytes(n); }
  uint8_t PeekU8() const {
    return remaining() ? static_cast<uint8_t>(data_[pos_]) : 0;
  }
  // Marks the cursor failed; used by decoders that find an invalid value.
  void Fail() { failed_ = true; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
  bool failed_ = false;
};

// Appends v as a length-encoded integer (shortest form).
void AppendLenenc(std::string* out, uint64_t v);
void AppendFixed(std::string* out, uint64_t v, size_t width);

}  // namespace binrelay::protocol
