#include "protocol/crc32_fast.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <string>

namespace binrelay::protocol {
namespace {

uint32_t Zlib(uint32_t crc, std::string_view s) {
  return static_cast<uint32_t>(
      crc32(crc, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
}

// The folding constants are easy to get subtly wrong: compare with zlib for
// every length up to 1 KiB, several alignments and running CRC values.
TEST(Crc32FastTest, MatchesZlibForEveryLengthAndAlignment) {
  std::mt19937 rng(12345);
  std::string buf(1200, '\0');
  for (char& c : buf) c = static_cast<char>(rng());
  for (size_t offset = 0; offset < 16; offset += 5) {
    for (size_t len = 0; len + offset <= 1100; ++len) {
      std::string_view s(buf.data() + offset, len);
      ASSERT_EQ(Crc32Extend(0, s), Zlib(0, s)) << "len " << len << " offset " << offset;
      ASSERT_EQ(Crc32Extend(0xDEADBEEF, s), Zlib(0xDEADBEEF, s)) << "len " << len;
    }
  }
}

TEST(Crc32FastTest, ChunkedEqualsWholeOnLargeBuffers) {
  std::mt19937 rng(7);
  std::string buf(3 << 20, '\0');
  for (char& c : buf) c = static_cast<char>(rng());
  uint32_t whole = Crc32Extend(0, buf);
  EXPECT_EQ(whole, Zlib(0, buf));
  uint32_t chunked = 0;
  for (size_t i = 0; i < buf.size(); i += 100003) {
    chunked = Crc32Extend(chunked, std::string_view(buf).substr(i, 100003));
  }
  EXPECT_EQ(chunked, whole);
}

TEST(Crc32FastTest, KnownVector) {
  EXPECT_EQ(Crc32Extend(0, "123456789"), 0xCBF43926u);
  std::string zeros(4096, '\0');
  EXPECT_EQ(Crc32Extend(0, zeros), Zlib(0, zeros));
  // Report which path ran, for the record; both must be correct.
  std::cout << "PCLMUL CRC32: " << (Crc32IsAccelerated() ? "yes" : "no") << "\n";
}

}  // namespace
}  // namespace binrelay::protocol
