#include "protocol/legacy_charset.h"

#include <iconv.h>

#include <array>
#include <cerrno>

#include "protocol/charset.h"

namespace binrelay::protocol {

struct LegacyCharset {
  std::string_view name;  // the charset's, or a collation's with a table of its own
  const uint16_t* table = nullptr;  // single-byte: 256 code points
  const char* iconv_name = nullptr;  // multi-byte: glibc's name
  int index = 0;                      // into the per-thread iconv handles
};

namespace {

struct SingleByteTable {
  std::string_view name;
  uint16_t cps[256];
};

constexpr SingleByteTable kTables[] = {
#include "protocol/legacy_charset_tables.inc"
};

struct MultiByte {
  std::string_view name;
  const char* iconv_name;
};
constexpr MultiByte kMultiByte[] = {
    {"big5", "BIG5"},   {"cp932", "CP932"}, {"eucjpms", "EUC-JP-MS"}, {"euckr", "EUC-KR"},
    {"gb18030", "GB18030"}, {"gb2312", "EUC-CN"}, {"gbk", "GBK"}, {"sjis", "SJIS"},
    {"ujis", "EUC-JP"},
};
constexpr size_t kMultiByteCount = sizeof(kMultiByte) / sizeof(kMultiByte[0]);

// Collation ids of the legacy charsets, the same on MySQL and MariaDB
// (information_schema.COLLATIONS of MySQL 9.7, MariaDB 10.5 and 11.8), by
// the name of their table: the charset's, or the collation's own where it
// converts differently (latin2_czech_cs).
struct IdRange {
  uint16_t id;
  std::string_view charset;
};
constexpr IdRange kIds[] = {
    {1, "big5"},     {84, "big5"},     {2, "latin2_czech_cs"}, {9, "latin2"}, {21, "latin2"},
    {27, "latin2"},  {77, "latin2"},   {3, "dec8"},     {69, "dec8"},     {4, "cp850"},
    {80, "cp850"},   {6, "hp8"},       {72, "hp8"},     {7, "koi8r"},     {74, "koi8r"},
    {10, "swe7"},    {82, "swe7"},     {12, "ujis"},    {91, "ujis"},     {13, "sjis"},
    {88, "sjis"},    {14, "cp1251"},   {23, "cp1251"},  {50, "cp1251"},   {51, "cp1251"},
    {52, "cp1251"},  {16, "hebrew"},   {71, "hebrew"},  {18, "tis620"},   {89, "tis620"},
    {19, "euckr"},   {85, "euckr"},    {20, "latin7"},  {41, "latin7"},   {42, "latin7"},
    {79, "latin7"},  {22, "koi8u"},    {75, "koi8u"},   {24, "gb2312"},   {86, "gb2312"},
    {25, "greek"},   {70, "greek"},    {26, "cp1250"},  {34, "cp1250"},   {44, "cp1250"},
    {66, "cp1250"},  {99, "cp1250"},   {28, "gbk"},     {87, "gbk"},      {29, "cp1257"},
    {58, "cp1257"},  {59, "cp1257"},   {30, "latin5"},  {78, "latin5"},   {32, "armscii8"},
    {64, "armscii8"}, {36, "cp866"},   {68, "cp866"},   {37, "keybcs2"},  {73, "keybcs2"},
    {38, "macce"},   {43, "macce"},    {39, "macroman"}, {53, "macroman"}, {40, "cp852"},
    {81, "cp852"},   {57, "cp1256"},   {67, "cp1256"},  {92, "geostd8"},  {93, "geostd8"},
    {95, "cp932"},   {96, "cp932"},    {97, "eucjpms"}, {98, "eucjpms"},  {248, "gb18030"},
    {249, "gb18030"}, {250, "gb18030"},
};

// Every legacy charset, built once: tables first, then the iconv ones.
struct Registry {
  std::array<LegacyCharset, sizeof(kTables) / sizeof(kTables[0]) + kMultiByteCount> all;
  std::array<const LegacyCharset*, 256> by_id{};  // ids below 256
  Registry() {
    size_t n = 0;
    for (const SingleByteTable& t : kTables) all[n++] = {t.name, t.cps, nullptr, 0};
    for (size_t i = 0; i < kMultiByteCount; ++i) {
      all[n++] = {kMultiByte[i].name, nullptr, kMultiByte[i].iconv_name, static_cast<int>(i)};
    }
    for (const IdRange& r : kIds) {
      for (const LegacyCharset& cs : all) {
        if (cs.name == r.charset) by_id[r.id] = &cs;
      }
    }
  }
};

const Registry& Charsets() {
  static const Registry* r = new Registry();
  return *r;
}

// One iconv handle per multi-byte charset and thread (a handle keeps state
// and may not be shared), opened on first use and closed with the thread.
struct ThreadIconv {
  std::array<iconv_t, kMultiByteCount> handles;
  ThreadIconv() { handles.fill(reinterpret_cast<iconv_t>(-1)); }
  ~ThreadIconv() {
    for (iconv_t h : handles) {
      if (h != reinterpret_cast<iconv_t>(-1)) iconv_close(h);
    }
  }
  iconv_t For(const LegacyCharset& cs) {
    iconv_t& h = handles[cs.index];
    if (h == reinterpret_cast<iconv_t>(-1)) h = iconv_open("UTF-8", cs.iconv_name);
    return h;
  }
};

void AppendIconv(std::string_view bytes, const LegacyCharset& cs, std::string* out) {
  thread_local ThreadIconv iconvs;
  iconv_t h = iconvs.For(cs);
  if (h == reinterpret_cast<iconv_t>(-1)) {
    // glibc without the converter (gconv modules missing): the bytes are
    // still text, but undecodable here.
    for (unsigned char c : bytes) AppendUtf8Codepoint(c < 0x80 ? c : 0xFFFD, out);
    return;
  }
  iconv(h, nullptr, nullptr, nullptr, nullptr);  // initial shift state
  char* in = const_cast<char*>(bytes.data());
  size_t in_left = bytes.size();
  char buf[1024];
  while (in_left > 0) {
    char* o = buf;
    size_t o_left = sizeof buf;
    const size_t r = iconv(h, &in, &in_left, &o, &o_left);
    out->append(buf, static_cast<size_t>(o - buf));
    if (r != static_cast<size_t>(-1)) continue;
    if (errno == E2BIG) continue;  // buffer full: flushed, go on
    // EILSEQ (an invalid sequence) or EINVAL (cut short at the end): one
    // replacement character per undecodable byte, then on.
    AppendUtf8Codepoint(0xFFFD, out);
    ++in;
    --in_left;
    iconv(h, nullptr, nullptr, nullptr, nullptr);
  }
}

}  // namespace

const LegacyCharset* LegacyCharsetForCollation(uint32_t id) {
  if (id >= 1024 && id < 2048) id -= 1024;  // MariaDB's NO PAD twins
  return id < 256 ? Charsets().by_id[id] : nullptr;
}

std::string_view LegacyCharsetName(const LegacyCharset& cs) { return cs.name; }

void AppendLegacyUtf8(std::string_view bytes, const LegacyCharset& cs, std::string* out) {
  if (cs.table == nullptr) return AppendIconv(bytes, cs, out);
  for (unsigned char c : bytes) AppendUtf8Codepoint(cs.table[c], out);
}

}  // namespace binrelay::protocol
