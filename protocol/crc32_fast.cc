#include "protocol/crc32_fast.h"

#include <zlib.h>

#include <algorithm>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace binrelay::protocol {
namespace {

// Byte-at-a-time table for the few bytes the folding leaves over: cheaper
// than a zlib call for inputs this short.
struct ByteTable {
  uint32_t v[256];
  constexpr ByteTable() : v() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
      v[i] = c;
    }
  }
};
constexpr ByteTable kTable;

uint32_t ShortExtend(uint32_t crc, const uint8_t* p, size_t n) {
  uint32_t c = ~crc;
  for (size_t i = 0; i < n; ++i) c = kTable.v[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return ~c;
}

uint32_t ZlibExtend(uint32_t crc, const uint8_t* p, size_t n) {
  while (n > 0) {
    const size_t chunk = std::min<size_t>(n, 1u << 30);  // zlib's uInt length
    crc = static_cast<uint32_t>(crc32(crc, p, static_cast<uInt>(chunk)));
    p += chunk;
    n -= chunk;
  }
  return crc;
}

#if defined(__x86_64__)

bool DetectPclmul() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  return (c & bit_PCLMUL) && (c & bit_SSE4_1);
}

#define BR_PCLMUL_TARGET __attribute__((target("pclmul,sse4.1")))

BR_PCLMUL_TARGET inline __m128i Load(const uint8_t* q) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
}

// x * k (both 64-bit halves, each with its own constant) xor next.
BR_PCLMUL_TARGET inline __m128i Fold(__m128i x, __m128i k, __m128i next) {
  __m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
  __m128i hi = _mm_clmulepi64_si128(x, k, 0x11);
  return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

// Folds `n` bytes (n >= 16, a multiple of 16) into the raw (not inverted)
// CRC state and returns the new raw state.
BR_PCLMUL_TARGET uint32_t FoldPclmul(uint32_t state, const uint8_t* p, size_t n) {
  const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
  const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
  const __m128i k5 = _mm_set_epi64x(0, 0x0163cd6124);
  const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
  const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);

  __m128i x1 = _mm_xor_si128(Load(p), _mm_cvtsi32_si128(static_cast<int>(state)));
  p += 16;
  n -= 16;
  if (n >= 48) {  // four lanes, 64 bytes per step
    __m128i x2 = Load(p);
    __m128i x3 = Load(p + 16);
    __m128i x4 = Load(p + 32);
    p += 48;
    n -= 48;
    while (n >= 64) {
      x1 = Fold(x1, k1k2, Load(p));
      x2 = Fold(x2, k1k2, Load(p + 16));
      x3 = Fold(x3, k1k2, Load(p + 32));
      x4 = Fold(x4, k1k2, Load(p + 48));
      p += 64;
      n -= 64;
    }
    x1 = Fold(x1, k3k4, x2);
    x1 = Fold(x1, k3k4, x3);
    x1 = Fold(x1, k3k4, x4);
  }
  while (n >= 16) {
    x1 = Fold(x1, k3k4, Load(p));
    p += 16;
    n -= 16;
  }
  // 128 -> 64 bits (appending 32 zero bits), then 64 -> 32 with Barrett.
  __m128i t = _mm_clmulepi64_si128(k3k4, x1, 0x01);
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), t);
  __m128i x2b = _mm_srli_si128(x1, 4);
  x1 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5, 0x00);
  x1 = _mm_xor_si128(x1, x2b);
  __m128i saved = x1;
  x1 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly, 0x10);
  x1 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly, 0x00);
  x1 = _mm_xor_si128(x1, saved);
  return static_cast<uint32_t>(_mm_extract_epi32(x1, 1));
}

const bool kHavePclmul = DetectPclmul();

#else
const bool kHavePclmul = false;
#endif

}  // namespace

bool Crc32IsAccelerated() { return kHavePclmul; }

uint32_t Crc32Extend(uint32_t crc, std::string_view data) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  size_t n = data.size();
#if defined(__x86_64__)
  if (kHavePclmul) {
    if (n >= 16) {
      const size_t bulk = n & ~size_t{15};
      crc = ~FoldPclmul(~crc, p, bulk);
      p += bulk;
      n -= bulk;
    }
    return ShortExtend(crc, p, n);
  }
#endif
  return n < 16 ? ShortExtend(crc, p, n) : ZlibExtend(crc, p, n);
}

}  // namespace binrelay::protocol
