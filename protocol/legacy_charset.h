// Text in the charsets MySQL and MariaDB keep besides the Unicode ones,
// latin1 and ascii (charset.h): converted to UTF-8 as the server converts it
// for SELECT.
// - Single-byte charsets (cp1251, koi8r, greek, hebrew, tis620, swe7, ...):
//   the code point the server gives each byte, read off live servers into
//   legacy_charset_tables.inc (scripts/derive-charset-tables.py); a byte
//   the charset does not define is '?', as SELECT shows it. (One byte is
//   known to differ between the servers: DEL, 0x7F, in latin2_czech_cs,
//   which MySQL prints as DEL and MariaDB as '?'; binrelay prints '?'.)
// - Multi-byte charsets (sjis, cp932, ujis, eucjpms, big5, gbk, gb2312,
//   gb18030, euckr): glibc's iconv; a sequence that does not decode is
//   U+FFFD (SELECT would show '?'), and the rare code points where glibc's
//   table differs from the server's can differ.
//
// Thread safety: every function may run on several threads (iconv state is
// per thread).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace binrelay::protocol {

struct LegacyCharset;

// The legacy charset of collation `collation_id` (MariaDB NO PAD ids
// 1024+n included), or nullptr for any other collation.
const LegacyCharset* LegacyCharsetForCollation(uint32_t collation_id);
std::string_view LegacyCharsetName(const LegacyCharset& cs);

// Appends `bytes` converted to UTF-8.
void AppendLegacyUtf8(std::string_view bytes, const LegacyCharset& cs, std::string* out);

}  // namespace binrelay::protocol
