// Server-side packet builders and the HandshakeResponse41 parser
// (protocol/server_packets.h), against msmp captures from MySQL 8.0.33/8.0.34.
#include "protocol/server_packets.h"

#include <gtest/gtest.h>

#include "protocol/handshake.h"
#include "protocol/packet_framer.h"
#include "protocol/response_packets.h"
#include "protocol/server_error.h"
#include "protocol/text_resultset.h"
#include "tests/harness/erlang_terms.h"
#include "tests/harness/fixtures.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::protocol {
namespace {

std::string Payload(const std::string& frame) { return frame.substr(4); }

// Rebuilding a real MySQL 8.0.34 greeting from its parsed fields must give
// the captured bytes: guards every offset and the nonce split of the builder.
TEST(ServerPacketsTest, GreetingRebuildsCapturedMySqlGreetingByteForByte) {
  BINRELAY_REQUIRE_FIXTURE("msmp/handshake-request.terms");
  auto frames = testing::WirePacketsFromTerms("msmp/handshake-request.terms");
  ASSERT_EQ(frames.size(), 6u);
  int rebuilt = 0;
  for (const auto& frame : frames) {
    BR_ASSERT_OK_AND_ASSIGN(InitialHandshake h, ParseInitialHandshake(Payload(frame)));
    // MariaDB's extended capabilities live in the reserved bytes; the builder
    // always sends CLIENT_MYSQL and zeros there, so only MySQL greetings match.
    if (!(h.capabilities & cap::kLongPassword) || h.nonce.size() != 20) continue;
    ServerGreeting g;
    g.server_version = h.server_version;
    g.connection_id = h.connection_id;
    g.nonce = h.nonce;
    g.capabilities = static_cast<uint32_t>(h.capabilities);
    g.collation = h.collation;
    g.status_flags = h.status_flags;
    g.auth_plugin = h.auth_plugin;
    BR_ASSERT_OK_AND_ASSIGN(std::string built, BuildInitialHandshake(g));
    EXPECT_EQ(built, Payload(frame)) << h.server_version;
    ++rebuilt;
  }
  EXPECT_GE(rebuilt, 3);
}

// A NUL inside the nonce would cut part 2 short for the client.
TEST(ServerPacketsTest, GreetingRefusesNonceWithNulOrWrongSize) {
  ServerGreeting g;
  g.nonce = std::string(19, 'a');
  EXPECT_TRUE(absl::IsInvalidArgument(BuildInitialHandshake(g).status()));
  g.nonce = std::string(20, 'a');
  g.nonce[5] = '\0';
  EXPECT_TRUE(absl::IsInvalidArgument(BuildInitialHandshake(g).status()));
}

// Guards the MariaDB-flavoured greeting as binrelay's own client reads it.
TEST(ServerPacketsTest, MariaDbStyleGreetingParsesBack) {
  ServerGreeting g;
  g.server_version = "5.5.5-10.11.0-binrelay";
  g.connection_id = 77;
  g.nonce = "abcdefghijklmnopqrst";
  g.auth_plugin = "mysql_native_password";
  BR_ASSERT_OK_AND_ASSIGN(std::string built, BuildInitialHandshake(g));
  BR_ASSERT_OK_AND_ASSIGN(InitialHandshake h, ParseInitialHandshake(built));
  EXPECT_EQ(h.server_version, "5.5.5-10.11.0-binrelay");
  EXPECT_EQ(h.connection_id, 77u);
  EXPECT_EQ(h.nonce, g.nonce);
  EXPECT_EQ(h.capabilities, kServerDefaultCaps);
  EXPECT_EQ(h.collation, 33);
  EXPECT_EQ(h.status_flags, server_status::kAutocommit);
  EXPECT_EQ(h.auth_plugin, "mysql_native_password");
}

// Captured libmysql 8.0.34 response with caching_sha2 and connect attributes
// (msmp term 1: user root, 32-byte token 0x45 0x8D ... 0xE1, max packet 16 MiB).
TEST(ServerPacketsTest, ParsesCapturedCachingSha2Response) {
  BINRELAY_REQUIRE_FIXTURE("msmp/handshake-response.terms");
  auto frames = testing::WirePacketsFromTerms("msmp/handshake-response.terms");
  ASSERT_EQ(frames.size(), 4u);
  std::string payload = Payload(frames[0]);
  BR_ASSERT_OK_AND_ASSIGN(ClientHandshake h, ParseClientHandshake(payload, kServerDefaultCaps));
  EXPECT_FALSE(h.ssl_request);
  EXPECT_EQ(h.user, "root");
  EXPECT_EQ(h.max_packet, 16777216u);
  EXPECT_EQ(h.collation, 8);
  ASSERT_EQ(h.auth_response.size(), 32u);
  EXPECT_EQ(static_cast<uint8_t>(h.auth_response[0]), 69);
  EXPECT_EQ(static_cast<uint8_t>(h.auth_response[31]), 225);
  EXPECT_EQ(h.auth_plugin, "caching_sha2_password");
  EXPECT_EQ(h.database, "");
}

// Captured response without PLUGIN_AUTH_LENENC_CLIENT_DATA but with
// CONNECT_WITH_DB (msmp term 2: user pam, 20-byte token 0xAB 0x09 ..., db
// "test"): guards the 1-byte-length token branch and the schema field.
TEST(ServerPacketsTest, ParsesCapturedNativeResponseWithDatabase) {
  BINRELAY_REQUIRE_FIXTURE("msmp/handshake-response.terms");
  auto frames = testing::WirePacketsFromTerms("msmp/handshake-response.terms");
  ASSERT_EQ(frames.size(), 4u);
  const std::string payload = Payload(frames[1]);  // h views into it
  BR_ASSERT_OK_AND_ASSIGN(ClientHandshake h, ParseClientHandshake(payload, kServerDefaultCaps));
  EXPECT_EQ(h.user, "pam");
  ASSERT_EQ(h.auth_response.size(), 20u);
  EXPECT_EQ(static_cast<uint8_t>(h.auth_response[0]), 0xAB);
  EXPECT_EQ(static_cast<uint8_t>(h.auth_response[1]), 0x09);
  EXPECT_EQ(h.database, "test");
  EXPECT_EQ(h.auth_plugin, "mysql_native_password");
}

// Third captured response: max packet 1073746021, collation 255, native token
// starting 80,186 (msmp term 3).
TEST(ServerPacketsTest, ParsesCapturedNativeResponseWithAttributes) {
  BINRELAY_REQUIRE_FIXTURE("msmp/handshake-response.terms");
  auto frames = testing::WirePacketsFromTerms("msmp/handshake-response.terms");
  ASSERT_EQ(frames.size(), 4u);
  const std::string payload = Payload(frames[2]);  // h views into it
  BR_ASSERT_OK_AND_ASSIGN(ClientHandshake h, ParseClientHandshake(payload, kServerDefaultCaps));
  EXPECT_EQ(h.user, "root");
  EXPECT_EQ(h.max_packet, 1073746021u);
  EXPECT_EQ(h.collation, 255);
  ASSERT_EQ(h.auth_response.size(), 20u);
  EXPECT_EQ(static_cast<uint8_t>(h.auth_response[0]), 80);
  EXPECT_EQ(static_cast<uint8_t>(h.auth_response[1]), 186);
  EXPECT_EQ(h.auth_plugin, "mysql_native_password");
}

// Every truncation of a real response is an error, never a crash or an
// over-read (the token length prefix and the user NUL are the hostile fields).
TEST(ServerPacketsTest, EveryTruncatedResponseIsRefused) {
  BINRELAY_REQUIRE_FIXTURE("msmp/handshake-response.terms");
  auto frames = testing::WirePacketsFromTerms("msmp/handshake-response.terms");
  ASSERT_FALSE(frames.empty());
  std::string payload = Payload(frames[0]);
  // The user NUL ends at 32 + 5; the 32-byte token after its 1-byte length.
  const size_t token_end = 32 + 5 + 1 + 32;
  for (size_t n = 0; n < token_end; ++n) {
    auto h = ParseClientHandshake(payload.substr(0, n), kServerDefaultCaps);
    EXPECT_FALSE(h.ok()) << "prefix of " << n << " bytes";
  }
}

// A token length prefix larger than the packet must not read past the end.
TEST(ServerPacketsTest, TokenLengthBeyondPacketIsOutOfRange) {
  HandshakeResponse r;
  r.capabilities = cap::kClientDefault;
  r.user = "u";
  r.auth_response = std::string(20, 'x');
  BR_ASSERT_OK_AND_ASSIGN(std::string payload, BuildHandshakeResponse(r));
  size_t len_at = 32 + 2;  // after "u\0"
  payload[len_at] = static_cast<char>(0xFC);  // lenenc: 2-byte length follows
  payload[len_at + 1] = static_cast<char>(0xFF);
  payload[len_at + 2] = static_cast<char>(0xFF);
  EXPECT_TRUE(absl::IsOutOfRange(ParseClientHandshake(payload, kServerDefaultCaps).status()));
}

// A 4.0-style client (no PROTOCOL_41) is refused, not misparsed.
TEST(ServerPacketsTest, ClientWithoutProtocol41IsFailedPrecondition) {
  std::string payload(40, '\0');
  payload[0] = 0x01;  // LONG_PASSWORD only
  EXPECT_TRUE(
      absl::IsFailedPrecondition(ParseClientHandshake(payload, kServerDefaultCaps).status()));
}

// The SSLRequest is recognised only when the server offered TLS.
TEST(ServerPacketsTest, SslRequestNeedsServerSsl) {
  std::string req = BuildSslRequest(cap::kClientDefault | cap::kSsl);
  BR_ASSERT_OK_AND_ASSIGN(ClientHandshake h,
                          ParseClientHandshake(req, kServerDefaultCaps | cap::kSsl));
  EXPECT_TRUE(h.ssl_request);
  EXPECT_FALSE(ParseClientHandshake(req, kServerDefaultCaps).ok());
}

// Golden: MySQL 8.0's AuthSwitchRequest to mysql_native_password (msmp).
TEST(ServerPacketsTest, AuthSwitchRequestMatchesCapture) {
  BINRELAY_REQUIRE_FIXTURE("msmp/auth-switch-request.terms");
  auto frames = testing::WirePacketsFromTerms("msmp/auth-switch-request.terms");
  ASSERT_EQ(frames.size(), 1u);
  std::string nonce = Payload(frames[0]).substr(1 + 22, 20);
  EXPECT_EQ(BuildAuthSwitchRequest("mysql_native_password", nonce), Payload(frames[0]));
}

// Golden: caching_sha2 fast_auth_success 01 03 / full auth 01 04 (msmp).
TEST(ServerPacketsTest, AuthMoreDataMatchesCapture) {
  BINRELAY_REQUIRE_FIXTURE("msmp/auth-more-data.terms");
  auto frames = testing::WirePacketsFromTerms("msmp/auth-more-data.terms");
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(BuildAuthMoreData("\x03"), Payload(frames[0]));
  EXPECT_EQ(BuildAuthMoreData("\x04"), Payload(frames[1]));
}

// OK / ERR / EOF must classify and parse as binrelay's client reads them.
TEST(ServerPacketsTest, OkErrEofRoundTrip) {
  std::string ok = BuildOkPacket(300, 7, 0x0002, 1);
  EXPECT_EQ(ClassifyResponse(ok), ResponseKind::kOk);
  BR_ASSERT_OK_AND_ASSIGN(OkPacket p, ParseOkPacket(ok));
  EXPECT_EQ(p.affected_rows, 300u);  // 0xFC lenenc form
  EXPECT_EQ(p.last_insert_id, 7u);
  EXPECT_EQ(p.warnings, 1);
  EXPECT_EQ(std::string(BuildOkPacket()), std::string("\x00\x00\x00\x02\x00\x00\x00", 7));

  std::string err = BuildErrPacket(1045, "28000", "Access denied");
  EXPECT_EQ(ClassifyResponse(err), ResponseKind::kErr);
  BR_ASSERT_OK_AND_ASSIGN(ServerError e, ParseErrPacket(err));
  EXPECT_EQ(e.code, 1045);
  EXPECT_EQ(e.sql_state, "28000");
  EXPECT_EQ(e.message, "Access denied");
  // A bad SQLSTATE is replaced, keeping the packet well-formed.
  BR_ASSERT_OK_AND_ASSIGN(ServerError e2, ParseErrPacket(BuildErrPacket(1, "x", "m")));
  EXPECT_EQ(e2.sql_state, "HY000");

  std::string eof = BuildEofPacket(0, 2);
  EXPECT_EQ(eof, std::string("\xfe\x00\x00\x02\x00", 5));
  EXPECT_EQ(ClassifyResponse(eof), ResponseKind::kEof);
}

// Column definitions and rows must parse back, including NULL and a value
// long enough for a 3-byte lenenc prefix.
TEST(ServerPacketsTest, ColumnDefinitionAndRowsRoundTrip) {
  const std::string def = BuildColumnDefinition("@@GLOBAL.SERVER_ID");  // c views into it
  BR_ASSERT_OK_AND_ASSIGN(ColumnDefinition c, ParseColumnDefinition(def));
  EXPECT_EQ(c.name, "@@GLOBAL.SERVER_ID");
  EXPECT_EQ(c.org_name, "@@GLOBAL.SERVER_ID");
  EXPECT_EQ(c.type, 0xFD);
  EXPECT_EQ(c.collation, 33);
  EXPECT_EQ(c.decimals, 0x1F);

  TextRow row = {std::string("1"), std::nullopt, std::string(70000, 'v'), std::string()};
  std::vector<std::optional<std::string>> parsed;
  BR_ASSERT_OK(ParseTextRow(BuildTextRow(row), 4, &parsed));
  EXPECT_EQ(parsed, row);
}

// A result set is count, defs, EOF, rows, EOF with consecutive sequence ids.
TEST(ServerPacketsTest, TextResultSetFramesWithConsecutiveSequenceIds) {
  std::string out;
  uint8_t seq = 1;
  AppendTextResultSet(&out, &seq, {"a", "b"}, {{std::string("1"), std::string("2")}});
  EXPECT_EQ(seq, 7);  // 1 count + 2 defs + EOF + 1 row + EOF
  PacketReader reader;
  reader.set_next_seq(1);
  char* dst = nullptr;
  reader.PrepareWrite(out.size(), &dst);
  std::copy(out.begin(), out.end(), dst);
  reader.CommitWrite(out.size());
  std::vector<std::string> payloads;
  while (true) {
    BR_ASSERT_OK_AND_ASSIGN(auto p, reader.Next());
    if (!p) break;
    payloads.emplace_back(p->payload);
  }
  ASSERT_EQ(payloads.size(), 6u);
  EXPECT_EQ(payloads[0], "\x02");
  EXPECT_EQ(ClassifyResponse(payloads[3]), ResponseKind::kEof);
  EXPECT_EQ(payloads[4], "\x01" "1" "\x01" "2");
  EXPECT_EQ(ClassifyResponse(payloads[5]), ResponseKind::kEof);
}

}  // namespace
}  // namespace binrelay::protocol
