// CRC-32 (IEEE 802.3 / zlib polynomial, reflected) with carry-less multiply
// folding on x86-64 CPUs that have PCLMULQDQ, and zlib's table code elsewhere
// and for the last few bytes. Every event is checked, so this runs over the
// whole stream, subscribed or not: the PCLMUL path is several times faster
// than zlib's.
//
// The folding constants are the reflected ones of the Intel white paper
// "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ" (also used by
// the Linux kernel's crc32-pclmul): x^(4*128±32) mod P for 512-bit folds,
// x^(128±32) mod P for 128-bit folds, x^64 mod P, and the Barrett pair
// (P', mu). Tests compare every length and alignment with zlib.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace binrelay::protocol {

// Same contract as zlib's crc32(crc, data, len): `crc` is a previous result
// (0 to start), the return value is the CRC of everything so far.
uint32_t Crc32Extend(uint32_t crc, std::string_view data);

// True when the PCLMUL path is in use on this CPU.
bool Crc32IsAccelerated();

}  // namespace binrelay::protocol
