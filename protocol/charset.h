// Character sets of text column values: collation id -> charset, and
// conversion of a value's bytes to UTF-8 (optionally JSON-escaped in the same
// pass, so the hot path never builds an intermediate string).
//
// The Unicode charsets, latin1 and ascii are converted here; the other
// charsets both servers have (cp1251, sjis, ...) in legacy_charset.h. An
// unknown collation id (including 0) is treated as UTF-8, with invalid
// bytes becoming U+FFFD, so output is always valid UTF-8/JSON.
// MySQL's `latin1` is Windows cp1252 with the five undefined bytes (0x81,
// 0x8D, 0x8F, 0x90, 0x9D) mapped to the C1 controls U+0081.. as MySQL does
// (strings/ctype-latin1.cc), not ISO-8859-1.
//
// Thread safety: stateless functions over constant tables.
// Lifetime: nothing returned points into the input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace binrelay::protocol {

enum class Charset : uint8_t {
  kUtf8,     // utf8mb3, utf8mb4 and every unrecognised id
  kLatin1,   // cp1252 as MySQL defines latin1
  kAscii,
  kUcs2,     // UCS-2 big-endian
  kUtf16,    // UTF-16 big-endian
  kUtf16le,  // UTF-16 little-endian
  kUtf32,    // UTF-32 big-endian
  kBinary,   // collation 63: bytes, not text
  kLegacy,   // cp1251, sjis, ... (legacy_charset.h): needs the collation id
};

// Charset of MySQL / MariaDB collation `collation_id` (including MariaDB's
// NO PAD ids 1024+n and its UCA-14.0 ids 2048..3327).
Charset CharsetForCollation(uint32_t collation_id);
// UTF-8 encodes one code point (<= 0x10FFFF, not a surrogate) into out.
void AppendUtf8Codepoint(uint32_t cp, std::string* out);
std::string_view CharsetName(Charset cs);
// The default collation id of the charset named `name` (information_schema's
// CHARACTER_SET_NAME: "utf8mb4", "utf8mb3" or "utf8", "latin1", ...; ids are
// the same on MySQL and MariaDB); 0 for a name neither server has.
uint32_t DefaultCollationForCharset(std::string_view name);

// Appends `bytes` (in charset `cs`) converted to UTF-8. Undecodable input
// (bad UTF-8, lone surrogates, odd trailing bytes, code points > U+10FFFF,
// ASCII bytes >= 0x80) becomes U+FFFD. kBinary is copied unchanged.
void AppendUtf8(std::string_view bytes, Charset cs, std::string* out);

// Appends `bytes` as a quoted JSON string after conversion to UTF-8 as above.
void AppendTextJson(std::string_view bytes, Charset cs, std::string* out);

// The same for text of collation `collation_id`, whatever its charset
// (the legacy ones included).
void AppendCollationUtf8(std::string_view bytes, uint32_t collation_id, std::string* out);
void AppendCollationTextJson(std::string_view bytes, uint32_t collation_id, std::string* out);

}  // namespace binrelay::protocol
