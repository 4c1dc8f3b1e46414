// Small JSON output helpers shared by every JSON producer (tail lines, HTTP).
// Thread safety: stateless functions.
#pragma once

#include <string>
#include <string_view>

namespace binrelay::protocol {

// Appends `s` (UTF-8) as a quoted JSON string. Invalid UTF-8 bytes are
// replaced by U+FFFD so the output is always valid JSON.
void AppendJsonString(std::string_view s, std::string* out);

// Length of the longest prefix of `s` that a JSON string can hold as is:
// printable ASCII other than '"' and '\\'. Scans 8 bytes at a time; text
// columns are mostly such bytes, and this scan is the tail's hottest loop.
size_t PlainJsonPrefix(std::string_view s);

// Appends the standard base64 (RFC 4648, with padding) of `bytes`.
void AppendBase64(std::string_view bytes, std::string* out);

}  // namespace binrelay::protocol
