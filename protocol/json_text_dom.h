// A minimal JSON DOM for re-writing documents (JSON diffs): parses JSON text
// and prints it back in MySQL's format ({"a": 1, "b": [1, 2]}). Numbers keep
// their original text; strings are held unescaped (UTF-8).
//
// Thread safety: plain values.
// Lifetime: nodes own their data.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace binrelay::protocol {

struct JsonNode {
  enum class Kind : uint8_t { kNull, kTrue, kFalse, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  std::string text;               // number literal, or string content
  std::vector<std::string> keys;  // object keys, parallel to items
  std::vector<JsonNode> items;    // array elements / object values
};

// Parses one JSON value (surrounding whitespace allowed). InvalidArgument on
// syntax errors or nesting deeper than 200.
absl::Status ParseJsonText(std::string_view text, JsonNode* out);

// Appends `node` in MySQL's JSON text format.
void AppendJsonNode(const JsonNode& node, std::string* out);

// Index at which `key` sits, or should be inserted, in MySQL's key order
// (shorter first, then bytewise); *found tells whether it is already there.
size_t FindKeySlot(const JsonNode& object, std::string_view key, bool* found);

}  // namespace binrelay::protocol
