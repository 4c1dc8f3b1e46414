#include "protocol/auth.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

constexpr size_t kNonceSize = 20;

std::string Digest(const EVP_MD* md, std::string_view a, std::string_view b = {}) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), md, nullptr);
  EVP_DigestUpdate(ctx.get(), a.data(), a.size());
  if (!b.empty()) EVP_DigestUpdate(ctx.get(), b.data(), b.size());
  EVP_DigestFinal_ex(ctx.get(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string Xor(std::string a, std::string_view b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) a[i] ^= b[i];
  return a;
}

// Servers send 20 nonce bytes and sometimes a trailing NUL; only 20 count.
std::string_view NonceOf(std::string_view nonce) { return nonce.substr(0, kNonceSize); }

}  // namespace

std::string NativePasswordScramble(std::string_view password, std::string_view nonce) {
  if (password.empty()) return {};
  std::string s1 = Digest(EVP_sha1(), password);
  std::string s2 = Digest(EVP_sha1(), s1);
  // Nonce first, then the double hash (the reverse of caching_sha2).
  return Xor(s1, Digest(EVP_sha1(), NonceOf(nonce), s2));
}

std::string MariaDbCertificateProof(std::string_view password, std::string_view nonce,
                                    std::string_view cert_sha256) {
  if (password.empty()) return {};
  const std::string hash = Digest(EVP_sha1(), Digest(EVP_sha1(), password));
  const std::string digest =
      Digest(EVP_sha256(), absl::StrCat(AV(hash), AV(NonceOf(nonce))), cert_sha256);
  // Uppercase: Connector/C compares with strcmp against mysql_hex_string's.
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out(1, '\x01');
  for (unsigned char c : digest) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

std::string CachingSha2Scramble(std::string_view password, std::string_view nonce) {
  if (password.empty()) return std::string(1, '\0');
  std::string s1 = Digest(EVP_sha256(), password);
  std::string s2 = Digest(EVP_sha256(), s1);
  // Double hash first, then the nonce (the reverse of native).
  return Xor(s1, Digest(EVP_sha256(), s2, NonceOf(nonce)));
}

absl::StatusOr<std::string> CachingSha2RsaEncrypt(std::string_view password,
                                                  std::string_view nonce,
                                                  std::string_view public_key_pem) {
  nonce = NonceOf(nonce);
  if (nonce.empty()) return absl::InvalidArgumentError("empty nonce for RSA password encryption");
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(public_key_pem.data(), static_cast<int>(public_key_pem.size())), BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr), EVP_PKEY_free);
  if (!key) {
    return absl::InvalidArgumentError(absl::StrCat(
        "server sent an unreadable RSA public key (", public_key_pem.size(), " bytes of PEM)"));
  }
  size_t key_size = static_cast<size_t>(EVP_PKEY_get_size(key.get()));
  // OAEP with SHA-1 leaves key_size - 42 bytes for password + NUL
  // (libmysqlclient's check: (len + 1) + 41 >= key size is refused).
  if (password.size() + 1 + 41 >= key_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the password is too long for the server's ", key_size * 8,
        "-bit RSA key (at most ", key_size - 43, " bytes fit); connect over TLS instead"));
  }
  std::string plain(password);
  plain.push_back('\0');
  for (size_t i = 0; i < plain.size(); ++i) plain[i] ^= nonce[i % nonce.size()];

  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(
      EVP_PKEY_CTX_new(key.get(), nullptr), EVP_PKEY_CTX_free);
  size_t out_len = 0;
  const auto* in = reinterpret_cast<const unsigned char*>(plain.data());
  if (!ctx || EVP_PKEY_encrypt_init(ctx.get()) <= 0 ||
      EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_PKCS1_OAEP_PADDING) <= 0 ||
      EVP_PKEY_encrypt(ctx.get(), nullptr, &out_len, in, plain.size()) <= 0) {
    return absl::InvalidArgumentError("cannot set up RSA-OAEP encryption with the server's key");
  }
  std::string out(out_len, '\0');
  if (EVP_PKEY_encrypt(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &out_len, in,
                       plain.size()) <= 0) {
    return absl::InternalError("RSA-OAEP encryption of the password failed");
  }
  out.resize(out_len);
  return out;
}

absl::StatusOr<AuthSwitchRequest> ParseAuthSwitchRequest(std::string_view payload) {
  if (payload.empty() || static_cast<uint8_t>(payload[0]) != 0xFE) {
    return absl::InvalidArgumentError("not an AuthSwitchRequest (first byte is not 0xFE)");
  }
  if (payload.size() == 1) {
    return absl::FailedPreconditionError(
        "server asked for the pre-4.1 old_password authentication, which is insecure and not "
        "supported; give the user a mysql_native_password or caching_sha2_password password");
  }
  payload.remove_prefix(1);
  size_t nul = payload.find('\0');
  if (nul == std::string_view::npos) {
    return absl::OutOfRangeError(absl::StrCat(
        "AuthSwitchRequest plugin name has no NUL terminator in ", payload.size() + 1, " bytes"));
  }
  AuthSwitchRequest r;
  r.plugin = std::string(payload.substr(0, nul));
  std::string_view data = payload.substr(nul + 1);
  if (!data.empty() && data.back() == '\0') data.remove_suffix(1);
  r.nonce = std::string(data);
  return r;
}

AuthExchange::AuthExchange(std::string password, bool secure_transport, RsaKeyPolicy rsa)
    : password_(std::move(password)), secure_(secure_transport), rsa_(std::move(rsa)) {}

absl::StatusOr<std::string> AuthExchange::ResponseFor(std::string_view plugin) {
  if (plugin == kNativePasswordPlugin) return NativePasswordScramble(password_, nonce_);
  if (plugin == kCachingSha2Plugin) return CachingSha2Scramble(password_, nonce_);
  if (plugin == kEd25519Plugin) {
    return absl::UnimplementedError(
        "the user authenticates with MariaDB's client_ed25519 plugin, which binrelay does not "
        "implement; create the replication user IDENTIFIED VIA mysql_native_password");
  }
  return absl::UnimplementedError(absl::StrCat(
      "the server asked for authentication plugin '", AV(plugin),
      "', which binrelay does not implement; use mysql_native_password or "
      "caching_sha2_password for the replication user"));
}

absl::StatusOr<std::string> AuthExchange::Start(std::string_view server_plugin,
                                                std::string_view nonce) {
  nonce_ = std::string(nonce);
  plugin_ = server_plugin == kCachingSha2Plugin ? std::string(kCachingSha2Plugin)
                                                : std::string(kNativePasswordPlugin);
  state_ = State::kSent;
  return ResponseFor(plugin_);
}

absl::StatusOr<AuthExchange::Step> AuthExchange::OnServerPacket(std::string_view payload) {
  if (payload.empty()) return absl::DataLossError("empty packet during authentication");
  switch (static_cast<uint8_t>(payload[0])) {
    case 0x00:
      return Step{Step::kDone, {}};
    case 0xFE: {
      if (state_ == State::kFastAuthOk || state_ == State::kFullSent) {
        return absl::DataLossError("AuthSwitchRequest after the password was already accepted");
      }
      BR_ASSIGN_OR_RETURN(AuthSwitchRequest sw, ParseAuthSwitchRequest(payload));
      plugin_ = sw.plugin;
      nonce_ = sw.nonce;
      state_ = State::kSent;
      BR_ASSIGN_OR_RETURN(std::string response, ResponseFor(plugin_));
      return Step{Step::kSend, std::move(response)};
    }
    case 0x01:
      return OnMoreData(payload.substr(1));
    case 0xFF:
      return absl::InvalidArgumentError("ERR packet must be handled by the caller");
    default:
      return absl::DataLossError(absl::StrCat("unexpected packet with first byte 0x",
                                              absl::Hex(static_cast<uint8_t>(payload[0])),
                                              " during authentication with ", plugin_));
  }
}

absl::StatusOr<AuthExchange::Step> AuthExchange::OnMoreData(std::string_view data) {
  if (plugin_ != kCachingSha2Plugin) {
    return absl::DataLossError(
        absl::StrCat("unexpected AuthMoreData packet for plugin ", plugin_));
  }
  if (state_ == State::kAwaitKey) {
    BR_ASSIGN_OR_RETURN(std::string encrypted, CachingSha2RsaEncrypt(password_, nonce_, data));
    state_ = State::kFullSent;
    return Step{Step::kSend, std::move(encrypted)};
  }
  if (data.size() != 1) {
    return absl::DataLossError(absl::StrCat("caching_sha2_password AuthMoreData of ",
                                            data.size(), " bytes where 1 was expected"));
  }
  switch (static_cast<uint8_t>(data[0])) {
    case 0x03:  // fast_auth_success: an OK packet follows
      state_ = State::kFastAuthOk;
      return Step{Step::kRead, {}};
    case 0x04:  // perform_full_authentication
      if (secure_) {
        std::string clear = password_;
        clear.push_back('\0');
        state_ = State::kFullSent;
        return Step{Step::kSend, std::move(clear)};
      }
      if (!rsa_.pinned_pem.empty()) {
        // sql-common/client_authentication.cc: a client holding the key
        // sends the encrypted password at once.
        BR_ASSIGN_OR_RETURN(std::string encrypted,
                            CachingSha2RsaEncrypt(password_, nonce_, rsa_.pinned_pem));
        state_ = State::kFullSent;
        return Step{Step::kSend, std::move(encrypted)};
      }
      if (!rsa_.allow_retrieval) {
        return absl::FailedPreconditionError(
            "caching_sha2_password needs full authentication (the server has no cached hash "
            "of the password) and the connection is not encrypted, so the password would go "
            "to an RSA key the peer chooses; use TLS (ssl_mode = required), pin the server's "
            "key with server_public_key_path = FILE (its caching_sha2_password_public_key_path"
            "), or accept any key with get_server_public_key = on");
      }
      state_ = State::kAwaitKey;
      return Step{Step::kSend, std::string(1, '\x02')};  // request the RSA public key
    default:
      return absl::DataLossError(absl::StrCat("unknown caching_sha2_password status byte 0x",
                                              absl::Hex(static_cast<uint8_t>(data[0]))));
  }
}

}  // namespace binrelay::protocol
