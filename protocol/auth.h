// Client authentication (MySQL sql/auth/password.cc scramble,
// sql/auth/sha2_password_common.cc, sql-common/client_authentication.cc):
// password scrambles for
// mysql_native_password and caching_sha2_password, the RSA path of
// caching_sha2 full authentication, AuthSwitchRequest parsing, and
// AuthExchange, the transport-independent state machine that turns server
// auth packets into client replies.
//
// Thread safety: functions are pure; an AuthExchange belongs to one
// connection attempt.
// Lifetime: everything returned is owned by the caller.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace binrelay::protocol {

inline constexpr std::string_view kNativePasswordPlugin = "mysql_native_password";
inline constexpr std::string_view kCachingSha2Plugin = "caching_sha2_password";
inline constexpr std::string_view kEd25519Plugin = "client_ed25519";

// SHA1(pw) XOR SHA1(nonce || SHA1(SHA1(pw))); empty for an empty password.
std::string NativePasswordScramble(std::string_view password, std::string_view nonce);
// SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) || nonce); one 0x00 byte for an
// empty password (what libmysqlclient sends).
std::string CachingSha2Scramble(std::string_view password, std::string_view nonce);
// RSA-OAEP (SHA-1/MGF1) encryption of (password || NUL) XOR nonce under the
// server's PEM public key, for full authentication without TLS.
// InvalidArgument for an unreadable key or a password too long for the key.
absl::StatusOr<std::string> CachingSha2RsaEncrypt(std::string_view password,
                                                  std::string_view nonce,
                                                  std::string_view public_key_pem);

// MariaDB 11.4+ zero-configuration TLS (MDEV-31855): after a
// mysql_native_password login over TLS a server proves it knows the
// account's password hash, bound to the certificate the client saw, so a
// client can trust a self-signed certificate: the OK packet's info is 0x01
// then the uppercase hex of SHA256(SHA1(SHA1(password)) || nonce ||
// SHA256(certificate DER)), where nonce is the greeting's (clients keep it
// across an AuthSwitchRequest: plugins/auth/my_auth.c in Connector/C).
// `cert_sha256` is the certificate's 32-byte digest. Empty for an empty
// password (it proves nothing).
std::string MariaDbCertificateProof(std::string_view password, std::string_view nonce,
                                    std::string_view cert_sha256);

struct AuthSwitchRequest {
  std::string plugin;
  std::string nonce;  // plugin data without the trailing NUL
};
// Parses 0xFE plugin-name NUL plugin-data. The 1-byte old-password switch is
// refused (FailedPrecondition).
absl::StatusOr<AuthSwitchRequest> ParseAuthSwitchRequest(std::string_view payload);

// Drives one authentication. The caller sends Start()'s result in the
// handshake response, then feeds every server packet that is not an ERR
// (the caller turns ERR into its own error with peer context) to
// OnServerPacket() until it returns kDone.
// What caching_sha2_password full authentication may do without TLS, where
// the password is encrypted to the server's RSA key (MySQL's
// --server-public-key-path and --get-server-public-key).
struct RsaKeyPolicy {
  // The server's public key (PEM), known in advance: the password is
  // encrypted to it directly, never to a key the peer sends.
  std::string pinned_pem;
  // Without a pinned key: ask the server for its key and trust whatever
  // comes back (a man in the middle can send its own and read the
  // password). Off by default, as in MySQL's client.
  bool allow_retrieval = false;
};

class AuthExchange {
 public:
  // `secure_transport`: TLS is active, so full authentication may send the
  // password in clear.
  AuthExchange(std::string password, bool secure_transport, RsaKeyPolicy rsa = {});

  // Returns the auth response for the server-announced plugin. Unknown
  // plugins are answered with mysql_native_password; the server then sends
  // an AuthSwitchRequest for the user's plugin.
  absl::StatusOr<std::string> Start(std::string_view server_plugin, std::string_view nonce);

  struct Step {
    enum Kind { kSend, kRead, kDone } kind = kRead;
    std::string payload;  // for kSend: the next client packet
  };
  absl::StatusOr<Step> OnServerPacket(std::string_view payload);

  const std::string& plugin() const { return plugin_; }

 private:
  absl::StatusOr<std::string> ResponseFor(std::string_view plugin);
  absl::StatusOr<Step> OnMoreData(std::string_view data);

  enum class State { kInitial, kSent, kFastAuthOk, kAwaitKey, kFullSent };
  std::string password_;
  bool secure_;
  RsaKeyPolicy rsa_;
  std::string plugin_;
  std::string nonce_;
  State state_ = State::kInitial;
};

}  // namespace binrelay::protocol
