#include "protocol/handshake.h"

#include <gtest/gtest.h>

#include "protocol/auth.h"
#include "tests/harness/erlang_terms.h"
#include "tests/harness/fixtures.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::protocol {
namespace {

std::string Payload(const std::string& frame) { return frame.substr(4); }

class HandshakeFixtureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BINRELAY_REQUIRE_FIXTURE("msmp/handshake-request.terms", "msmp/handshake-response.terms");
    greetings_ = testing::WirePacketsFromTerms("msmp/handshake-request.terms");
    responses_ = testing::WirePacketsFromTerms("msmp/handshake-response.terms");
    ASSERT_EQ(greetings_.size(), 6u);
    ASSERT_EQ(responses_.size(), 4u);
  }
  std::vector<std::string> greetings_, responses_;
};

// Guards every field offset of a MySQL 8.0.34 greeting (msmp term 1; values
// from its decoded map: thread 13, charset 255, status 2, caps 0xDFFFFFFF).
TEST_F(HandshakeFixtureTest, ParsesMySql8Greeting) {
  BR_ASSERT_OK_AND_ASSIGN(InitialHandshake h, ParseInitialHandshake(Payload(greetings_[0])));
  EXPECT_EQ(h.protocol_version, 10);
  EXPECT_EQ(h.server_version, "8.0.34");
  EXPECT_EQ(h.connection_id, 13u);
  EXPECT_EQ(h.collation, 255);
  EXPECT_EQ(h.status_flags, 2);
  EXPECT_EQ(h.capabilities, 0xDFFFFFFFull);
  EXPECT_EQ(h.nonce, std::string("\x19\x08\x47\x7b\x6b\x63\x21\x6c"
                                 "\x5a\x3e\x25\x69\x60\x16\x63\x65\x3f\x4e\x45\x5b"));
  EXPECT_EQ(h.auth_plugin, "caching_sha2_password");
  EXPECT_FALSE(h.is_mariadb);
  EXPECT_EQ(h.DisplayVersion(), "8.0.34");
}

// Guards MariaDB's extended capabilities (bit 0 cleared, 4 bytes in the
// reserved area: 29) and the 11.x version without the 5.5.5- prefix.
TEST_F(HandshakeFixtureTest, ParsesMariaDbGreetingWithExtendedCapabilities) {
  BR_ASSERT_OK_AND_ASSIGN(InitialHandshake h, ParseInitialHandshake(Payload(greetings_[3])));
  EXPECT_EQ(h.server_version, "11.1.2-MariaDB-1:11.1.2+maria~ubu2204-log");
  EXPECT_EQ(h.connection_id, 3u);
  EXPECT_EQ(h.collation, 45);
  EXPECT_EQ(h.capabilities, (uint64_t{29} << 32) | 0x81FFF7FEull);
  EXPECT_EQ(h.capabilities & cap::kLongPassword, 0u);
  EXPECT_EQ(h.nonce, std::string("h')9!89Q") + "mP(t5GEdJ&{[");
  EXPECT_EQ(h.auth_plugin, "mysql_native_password");
  EXPECT_TRUE(h.is_mariadb);
}

// Guards the 5.5.5- prefix strip for MariaDB 10.x greetings (synthetic: the
// fixture's 11.1 greeting with a 10.11-style version).
TEST_F(HandshakeFixtureTest, MariaDb10VersionPrefixIsStripped) {
  std::string p = Payload(greetings_[4]);
  const std::string old_version = "11.1.2-MariaDB-1:11.1.2+maria~ubu2204";
  ASSERT_EQ(p.compare(1, old_version.size(), old_version), 0);
  p.replace(1, old_version.size(), "5.5.5-10.11.6-MariaDB-log");
  BR_ASSERT_OK_AND_ASSIGN(InitialHandshake h, ParseInitialHandshake(p));
  EXPECT_EQ(h.server_version, "5.5.5-10.11.6-MariaDB-log");
  EXPECT_EQ(h.DisplayVersion(), "10.11.6-MariaDB-log");
}

// Guards truncation at every offset: never a crash, always OutOfRange (or a
// parse that stops before the optional plugin name).
TEST_F(HandshakeFixtureTest, EveryTruncationIsOutOfRange) {
  const std::string p = Payload(greetings_[0]);
  const size_t plugin_start = p.size() - std::string("caching_sha2_password").size() - 1;
  for (size_t n = 0; n < plugin_start; ++n) {
    auto h = ParseInitialHandshake(std::string_view(p).substr(0, n));
    ASSERT_FALSE(h.ok()) << "prefix of " << n << " bytes parsed";
    EXPECT_EQ(h.status().code(), absl::StatusCode::kOutOfRange) << n << ": " << h.status();
  }
}

// Guards protocol version 9 / an unexpected first byte.
TEST_F(HandshakeFixtureTest, OtherProtocolVersionIsFailedPrecondition) {
  std::string p = Payload(greetings_[0]);
  p[0] = 9;
  EXPECT_EQ(ParseInitialHandshake(p).status().code(), absl::StatusCode::kFailedPrecondition);
}

// Guards HandshakeResponse41 layout byte for byte against libmysql 8.0.34
// (msmp response 1: caching_sha2 scramble of "secret", connect attributes).
TEST_F(HandshakeFixtureTest, BuildsMySqlResponseIdenticalToLibmysql) {
  BR_ASSERT_OK_AND_ASSIGN(InitialHandshake h, ParseInitialHandshake(Payload(greetings_[0])));
  HandshakeResponse r;
  r.capabilities = 0x19FFA685;
  r.max_packet = 16777216;
  r.collation = 8;
  r.user = "root";
  r.auth_response = CachingSha2Scramble("secret", h.nonce);
  r.auth_plugin = "caching_sha2_password";
  r.attributes = {{"_pid", "276"},         {"_platform", "aarch64"},
                  {"_os", "Linux"},        {"_client_name", "libmysql"},
                  {"os_user", "root"},     {"_client_version", "8.0.34"},
                  {"program_name", "mysql"}};
  BR_ASSERT_OK_AND_ASSIGN(std::string built, BuildHandshakeResponse(r));
  EXPECT_EQ(built, Payload(responses_[0]));
}

// Guards the 1-byte auth length (no LENENC_CLIENT_DATA) and CONNECT_WITH_DB
// against libmysql (msmp response 2; its password is unknown, so the
// captured auth bytes are reused and only the layout is checked).
TEST_F(HandshakeFixtureTest, BuildsResponseWithDatabaseAndShortAuthLength) {
  const std::string expected = Payload(responses_[1]);
  HandshakeResponse r;
  r.capabilities = 0x000FA68D;
  r.max_packet = 16777216;
  r.collation = 8;
  r.user = "pam";
  r.auth_response = expected.substr(32 + 4 + 1, 20);
  r.database = "test";
  r.auth_plugin = "mysql_native_password";
  BR_ASSERT_OK_AND_ASSIGN(std::string built, BuildHandshakeResponse(r));
  EXPECT_EQ(built, expected);
}

// Guards MariaDB's extended client capabilities in the filler and the native
// scramble of "secret" against libmariadb 3.3.6 (msmp response 4, answering
// greeting 5 of the 11.1.2 server).
TEST_F(HandshakeFixtureTest, BuildsMariaDbResponseIdenticalToLibmariadb) {
  BR_ASSERT_OK_AND_ASSIGN(InitialHandshake h, ParseInitialHandshake(Payload(greetings_[4])));
  HandshakeResponse r;
  r.capabilities = (uint64_t{29} << 32) | 0x20FFA684;
  r.max_packet = 16777216;
  r.collation = 33;
  r.user = "root";
  r.auth_response = NativePasswordScramble("secret", h.nonce);
  r.auth_plugin = "mysql_native_password";
  r.attributes = {{"_os", "Linux"},          {"_client_name", "libmariadb"},
                  {"_pid", "166"},           {"_client_version", "3.3.6"},
                  {"_platform", "aarch64"},  {"program_name", "mysql"},
                  {"_server_host", "m0"}};
  BR_ASSERT_OK_AND_ASSIGN(std::string built, BuildHandshakeResponse(r));
  EXPECT_EQ(built, Payload(responses_[3]));
}

// Guards SSLRequest: the 32-byte prefix with the SSL bit (msmp ssl-request).
TEST(HandshakeTest, BuildsSslRequestIdenticalToLibmysql) {
  BINRELAY_REQUIRE_FIXTURE("msmp/ssl-request.terms");
  auto frames = testing::WirePacketsFromTerms("msmp/ssl-request.terms");
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(BuildSslRequest(0x19FFA685, 16777216, 8), Payload(frames[0]));
}

// Guards the 255-byte limit of the 1-byte auth length.
TEST(HandshakeTest, LongAuthResponseNeedsLenencCapability) {
  HandshakeResponse r;
  r.capabilities = cap::kProtocol41 | cap::kSecureConnection;
  r.auth_response = std::string(256, 'a');
  EXPECT_EQ(BuildHandshakeResponse(r).status().code(), absl::StatusCode::kInvalidArgument);
  r.capabilities |= cap::kPluginAuthLenencClientData;
  BR_ASSERT_OK_AND_ASSIGN(std::string built, BuildHandshakeResponse(r));
  EXPECT_EQ(built.substr(33, 3), std::string("\xfc\x00\x01", 3));
}

}  // namespace
}  // namespace binrelay::protocol
