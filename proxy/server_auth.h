// Server side of authentication (MySQL sql/auth/sql_authentication.cc,
// sql/auth/sha2_password.cc) for the listener's two accounts:
// mysql_native_password, and caching_sha2_password as mysqld runs it: fast
// authentication for an account in the Sha2AuthCache, otherwise full
// authentication, with the password in clear over TLS or encrypted to the
// listener's RSA key (RsaKeyPair) on a plain connection.
//
// binrelay knows the clear passwords, so it computes the expected scramble
// for its nonce and compares (constant time), instead of storing hashes.
//
// Thread safety: none; one ServerAuth per connection (the cache and the RSA
// key it points to are shared and thread-safe).
// Lifetime: the returned payloads are owned by the caller; the cache must
// outlive the ServerAuth.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "protocol/server_packets.h"
#include "proxy/rsa_key_pair.h"
#include "proxy/sha2_auth_cache.h"

namespace binrelay::proxy {

struct AuthOptions {
  std::string user;
  std::string password;
  // A second account for the statements that change things (PURGE BINARY
  // LOGS, KILL of another connection, CUTOVER MOVE); "" when none is set.
  std::string admin_user;
  std::string admin_password;
  // Announced in the greeting and used for AuthSwitchRequest when the client
  // answers for a plugin binrelay does not speak (GreetingPluginFor).
  std::string plugin = "mysql_native_password";
  std::string peer_host = "localhost";  // for the "Access denied for 'u'@'host'" text
  bool secure_transport = false;        // TLS (or a local socket) is active
  // The transport can switch to TLS: CLIENT_SSL is announced and an
  // SSLRequest answered with Step::kStartTls.
  bool tls_available = false;
  // Refuse a login that did not switch to TLS first (ER_SECURE_TRANSPORT_REQUIRED,
  // as MariaDB's require_secure_transport).
  bool tls_required = false;
  // caching_sha2: accounts that may use fast authentication. Null: none
  // may, every caching_sha2 login authenticates in full.
  Sha2AuthCache* sha2_cache = nullptr;
  // SHA-256 of the listener's TLS certificate (DER), for MariaDB 11.4+
  // clients that verify a self-signed certificate by the password
  // (MariaDbCertificateProof); "" without TLS.
  std::string tls_cert_sha256;
  // caching_sha2 full authentication without TLS: the key a client may ask
  // for (0x02) and encrypt its password to. Null: refused with a message
  // that says to use TLS.
  std::shared_ptr<const RsaKeyPair> rsa_key;
};

// The plugin a listener greets with for a source whose version is
// `server_version`, as that source's server would: caching_sha2_password for
// MySQL 8.0 and later (MySQL 9 clients no longer have mysql_native_password),
// mysql_native_password for MariaDB and older MySQL.
std::string_view GreetingPluginFor(std::string_view server_version);

// Error codes of the connection phase.
inline constexpr uint16_t kErHandshakeError = 1043;       // ER_HANDSHAKE_ERROR, 08S01
inline constexpr uint16_t kErNotSupportedAuthMode = 1251;  // ER_NOT_SUPPORTED_AUTH_MODE, 08004
inline constexpr uint16_t kErSecureTransportRequired = 3159;  // ER_SECURE_TRANSPORT_REQUIRED, 08004

class ServerAuth {
 public:
  explicit ServerAuth(AuthOptions options);

  // A fresh 20-byte nonce without NUL, for the greeting.
  static absl::StatusOr<std::string> NewNonce();
  // Builds the greeting around `nonce` (kept for verification).
  absl::StatusOr<std::string> Greeting(std::string server_version, uint32_t connection_id,
                                       std::string nonce);

  struct Step {
    enum class Kind {
      kContinue,  // send `replies`, then read the client's next auth packet
      kDone,      // send `replies` (ending with OK): authenticated
      kFailed,    // send `replies` (an ERR), then close
      kStartTls,  // SSLRequest: run the TLS handshake, then read the real response
    };
    Kind kind = Kind::kContinue;
    std::vector<std::string> replies;
  };
  // Feed the client's HandshakeResponse41, then every later auth packet.
  Step OnClientPacket(std::string_view payload);

  // The TLS handshake after kStartTls completed.
  void TlsStarted() { options_.secure_transport = true; }
  const std::string& user() const { return user_; }
  // The authenticated user is the admin account.
  bool is_admin() const { return is_admin_; }
  uint64_t client_capabilities() const { return client_caps_; }
  // From the handshake response: the database to start in (CONNECT_WITH_DB)
  // and the connection's collation.
  const std::string& database() const { return database_; }
  uint8_t collation() const { return collation_; }

 private:
  enum class State { kHandshakeResponse, kSwitchResponse, kSha2FullAuth, kDone };
  Step OnHandshakeResponse(std::string_view payload);
  Step Verify(std::string_view plugin, std::string_view response);
  Step OnFullAuth(std::string_view payload);
  Step FullAuthSucceeded();
  Step Deny(bool used_password);
  static Step Fail(uint16_t code, std::string_view sql_state, std::string_view message);

  AuthOptions options_;
  std::string nonce_;
  std::string greeting_nonce_;  // nonce_ before any AuthSwitchRequest
  State state_ = State::kHandshakeResponse;
  std::string user_;
  const std::string* password_ = nullptr;  // the account's, chosen by user name
  bool is_admin_ = false;
  uint64_t client_caps_ = 0;
  std::string database_;
  uint8_t collation_ = 0;
  bool tls_requested_ = false;
  bool public_key_sent_ = false;
  // The plugin of the AuthSwitchRequest sent, whose token comes next.
  std::string switch_plugin_;
};

}  // namespace binrelay::proxy
