#include "proxy/listener_keys.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "protocol/errno_status.h"
#include "proxy/rsa_key_pair.h"
#include "protocol/status_macros.h"
#include "replication/atomic_file.h"
#include "spdlog/spdlog.h"

namespace binrelay::proxy {
namespace {

constexpr char kCommonName[] = "binrelay_Auto_Generated_Server_Certificate";
// As long as mysqld's auto-generated certificates (10 years).
constexpr long kValiditySeconds = 10L * 365 * 24 * 3600;

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return e == 0 ? std::string("unknown OpenSSL error") : std::string(buf);
}

// A self-signed X.509 v3 certificate for the key in `key_pem`.
absl::StatusOr<std::string> SelfSignedCertificate(const std::string& key_pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> in(
      BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())), BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      in ? PEM_read_bio_PrivateKey(in.get(), nullptr, nullptr, nullptr) : nullptr,
      EVP_PKEY_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), X509_free);
  if (!key || !cert) return absl::InternalError(absl::StrCat("certificate: ", OpenSslError()));
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1) {
    return absl::InternalError("certificate: no randomness for the serial number");
  }
  serial[0] &= 0x7F;  // a positive INTEGER
  std::unique_ptr<BIGNUM, decltype(&BN_free)> bn(BN_bin2bn(serial, sizeof serial, nullptr),
                                                  BN_free);
  X509_NAME* name = X509_get_subject_name(cert.get());
  const bool ok =
      bn && X509_set_version(cert.get(), 2) == 1 &&
      BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get())) != nullptr &&
      X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0) != nullptr &&
      X509_gmtime_adj(X509_getm_notAfter(cert.get()), kValiditySeconds) != nullptr &&
      X509_set_pubkey(cert.get(), key.get()) == 1 &&
      X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>(kCommonName), -1, -1,
                                 0) == 1 &&
      X509_set_issuer_name(cert.get(), name) == 1 &&
      X509_sign(cert.get(), key.get(), EVP_sha256()) > 0;
  if (!ok) return absl::InternalError(absl::StrCat("certificate: ", OpenSslError()));
  std::unique_ptr<BIO, decltype(&BIO_free)> out(BIO_new(BIO_s_mem()), BIO_free);
  if (!out || PEM_write_bio_X509(out.get(), cert.get()) != 1) {
    return absl::InternalError(absl::StrCat("certificate: ", OpenSslError()));
  }
  char* data = nullptr;
  long n = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

absl::Status EnsureDir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, "cannot create", dir);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> CertificateSha256(const std::string& cert_file) {
  std::unique_ptr<BIO, decltype(&BIO_free)> in(BIO_new_file(cert_file.c_str(), "r"), BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(
      in ? PEM_read_bio_X509(in.get(), nullptr, nullptr, nullptr) : nullptr, X509_free);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!cert || X509_digest(cert.get(), EVP_sha256(), md, &len) != 1) {
    return absl::InvalidArgumentError(absl::StrCat("[listen] ssl_cert '", cert_file,
                                                   "': no PEM certificate: ", OpenSslError()));
  }
  return std::string(reinterpret_cast<char*>(md), len);
}

absl::StatusOr<ListenerKeyFiles> EnsureListenerKeys(const std::string& dir,
                                                    ListenerKeyFiles configured, bool want_tls) {
  ListenerKeyFiles out = configured;
  if (!want_tls) {
    out.ssl_cert.clear();
    out.ssl_key.clear();
  }
  const bool gen_tls = want_tls && configured.ssl_cert.empty() && configured.ssl_key.empty();
  const bool gen_rsa = configured.rsa_private_key.empty();
  if (!gen_tls && !gen_rsa) return out;
  BR_RETURN_IF_ERROR(EnsureDir(dir));
  if (gen_tls) {
    out.ssl_cert = dir + "/server-cert.pem";
    out.ssl_key = dir + "/server-key.pem";
    const bool have_cert = Exists(out.ssl_cert), have_key = Exists(out.ssl_key);
    if (have_cert != have_key) {
      return absl::FailedPreconditionError(absl::StrCat(
          "[listen] TLS: ", have_cert ? out.ssl_cert : out.ssl_key, " exists without ",
          have_cert ? out.ssl_key : out.ssl_cert,
          "; delete it to let binrelay generate a new pair, or set ssl_cert and ssl_key"));
    }
    if (!have_cert) {
      BR_ASSIGN_OR_RETURN(std::string key, RsaKeyPair::GeneratePrivatePem());
      BR_ASSIGN_OR_RETURN(std::string cert, SelfSignedCertificate(key));
      BR_RETURN_IF_ERROR(replication::WriteFileAtomically(out.ssl_key, key, 0600));
      BR_RETURN_IF_ERROR(replication::WriteFileAtomically(out.ssl_cert, cert, 0644));
      spdlog::info("[listen] generated a self-signed TLS certificate in {} (set ssl_cert and "
                   "ssl_key for one clients can verify by host name)", out.ssl_cert);
    }
  }
  if (gen_rsa) {
    out.rsa_private_key = dir + "/private_key.pem";
    const std::string public_key = dir + "/public_key.pem";
    if (!Exists(out.rsa_private_key)) {
      BR_ASSIGN_OR_RETURN(std::string key, RsaKeyPair::GeneratePrivatePem());
      BR_ASSIGN_OR_RETURN(auto pair, RsaKeyPair::FromPrivatePem(key, out.rsa_private_key));
      BR_RETURN_IF_ERROR(replication::WriteFileAtomically(out.rsa_private_key, key, 0600));
      // For clients that pin it (mysql --server-public-key-path,
      // SOURCE_PUBLIC_KEY_PATH), as mysqld writes public_key.pem.
      BR_RETURN_IF_ERROR(
          replication::WriteFileAtomically(public_key, pair->public_pem(), 0644));
      spdlog::info("[listen] generated an RSA key for caching_sha2_password in {} (public "
                   "half in {})", out.rsa_private_key, public_key);
    }
  }
  return out;
}

}  // namespace binrelay::proxy
