#include "proxy/server_auth.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "protocol/auth.h"
#include "protocol/server_error.h"
#include "protocol/status_macros.h"

namespace binrelay::proxy {
namespace {

using protocol::kCachingSha2Plugin;
using protocol::kNativePasswordPlugin;

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool Speaks(std::string_view plugin) {
  return plugin == kNativePasswordPlugin || plugin == kCachingSha2Plugin;
}

// The client's token is (password || NUL) XOR the nonce, repeated over it
// (sql/auth/sha2_password.cc, caching_sha2_password_authenticate).
std::string Unmask(std::string plain, std::string_view nonce) {
  if (nonce.empty()) return plain;
  for (size_t i = 0; i < plain.size(); ++i) plain[i] ^= nonce[i % nonce.size()];
  if (!plain.empty() && plain.back() == '\0') plain.pop_back();
  return plain;
}

}  // namespace

std::string_view GreetingPluginFor(std::string_view server_version) {
  if (absl::StrContains(absl::AsciiStrToLower(AV(server_version)), "mariadb")) {
    return kNativePasswordPlugin;
  }
  int major = 0;
  for (char c : server_version) {
    if (c < '0' || c > '9') break;
    major = major * 10 + (c - '0');
    if (major > 1000) break;
  }
  return major >= 8 ? kCachingSha2Plugin : kNativePasswordPlugin;
}

ServerAuth::ServerAuth(AuthOptions options) : options_(std::move(options)) {}

absl::StatusOr<std::string> ServerAuth::NewNonce() {
  unsigned char raw[20];
  // A predictable nonce would allow replaying a captured token: no fallback.
  if (RAND_bytes(raw, sizeof raw) != 1) {
    return absl::InternalError("RAND_bytes failed: no randomness for the auth nonce");
  }
  std::string nonce(sizeof raw, '\0');
  // Printable ASCII 0x21..0x7E, as MySQL does: never NUL (part 2 of the
  // greeting is NUL-terminated) and safe in logs.
  for (size_t i = 0; i < sizeof raw; ++i) nonce[i] = static_cast<char>(0x21 + raw[i] % 94);
  return nonce;
}

absl::StatusOr<std::string> ServerAuth::Greeting(std::string server_version,
                                                 uint32_t connection_id, std::string nonce) {
  nonce_ = std::move(nonce);
  greeting_nonce_ = nonce_;
  protocol::ServerGreeting g;
  g.server_version = std::move(server_version);
  g.connection_id = connection_id;
  g.nonce = nonce_;
  g.auth_plugin = options_.plugin;
  if (options_.tls_available) g.capabilities |= static_cast<uint32_t>(protocol::cap::kSsl);
  return protocol::BuildInitialHandshake(g);
}

ServerAuth::Step ServerAuth::Fail(uint16_t code, std::string_view sql_state,
                                  std::string_view message) {
  Step s;
  s.kind = Step::Kind::kFailed;
  s.replies.push_back(protocol::BuildErrPacket(code, sql_state, message));
  return s;
}

ServerAuth::Step ServerAuth::Deny(bool used_password) {
  state_ = State::kDone;
  return Fail(protocol::server_error::kAccessDenied, "28000",
              absl::StrCat("Access denied for user '", AV(user_), "'@'", AV(options_.peer_host),
                           "' (using password: ", used_password ? "YES" : "NO", ")"));
}

ServerAuth::Step ServerAuth::OnClientPacket(std::string_view payload) {
  switch (state_) {
    case State::kHandshakeResponse:
      return OnHandshakeResponse(payload);
    case State::kSwitchResponse:
      // The client answers the AuthSwitchRequest with the raw token.
      return Verify(switch_plugin_, payload);
    case State::kSha2FullAuth:
      return OnFullAuth(payload);
    case State::kDone:
      break;
  }
  return Fail(kErHandshakeError, "08S01", "Bad handshake: packet after authentication ended");
}

ServerAuth::Step ServerAuth::OnHandshakeResponse(std::string_view payload) {
  const uint64_t server_caps =
      protocol::kServerDefaultCaps | (options_.tls_available ? protocol::cap::kSsl : 0);
  auto parsed = protocol::ParseClientHandshake(payload, server_caps);
  if (!parsed.ok()) {
    state_ = State::kDone;
    return Fail(kErHandshakeError, "08S01",
                absl::StrCat("Bad handshake: ", parsed.status().message()));
  }
  if (parsed->ssl_request) {
    if (!options_.tls_available || tls_requested_) {
      state_ = State::kDone;
      return Fail(kErHandshakeError, "08S01",
                  tls_requested_ ? "Bad handshake: a second SSLRequest"
                                 : "Bad handshake: TLS is not configured on this listener "
                                   "([listen] ssl_cert/ssl_key)");
    }
    tls_requested_ = true;
    return Step{Step::Kind::kStartTls, {}};
  }
  if (options_.tls_required && !options_.secure_transport) {
    // Before any credential is checked (MariaDB MDEV-30178 does the same).
    state_ = State::kDone;
    return Fail(kErSecureTransportRequired, "08004",
                "Connections using insecure transport are prohibited while [listen] "
                "ssl_mode=required; connect with TLS (mariadb --ssl, CHANGE MASTER TO "
                "MASTER_SSL=1)");
  }
  user_ = std::string(parsed->user);
  client_caps_ = parsed->capabilities;
  database_ = std::string(parsed->database);
  collation_ = parsed->collation;
  // No PLUGIN_AUTH: a 4.1-style client, whose token is the native scramble.
  std::string_view plugin =
      parsed->auth_plugin.empty() ? kNativePasswordPlugin : parsed->auth_plugin;
  // A client without the greeting's plugin answers for its own default with
  // no token (MySQL 9 has no mysql_native_password): switch it to that
  // plugin when binrelay speaks it, as mysqld switches a client to the
  // account's plugin.
  if (Speaks(plugin) && (plugin == options_.plugin || !parsed->auth_response.empty())) {
    return Verify(plugin, parsed->auth_response);
  }
  // The client answered for a plugin binrelay does not speak (client_ed25519,
  // sha256_password), or for the other one without a token: switch it with a
  // fresh nonce (as send_plugin_request_packet in
  // sql/auth/sql_authentication.cc does).
  auto nonce = NewNonce();
  if (!nonce.ok()) {
    state_ = State::kDone;
    return Fail(kErHandshakeError, "08S01", std::string(nonce.status().message()));
  }
  nonce_ = *std::move(nonce);
  state_ = State::kSwitchResponse;
  switch_plugin_ = Speaks(plugin) ? std::string(plugin) : options_.plugin;
  Step s;
  s.replies.push_back(protocol::BuildAuthSwitchRequest(switch_plugin_, nonce_));
  return s;
}

ServerAuth::Step ServerAuth::Verify(std::string_view plugin, std::string_view response) {
  const bool used_password = !response.empty() && response != std::string_view("\0", 1);
  if (user_ == options_.user) {
    password_ = &options_.password;
    is_admin_ = false;
  } else if (!options_.admin_user.empty() && user_ == options_.admin_user) {
    password_ = &options_.admin_password;
    is_admin_ = true;
  } else {
    return Deny(used_password);
  }
  const std::string& password = *password_;
  if (plugin == kNativePasswordPlugin) {
    if (!ConstantTimeEquals(response,
                            protocol::NativePasswordScramble(password, nonce_))) {
      return Deny(used_password);
    }
    state_ = State::kDone;
    // Over TLS, the proof that lets a MariaDB 11.4+ client trust the
    // self-signed certificate it was shown (as MariaDB's own server does).
    if (tls_requested_ && !options_.tls_cert_sha256.empty() && !password.empty()) {
      return Step{Step::Kind::kDone,
                  {protocol::BuildOkPacketWithInfo(protocol::MariaDbCertificateProof(
                      password, greeting_nonce_, options_.tls_cert_sha256))}};
    }
    return Step{Step::Kind::kDone, {protocol::BuildOkPacket()}};
  }
  if (plugin != kCachingSha2Plugin) return Deny(used_password);
  // An empty password needs no exchange: libmysqlclient sends one 0x00
  // byte for it, others nothing (sha2_password.cc accepts it at once).
  if (password.empty()) {
    if (used_password) return Deny(true);
    state_ = State::kDone;
    return Step{Step::Kind::kDone, {protocol::BuildOkPacket()}};
  }
  if (options_.sha2_cache == nullptr || !options_.sha2_cache->Contains(user_)) {
    // 0x01 0x04: not cached, perform full authentication.
    state_ = State::kSha2FullAuth;
    return Step{Step::Kind::kContinue, {protocol::BuildAuthMoreData("\x04")}};
  }
  std::string expected = protocol::CachingSha2Scramble(password, nonce_);
  if (!ConstantTimeEquals(response, expected)) return Deny(used_password);
  state_ = State::kDone;
  // 0x01 0x03: fast authentication succeeded; the OK follows.
  return Step{Step::Kind::kDone, {protocol::BuildAuthMoreData("\x03"), protocol::BuildOkPacket()}};
}

ServerAuth::Step ServerAuth::FullAuthSucceeded() {
  state_ = State::kDone;
  if (options_.sha2_cache != nullptr) options_.sha2_cache->Add(user_);
  return Step{Step::Kind::kDone, {protocol::BuildOkPacket()}};
}

ServerAuth::Step ServerAuth::OnFullAuth(std::string_view payload) {
  if (password_ == nullptr) return Deny(true);
  if (options_.secure_transport) {
    // Over TLS the client sends the clear password followed by NUL.
    if (!payload.empty() && payload.back() == '\0') payload.remove_suffix(1);
    if (!ConstantTimeEquals(payload, *password_)) return Deny(true);
    return FullAuthSucceeded();
  }
  if (options_.rsa_key == nullptr) {
    state_ = State::kDone;
    return Fail(kErNotSupportedAuthMode, "08004",
                "caching_sha2_password full authentication needs TLS on this listener (no RSA "
                "key is configured); connect with TLS (mysql --ssl-mode=REQUIRED, CHANGE "
                "REPLICATION SOURCE TO SOURCE_SSL=1)");
  }
  if (payload == std::string_view("\x02", 1)) {
    // The client asks for the public key (--get-server-public-key,
    // GET_SOURCE_PUBLIC_KEY=1); its encrypted password follows. Asked
    // once: a second request is taken as ciphertext and fails to decrypt.
    if (!public_key_sent_) {
      public_key_sent_ = true;
      return Step{Step::Kind::kContinue,
                  {protocol::BuildAuthMoreData(options_.rsa_key->public_pem())}};
    }
  }
  absl::StatusOr<std::string> plain = options_.rsa_key->Decrypt(payload);
  if (!plain.ok()) return Deny(true);
  if (!ConstantTimeEquals(Unmask(*std::move(plain), nonce_), *password_)) return Deny(true);
  return FullAuthSucceeded();
}

}  // namespace binrelay::proxy
