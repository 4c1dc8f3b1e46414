#include "proxy/rsa_key_pair.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"

namespace binrelay::proxy {
namespace {

std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct CtxFree {
  void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using CtxPtr = std::unique_ptr<EVP_PKEY_CTX, CtxFree>;

absl::StatusOr<std::string> BioText(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  if (n <= 0 || data == nullptr) return absl::InternalError("empty PEM output");
  return std::string(data, static_cast<size_t>(n));
}

}  // namespace

RsaKeyPair::~RsaKeyPair() { EVP_PKEY_free(key_); }

absl::StatusOr<std::shared_ptr<const RsaKeyPair>> RsaKeyPair::FromPrivatePem(
    std::string_view pem, std::string_view where) {
  BioPtr in(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  EVP_PKEY* key = in ? PEM_read_bio_PrivateKey(in.get(), nullptr, nullptr, nullptr) : nullptr;
  if (key == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(AV(where), " is not a PEM private key: ", OpenSslError()));
  }
  if (EVP_PKEY_base_id(key) != EVP_PKEY_RSA || EVP_PKEY_bits(key) < 1024) {
    EVP_PKEY_free(key);
    return absl::InvalidArgumentError(absl::StrCat(
        AV(where), " is not an RSA key of at least 1024 bits (caching_sha2_password "
                   "encrypts passwords with RSA-OAEP)"));
  }
  BioPtr out(BIO_new(BIO_s_mem()));
  if (!out || PEM_write_bio_PUBKEY(out.get(), key) != 1) {
    EVP_PKEY_free(key);
    return absl::InternalError(absl::StrCat("writing the public key of ", AV(where), ": ",
                                            OpenSslError()));
  }
  auto public_pem = BioText(out.get());
  if (!public_pem.ok()) {
    EVP_PKEY_free(key);
    return public_pem.status();
  }
  const size_t block = static_cast<size_t>(EVP_PKEY_size(key));
  return std::shared_ptr<const RsaKeyPair>(new RsaKeyPair(key, *std::move(public_pem), block));
}

absl::StatusOr<std::shared_ptr<const RsaKeyPair>> RsaKeyPair::FromPrivateKeyFile(
    const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string pem((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    return absl::InvalidArgumentError(
        absl::StrCat("[listen] rsa_private_key: cannot read ", path, ": ", std::strerror(errno)));
  }
  return FromPrivatePem(pem, absl::StrCat("[listen] rsa_private_key ", path));
}

absl::StatusOr<std::string> RsaKeyPair::GeneratePrivatePem() {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  if (key == nullptr) {
    return absl::InternalError(absl::StrCat("generating an RSA key: ", OpenSslError()));
  }
  BioPtr out(BIO_new(BIO_s_mem()));
  const bool ok = out && PEM_write_bio_PrivateKey(out.get(), key, nullptr, nullptr, 0, nullptr,
                                                  nullptr) == 1;
  EVP_PKEY_free(key);
  if (!ok) return absl::InternalError(absl::StrCat("writing an RSA key: ", OpenSslError()));
  return BioText(out.get());
}

absl::StatusOr<std::string> RsaKeyPair::Decrypt(std::string_view ciphertext) const {
  if (ciphertext.size() != block_bytes_) {
    return absl::InvalidArgumentError(absl::StrCat("RSA ciphertext of ", ciphertext.size(),
                                                   " bytes; this key's block is ", block_bytes_));
  }
  CtxPtr ctx(EVP_PKEY_CTX_new(key_, nullptr));
  size_t n = block_bytes_;
  std::string plain(n, '\0');
  if (!ctx || EVP_PKEY_decrypt_init(ctx.get()) != 1 ||
      EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_PKCS1_OAEP_PADDING) != 1 ||
      EVP_PKEY_decrypt(ctx.get(), reinterpret_cast<unsigned char*>(plain.data()), &n,
                       reinterpret_cast<const unsigned char*>(ciphertext.data()),
                       ciphertext.size()) != 1) {
    ERR_clear_error();  // a peer's bad ciphertext: nothing worth keeping
    return absl::InvalidArgumentError("RSA-OAEP decryption failed");
  }
  plain.resize(n);
  return plain;
}

}  // namespace binrelay::proxy
