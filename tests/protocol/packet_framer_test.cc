#include "protocol/packet_framer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "tests/harness/erlang_terms.h"
#include "tests/harness/fixtures.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::protocol {
namespace {

// Feeds `bytes` to the reader in pieces of `step` bytes and collects every
// payload it yields.
absl::StatusOr<std::vector<std::string>> FeedAll(PacketReader* reader, std::string_view bytes,
                                                 size_t step) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (true) {
    BR_ASSIGN_OR_RETURN(std::optional<Packet> p, reader->Next());
    if (p) {
      out.emplace_back(p->payload);
      continue;
    }
    if (pos == bytes.size()) return out;
    char* buf = nullptr;
    size_t room = reader->PrepareWrite(step, &buf);
    size_t n = std::min({room, step, bytes.size() - pos});
    std::memcpy(buf, bytes.data() + pos, n);
    reader->CommitWrite(n);
    pos += n;
  }
}

std::string Header(size_t len, uint8_t seq) {
  return std::string{static_cast<char>(len & 0xFF), static_cast<char>((len >> 8) & 0xFF),
                     static_cast<char>((len >> 16) & 0xFF), static_cast<char>(seq)};
}

// Guards the basic 4-byte header encoding and the sequence counter.
TEST(PacketFramerTest, SmallPayloadGetsOneHeaderAndAdvancesSequence) {
  std::string out;
  uint8_t seq = 7;
  AppendFramedPacket(&out, "\x0e", &seq);
  EXPECT_EQ(out, Header(1, 7) + "\x0e");
  EXPECT_EQ(seq, 8);
}

// Guards the empty payload: one header with length 0.
TEST(PacketFramerTest, EmptyPayloadIsOneEmptyPacket) {
  std::string out;
  uint8_t seq = 0;
  AppendFramedPacket(&out, "", &seq);
  EXPECT_EQ(out, Header(0, 0));
  EXPECT_EQ(seq, 1);
}

// Guards the split rule: 0xFFFFFF bytes + remainder, sequence ids consecutive.
TEST(PacketFramerTest, PayloadOverChunkSizeIsSplit) {
  std::string payload(kMaxPacketChunk + 10, 'a');
  std::string out;
  uint8_t seq = 255;  // wraps to 0 for the second chunk
  AppendFramedPacket(&out, payload, &seq);
  ASSERT_EQ(out.size(), payload.size() + 8);
  EXPECT_EQ(out.substr(0, 4), Header(kMaxPacketChunk, 255));
  EXPECT_EQ(out.substr(4 + kMaxPacketChunk, 4), Header(10, 0));
  EXPECT_EQ(seq, 1);
}

// Guards the exact-multiple rule: a trailing empty packet is required.
TEST(PacketFramerTest, ExactMultipleOfChunkSizeEndsWithEmptyPacket) {
  std::string payload(2 * kMaxPacketChunk, 'b');
  std::string out;
  uint8_t seq = 0;
  AppendFramedPacket(&out, payload, &seq);
  ASSERT_EQ(out.size(), payload.size() + 12);
  EXPECT_EQ(out.substr(out.size() - 4), Header(0, 2));
  EXPECT_EQ(seq, 3);
}

// Guards reassembly: split payloads, byte-at-a-time arrival and the empty tail.
TEST(PacketFramerTest, ReaderReassemblesSplitPayloadsFedInSmallPieces) {
  for (size_t size : {size_t{0}, size_t{1}, kMaxPacketChunk - 1, kMaxPacketChunk,
                      kMaxPacketChunk + 1, 2 * kMaxPacketChunk}) {
    std::string payload(size, '\0');
    for (size_t i = 0; i < size; ++i) payload[i] = static_cast<char>(i * 7);
    std::string wire;
    uint8_t seq = 0;
    AppendFramedPacket(&wire, payload, &seq);
    AppendFramedPacket(&wire, "next", &seq);
    PacketReader reader;
    BR_ASSERT_OK_AND_ASSIGN(auto got, FeedAll(&reader, wire, 1 << 20));
    ASSERT_EQ(got.size(), 2u) << size;
    EXPECT_TRUE(got[0] == payload) << "payload of " << size << " bytes differs";
    EXPECT_EQ(got[1], "next");
    EXPECT_EQ(reader.next_seq(), seq);
  }
}

// Guards header parsing across read boundaries (1 byte at a time).
TEST(PacketFramerTest, ReaderHandlesOneByteReads) {
  std::string wire;
  uint8_t seq = 3;
  AppendFramedPacket(&wire, "hello", &seq);
  AppendFramedPacket(&wire, "", &seq);
  AppendFramedPacket(&wire, "world", &seq);
  PacketReader reader;
  reader.set_next_seq(3);
  BR_ASSERT_OK_AND_ASSIGN(auto got, FeedAll(&reader, wire, 1));
  EXPECT_EQ(got, (std::vector<std::string>{"hello", "", "world"}));
}

// Guards golden bytes: a real MariaDB greeting frame (msmp, 11.1.2) decodes
// to its payload with sequence id 0.
TEST(PacketFramerTest, RealGreetingFrameFromFixture) {
  BINRELAY_REQUIRE_FIXTURE("msmp/handshake-request.terms");
  auto packets = testing::WirePacketsFromTerms("msmp/handshake-request.terms");
  ASSERT_EQ(packets.size(), 6u);
  const std::string& frame = packets[3];
  PacketReader reader;
  BR_ASSERT_OK_AND_ASSIGN(auto got, FeedAll(&reader, frame, 5));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].size(), 0x6Du);
  EXPECT_EQ(got[0][0], '\x0a');
  EXPECT_EQ(reader.next_seq(), 1);
}

// Guards the sequence check: a lost packet must not go unnoticed.
TEST(PacketFramerTest, OutOfOrderSequenceIsDataLoss) {
  std::string wire = Header(1, 5) + "x";
  PacketReader reader;
  auto got = FeedAll(&reader, wire, 64);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(got.status().message().find("sequence id 5"), std::string::npos) << got.status();

  PacketReader lenient;
  lenient.set_check_sequence(false);
  BR_ASSERT_OK_AND_ASSIGN(auto ok, FeedAll(&lenient, wire, 64));
  EXPECT_EQ(ok, std::vector<std::string>{"x"});
}

// Guards a wrong sequence id inside a split payload.
TEST(PacketFramerTest, OutOfOrderSequenceInsideSplitPayloadIsDataLoss) {
  std::string wire = Header(kMaxPacketChunk, 0) + std::string(kMaxPacketChunk, 'c') +
                     Header(0, 9);
  PacketReader reader;
  auto got = FeedAll(&reader, wire, 1 << 20);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
}

// Guards the hostile-length case: a length above the limit is refused
// before any buffering of the payload.
TEST(PacketFramerTest, LengthOverLimitIsRefused) {
  PacketReader reader(/*max_payload=*/100);
  BR_ASSERT_OK_AND_ASSIGN(auto none, FeedAll(&reader, Header(100, 0), 64));
  EXPECT_TRUE(none.empty());  // 100 is allowed; waits for the bytes
  PacketReader strict(100);
  auto got = FeedAll(&strict, Header(101, 0), 64);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kResourceExhausted);

  // A split payload whose chunks add up past the limit.
  PacketReader split(kMaxPacketChunk + 5);
  std::string wire = Header(kMaxPacketChunk, 0) + std::string(kMaxPacketChunk, 'd') +
                     Header(6, 1);
  auto got2 = FeedAll(&split, wire, 1 << 20);
  ASSERT_FALSE(got2.ok());
  EXPECT_EQ(got2.status().code(), absl::StatusCode::kResourceExhausted);
}

// Guards truncation: a header promising more bytes than arrive yields nothing.
TEST(PacketFramerTest, TruncatedPacketWaitsForMoreBytes) {
  PacketReader reader;
  BR_ASSERT_OK_AND_ASSIGN(auto got, FeedAll(&reader, Header(10, 0) + "abc", 64));
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(reader.buffered(), 7u);
  BR_ASSERT_OK_AND_ASSIGN(auto rest, FeedAll(&reader, "defghij", 64));
  EXPECT_EQ(rest, std::vector<std::string>{"abcdefghij"});
}

}  // namespace
}  // namespace binrelay::protocol
