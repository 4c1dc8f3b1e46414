// ListenerKeys: the key material binrelay's listener uses, as mysqld does:
// a TLS certificate and key, so TLS is offered by default (auto_generate_certs),
// and an RSA key for caching_sha2_password full authentication without TLS
// (caching_sha2_password_auto_generate_rsa_keys). What [listen] does not name
// is generated at first start into a folder of the store (.tls/), then reused,
// so clients that pinned the certificate or public key keep working across
// restarts.
//
// The generated certificate is self-signed (CN binrelay_Auto_Generated_Server_Certificate,
// no host names): it encrypts, but a client can only verify it by trusting
// that very file (--ssl-ca=DIR/.tls/server-cert.pem); configure ssl_cert and
// ssl_key for a certificate clients verify by host name.
//
// Thread safety: call once at start.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace binrelay::proxy {

struct ListenerKeyFiles {
  std::string ssl_cert;         // PEM certificate chain; "" with ssl_key "": generate
  std::string ssl_key;          // PEM private key of ssl_cert
  std::string rsa_private_key;  // PEM RSA private key; "": generate
};

// Returns `configured` with every empty path replaced by a file in `dir`
// (created 0700 if absent): server-cert.pem, server-key.pem and
// private_key.pem (with public_key.pem beside it, for clients that pin the
// key), generated when missing. A generated pair found half
// present (a key without its certificate) is an error naming the file to
// delete. `want_tls` false: no certificate is generated or returned.
// SHA-256 of the first certificate in the PEM file `cert_file` (its DER
// bytes): what a client's fingerprint of it is (MariaDbCertificateProof).
absl::StatusOr<std::string> CertificateSha256(const std::string& cert_file);

absl::StatusOr<ListenerKeyFiles> EnsureListenerKeys(const std::string& dir,
                                                    ListenerKeyFiles configured, bool want_tls);

}  // namespace binrelay::proxy
