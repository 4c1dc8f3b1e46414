// Connection-phase packets
// (https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_connection_phase.html):
// the server's Initial
// Handshake v10, and the client's SSLRequest and HandshakeResponse41.
//
// Thread safety: pure functions.
// Lifetime: everything returned is owned by the caller.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "protocol/capabilities.h"

namespace binrelay::protocol {

struct InitialHandshake {
  uint8_t protocol_version = 0;
  std::string server_version;  // as sent, e.g. "5.5.5-10.11.6-MariaDB-log"
  uint32_t connection_id = 0;
  std::string nonce;           // auth-plugin-data without the trailing NUL (20 bytes)
  uint64_t capabilities = 0;   // low 32 bits, plus MariaDB's extended bits 32-63
  uint8_t collation = 0;
  uint16_t status_flags = 0;
  std::string auth_plugin;     // empty when the server lacks PLUGIN_AUTH
  bool is_mariadb = false;

  // server_version without MariaDB's "5.5.5-" compatibility prefix.
  std::string DisplayVersion() const;
};

// Parses the server greeting. Protocol versions other than 10 are
// FailedPrecondition; truncation is OutOfRange with the byte offset.
absl::StatusOr<InitialHandshake> ParseInitialHandshake(std::string_view payload);

struct HandshakeResponse {
  uint64_t capabilities = 0;  // already ANDed with the server's set
  uint32_t max_packet = kClientMaxPacket;
  uint8_t collation = kDefaultCollation;
  std::string user;
  std::string auth_response;
  std::string database;     // sent only with CONNECT_WITH_DB
  std::string auth_plugin;  // sent only with PLUGIN_AUTH
  std::vector<std::pair<std::string, std::string>> attributes;  // with CONNECT_ATTRS
};

// The 32-byte SSLRequest: capabilities (including SSL), max packet size,
// collation and the filler, sent before the TLS handshake.
std::string BuildSslRequest(uint64_t capabilities, uint32_t max_packet = kClientMaxPacket,
                            uint8_t collation = kDefaultCollation);

// HandshakeResponse41. The encoding of the auth response follows the
// capabilities (lenenc / 1-byte length / NUL-terminated). Fails with
// InvalidArgument when the auth response cannot be encoded (> 255 bytes
// without PLUGIN_AUTH_LENENC_CLIENT_DATA).
absl::StatusOr<std::string> BuildHandshakeResponse(const HandshakeResponse& response);

}  // namespace binrelay::protocol
