// Helpers shared by the value-decoding tests: hex to bytes, one-column decode.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "protocol/byte_cursor.h"
#include "protocol/column_def.h"
#include "protocol/value.h"

namespace binrelay::protocol::testutil {

inline std::string Hex(std::string_view hex) {
  std::string out;
  auto nib = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
  for (size_t i = 0; i + 1 < hex.size();) {
    if (hex[i] == ' ') {
      ++i;
      continue;
    }
    out.push_back(static_cast<char>(nib(hex[i]) << 4 | nib(hex[i + 1])));
    i += 2;
  }
  return out;
}

inline ColumnDef Col(uint8_t type, uint16_t meta = 0, uint32_t collation = 0,
                     bool is_unsigned = false) {
  ColumnDef c;
  c.type = type;
  c.meta = meta;
  c.collation = collation;
  c.is_unsigned = is_unsigned;
  return c;
}

// Decodes exactly one value from `bytes` (all bytes must be consumed) and
// returns its JSON rendering.
inline absl::StatusOr<std::string> DecodeJson(const ColumnDef& col, std::string_view bytes) {
  ByteCursor in(bytes);
  std::string scratch;
  ValueView v;
  absl::Status st = DecodeValue(in, col, &scratch, &v);
  if (!st.ok()) {
    // SkipValue makes the same checks: what DecodeValue refuses, it refuses.
    ByteCursor skip(bytes);
    std::string skip_scratch;
    if (SkipValue(skip, col, &skip_scratch).ok()) {
      return absl::InternalError("SkipValue accepted a value DecodeValue refused: " +
                                 std::string(st.message()));
    }
    return st;
  }
  if (in.remaining() != 0) {
    return absl::InternalError("decoder left " + std::to_string(in.remaining()) + " bytes");
  }
  // Every decode is also a check of SkipValue: the apply path frames row
  // images with it, so it must step over exactly the bytes DecodeValue read.
  ByteCursor skip(bytes);
  std::string skip_scratch;
  absl::Status skipped = SkipValue(skip, col, &skip_scratch);
  if (!skipped.ok() || skip.remaining() != 0) {
    return absl::InternalError("SkipValue disagrees with DecodeValue: " +
                               std::string(skipped.message()) + ", left " +
                               std::to_string(skip.remaining()) + " bytes");
  }
  std::string out;
  AppendValueJson(v, &out);
  return out;
}

}  // namespace binrelay::protocol::testutil
