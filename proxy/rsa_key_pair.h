// RsaKeyPair: the listener's RSA key for caching_sha2_password full
// authentication on a connection without TLS (MySQL sql/auth/sha2_password.cc,
// caching_sha2_password_private_key_path): a client that asks for it (0x02)
// gets the public key as PEM, encrypts (password || NUL) XOR nonce to it with
// RSA-OAEP, and the listener decrypts here.
//
// Thread safety: immutable after construction; Decrypt may run on several
// connections at once (each call has its own OpenSSL context).
// Lifetime: shared by every connection of a listener (std::shared_ptr).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

typedef struct evp_pkey_st EVP_PKEY;

namespace binrelay::proxy {

class RsaKeyPair {
 public:
  // From a PEM private key (PKCS#1 or PKCS#8); `where` names its file in errors.
  static absl::StatusOr<std::shared_ptr<const RsaKeyPair>> FromPrivatePem(std::string_view pem,
                                                                          std::string_view where);
  // The same, read from the file at `path` ([listen] rsa_private_key).
  static absl::StatusOr<std::shared_ptr<const RsaKeyPair>> FromPrivateKeyFile(
      const std::string& path);
  // A fresh 2048-bit key as PKCS#8 PEM (what mysqld's
  // caching_sha2_password_auto_generate_rsa_keys writes: 2048 bits).
  static absl::StatusOr<std::string> GeneratePrivatePem();

  ~RsaKeyPair();
  RsaKeyPair(const RsaKeyPair&) = delete;
  RsaKeyPair& operator=(const RsaKeyPair&) = delete;

  // The public half as PEM (SubjectPublicKeyInfo), as clients expect it.
  const std::string& public_pem() const { return public_pem_; }
  // RSA-OAEP (SHA-1, MGF1) decryption; InvalidArgument when the ciphertext is
  // not one block of this key or does not decrypt.
  absl::StatusOr<std::string> Decrypt(std::string_view ciphertext) const;
  size_t block_bytes() const { return block_bytes_; }

 private:
  RsaKeyPair(EVP_PKEY* key, std::string public_pem, size_t block_bytes)
      : key_(key), public_pem_(std::move(public_pem)), block_bytes_(block_bytes) {}
  EVP_PKEY* key_;
  std::string public_pem_;
  size_t block_bytes_;
};

}  // namespace binrelay::proxy
