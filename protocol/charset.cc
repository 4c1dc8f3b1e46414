#include "protocol/charset.h"

#include "protocol/json_writer.h"
#include "protocol/legacy_charset.h"

namespace binrelay::protocol {
namespace {

constexpr uint32_t kReplacement = 0xFFFD;

// cp1252 0x80..0x9F as MySQL's latin1 maps them (undefined slots -> C1).
constexpr uint16_t kLatin1High[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};

Charset BaseCharset(uint32_t id) {
  switch (id) {
    case 5: case 8: case 15: case 31: case 47: case 48: case 49: case 94:
      return Charset::kLatin1;
    case 11: case 65:
      return Charset::kAscii;
    case 35: case 90: case 159:
      return Charset::kUcs2;
    case 54: case 55:
      return Charset::kUtf16;
    case 56: case 62:
      return Charset::kUtf16le;
    case 60: case 61:
      return Charset::kUtf32;
    case 63:
      return Charset::kBinary;
    default:
      break;
  }
  if (id >= 101 && id <= 124) return Charset::kUtf16;  // utf16_unicode_ci ..
  if (id >= 128 && id <= 151) return Charset::kUcs2;   // ucs2_unicode_ci ..
  if (id >= 160 && id <= 183) return Charset::kUtf32;  // utf32_unicode_ci ..
  // MariaDB's croatian, myanmar and thai_520_w2 collations of each Unicode
  // charset, 32 ids apart (strings/ctype-uca.c: utf8mb3 576, utf8mb4 608,
  // ucs2 640, utf16 672, utf32 736).
  if (id >= 640 && id <= 642) return Charset::kUcs2;
  if (id >= 672 && id <= 674) return Charset::kUtf16;
  if (id >= 736 && id <= 738) return Charset::kUtf32;
  return Charset::kUtf8;
}

void PutJsonCodepoint(uint32_t cp, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  if (cp >= 0x20 && cp != '"' && cp != '\\') return AppendUtf8Codepoint(cp, out);
  switch (cp) {
    case '"': out->append("\\\""); return;
    case '\\': out->append("\\\\"); return;
    case '\n': out->append("\\n"); return;
    case '\r': out->append("\\r"); return;
    case '\t': out->append("\\t"); return;
    case '\b': out->append("\\b"); return;
    case '\f': out->append("\\f"); return;
    default:
      out->append("\\u00");
      out->push_back(kHex[cp >> 4]);
      out->push_back(kHex[cp & 15]);
  }
}

bool ValidScalar(uint32_t cp) { return cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF); }

// Decodes every code point of a non-UTF-8 charset and hands it to `put`.
template <typename Put>
void ForEachCodepoint(std::string_view s, Charset cs, Put put) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  switch (cs) {
    case Charset::kLatin1:
      for (; i < n; ++i) put(p[i] >= 0x80 && p[i] < 0xA0 ? kLatin1High[p[i] - 0x80] : p[i]);
      return;
    case Charset::kAscii:
      for (; i < n; ++i) put(p[i] < 0x80 ? p[i] : kReplacement);
      return;
    case Charset::kUcs2:
      for (; i + 2 <= n; i += 2) {
        uint32_t cp = (p[i] << 8) | p[i + 1];
        put(ValidScalar(cp) ? cp : kReplacement);
      }
      break;
    case Charset::kUtf16:
    case Charset::kUtf16le: {
      const bool le = cs == Charset::kUtf16le;
      auto unit = [&](size_t k) -> uint32_t {
        return le ? (p[k] | (p[k + 1] << 8)) : ((p[k] << 8) | p[k + 1]);
      };
      while (i + 2 <= n) {
        uint32_t u = unit(i);
        i += 2;
        if (u >= 0xD800 && u <= 0xDBFF && i + 2 <= n) {
          uint32_t lo = unit(i);
          if (lo >= 0xDC00 && lo <= 0xDFFF) {
            i += 2;
            put(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00));
            continue;
          }
        }
        put(u >= 0xD800 && u <= 0xDFFF ? kReplacement : u);
      }
      break;
    }
    case Charset::kUtf32:
      for (; i + 4 <= n; i += 4) {
        uint32_t cp = (static_cast<uint32_t>(p[i]) << 24) | (p[i + 1] << 16) | (p[i + 2] << 8) |
                      p[i + 3];
        put(ValidScalar(cp) ? cp : kReplacement);
      }
      break;
    case Charset::kUtf8:
    case Charset::kBinary:
    case Charset::kLegacy:
      return;  // handled by the callers
  }
  if (i < n) put(kReplacement);  // odd trailing bytes of a multi-byte unit
}

// Decodes UTF-8 (up to 4-byte sequences), one U+FFFD per invalid byte, the
// same policy as AppendJsonString.
template <typename Put>
void ForEachUtf8Codepoint(std::string_view s, Put put) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    uint8_t c = p[i];
    if (c < 0x80) {
      put(c);
      ++i;
      continue;
    }
    size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    uint32_t cp = len ? (c & (0x7F >> len)) : 0;
    bool ok = len != 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) {
      ok = (p[i + k] & 0xC0) == 0x80;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if (ok && cp >= kMin[len] && ValidScalar(cp)) {
      put(cp);
      i += len;
    } else {
      put(kReplacement);
      ++i;
    }
  }
}

}  // namespace

// UTF-8 encodes cp (<= 0x10FFFF, not a surrogate) into out.
void AppendUtf8Codepoint(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

Charset CharsetForCollation(uint32_t id) {
  // MariaDB UCA-14.0 collations (10.10+): 256 ids per charset.
  if (id >= 2048 && id < 3328) {
    switch ((id - 2048) >> 8) {
      case 2: return Charset::kUcs2;
      case 3: return Charset::kUtf16;
      case 4: return Charset::kUtf32;
      default: return Charset::kUtf8;  // utf8mb3, utf8mb4
    }
  }
  if (LegacyCharsetForCollation(id) != nullptr) return Charset::kLegacy;
  // MariaDB NO PAD collations are their PAD SPACE twin's id + 1024.
  if (id >= 1024 && id < 2048) return BaseCharset(id - 1024) == Charset::kBinary
                                          ? Charset::kUtf8
                                          : BaseCharset(id - 1024);
  return BaseCharset(id);
}

void AppendCollationUtf8(std::string_view bytes, uint32_t collation_id, std::string* out) {
  const Charset cs = CharsetForCollation(collation_id);
  if (cs != Charset::kLegacy) return AppendUtf8(bytes, cs, out);
  AppendLegacyUtf8(bytes, *LegacyCharsetForCollation(collation_id), out);
}

void AppendCollationTextJson(std::string_view bytes, uint32_t collation_id, std::string* out) {
  const Charset cs = CharsetForCollation(collation_id);
  if (cs != Charset::kLegacy) return AppendTextJson(bytes, cs, out);
  // Converted first, then escaped; the buffer is reused per thread.
  thread_local std::string utf8;
  utf8.clear();
  AppendLegacyUtf8(bytes, *LegacyCharsetForCollation(collation_id), &utf8);
  AppendJsonString(utf8, out);
}

uint32_t DefaultCollationForCharset(std::string_view name) {
  // strings/ctype-*.cc of either server: each charset's primary collation.
  static constexpr struct {
    std::string_view name;
    uint32_t id;
  } kDefaults[] = {
      {"big5", 1},     {"dec8", 3},     {"cp850", 4},     {"hp8", 6},       {"koi8r", 7},
      {"latin1", 8},   {"latin2", 9},   {"swe7", 10},     {"ascii", 11},    {"ujis", 12},
      {"sjis", 13},    {"hebrew", 16},  {"tis620", 18},   {"euckr", 19},    {"koi8u", 22},
      {"gb2312", 24},  {"greek", 25},   {"cp1250", 26},   {"gbk", 28},      {"latin5", 30},
      {"armscii8", 32}, {"utf8", 33},   {"utf8mb3", 33},  {"ucs2", 35},     {"cp866", 36},
      {"keybcs2", 37}, {"macce", 38},   {"macroman", 39}, {"cp852", 40},    {"latin7", 41},
      {"utf8mb4", 45}, {"cp1251", 51},  {"utf16", 54},    {"utf16le", 56},  {"cp1256", 57},
      {"cp1257", 59},  {"utf32", 60},   {"binary", 63},   {"geostd8", 92},  {"cp932", 95},
      {"eucjpms", 97}, {"gb18030", 248},
  };
  for (const auto& d : kDefaults) {
    if (d.name == name) return d.id;
  }
  return 0;
}

std::string_view CharsetName(Charset cs) {
  switch (cs) {
    case Charset::kUtf8: return "utf8mb4";
    case Charset::kLatin1: return "latin1";
    case Charset::kAscii: return "ascii";
    case Charset::kUcs2: return "ucs2";
    case Charset::kUtf16: return "utf16";
    case Charset::kUtf16le: return "utf16le";
    case Charset::kUtf32: return "utf32";
    case Charset::kBinary: return "binary";
    case Charset::kLegacy: return "legacy";
  }
  return "?";
}

void AppendUtf8(std::string_view bytes, Charset cs, std::string* out) {
  if (cs == Charset::kBinary) {
    out->append(bytes);
    return;
  }
  if (cs == Charset::kUtf8) {
    ForEachUtf8Codepoint(bytes, [out](uint32_t cp) { AppendUtf8Codepoint(cp, out); });
    return;
  }
  ForEachCodepoint(bytes, cs, [out](uint32_t cp) { AppendUtf8Codepoint(cp, out); });
}

void AppendTextJson(std::string_view bytes, Charset cs, std::string* out) {
  if (cs == Charset::kUtf8 || cs == Charset::kBinary) {
    AppendJsonString(bytes, out);
    return;
  }
  out->push_back('"');
  if (cs == Charset::kLatin1 || cs == Charset::kAscii) {
    // Single-byte charsets: copy runs of plain ASCII in one go and convert
    // only the other bytes (most text is mostly ASCII).
    size_t i = 0;
    while (i < bytes.size()) {
      const size_t run = i + PlainJsonPrefix(bytes.substr(i));
      out->append(bytes.data() + i, run - i);
      if (run == bytes.size()) break;
      ForEachCodepoint(bytes.substr(run, 1), cs,
                       [out](uint32_t cp) { PutJsonCodepoint(cp, out); });
      i = run + 1;
    }
  } else {
    ForEachCodepoint(bytes, cs, [out](uint32_t cp) { PutJsonCodepoint(cp, out); });
  }
  out->push_back('"');
}

}  // namespace binrelay::protocol
