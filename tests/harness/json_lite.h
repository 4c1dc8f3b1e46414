// json_lite: a small strict JSON reader and a base64 decoder for checking
// binrelay's output in tests.
//
// Strict means RFC 8259 only: no trailing commas, no comments, no leading
// zeros, no raw control characters in strings, no lone surrogates, nothing
// after the top-level value. Numbers are kept as their raw text so a test can
// compare uint64 / DECIMAL-like digits exactly or parse them as float/double
// itself. Objects keep member order; a duplicate key is an error (binrelay
// never writes one, and a duplicate would hide a wrong column).
//
// Thread safety: free functions, no shared state. Lifetime: JsonValue owns all
// of its text; nothing returned points into the input.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace binrelay::testing {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  // kString: the decoded UTF-8 string; kNumber: the number's raw text.
  std::string text;
  std::vector<JsonValue> array;
  std::vector<std::pair<std::string, JsonValue>> object;

  bool is_null() const { return kind == Kind::kNull; }
  bool is_number() const { return kind == Kind::kNumber; }
  bool is_string() const { return kind == Kind::kString; }
  bool is_object() const { return kind == Kind::kObject; }
  // Member `key` of an object, or nullptr (also for non-objects).
  const JsonValue* Find(std::string_view key) const;
};

absl::StatusOr<JsonValue> ParseJson(std::string_view text);

// Standard base64 (RFC 4648 alphabet, '=' padding required, no whitespace).
absl::StatusOr<std::string> Base64Decode(std::string_view text);

// Parses binrelay's stdout: one JSON object per '\n'-terminated line. Fails
// on an unterminated last line (a torn write) or any line that is not an
// object, naming the line number.
absl::StatusOr<std::vector<JsonValue>> ParseJsonLines(std::string_view text);

// Uppercase hex of `bytes`, as SQL HEX() prints it.
std::string ToHex(std::string_view bytes);

}  // namespace binrelay::testing
