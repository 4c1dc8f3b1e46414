// MySQL binary JSON (column type 245): the type bytes and depth limit of
// sql-common/json_binary.cc, shared by the reader (json_binary.h) and the
// writer (json_binary_writer.h).
#pragma once

#include <cstdint>

namespace binrelay::protocol::json_binary {

enum : uint8_t {
  kSmallObject = 0x00,
  kLargeObject = 0x01,
  kSmallArray = 0x02,
  kLargeArray = 0x03,
  kLiteral = 0x04,
  kInt16 = 0x05,
  kUint16 = 0x06,
  kInt32 = 0x07,
  kUint32 = 0x08,
  kInt64 = 0x09,
  kUint64 = 0x0A,
  kDouble = 0x0B,
  kString = 0x0C,
  kOpaque = 0x0F,
};
// Literal values.
enum : uint8_t { kLiteralNull = 0, kLiteralTrue = 1, kLiteralFalse = 2 };

// MySQL's JSON_DOCUMENT_MAX_DEPTH; also bounds recursion on hostile input.
inline constexpr int kMaxDepth = 100;

}  // namespace binrelay::protocol::json_binary
