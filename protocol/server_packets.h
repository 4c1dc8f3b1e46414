// Byte builders for the server side of the client/server protocol
// (https://dev.mysql.com/doc/dev/mysql-server/latest/PAGE_PROTOCOL.html): the
// Initial Handshake v10 greeting,
// OK / ERR / EOF, AuthSwitchRequest / AuthMoreData, Column Definition 41,
// text rows and whole text result sets; plus the parser of the client's
// SSLRequest / HandshakeResponse41 as a server reads it.
//
// A fake primary advertises neither DEPRECATE_EOF nor SESSION_TRACK, so OK
// packets carry no session state and result sets end with a classic EOF.
//
// Thread safety: pure functions.
// Lifetime: builders return owned strings; ClientHandshake views point into
// the payload it was parsed from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "protocol/capabilities.h"

namespace binrelay::protocol {

// The capability set a fake server announces (flags of include/mysql_com.h).
// CLIENT_MYSQL (bit 0) stays set, so no MariaDB extended
// capabilities are negotiated.
inline constexpr uint64_t kServerDefaultCaps =
    cap::kLongPassword | cap::kFoundRows | cap::kLongFlag | cap::kConnectWithDb |
    cap::kProtocol41 | cap::kTransactions | cap::kSecureConnection | cap::kMultiStatements |
    cap::kMultiResults | cap::kPsMultiResults | cap::kPluginAuth | cap::kConnectAttrs |
    cap::kPluginAuthLenencClientData;

struct ServerGreeting {
  std::string server_version;  // e.g. "5.5.5-10.11.0-binrelay" or "8.0.36-binrelay"
  uint32_t connection_id = 0;
  std::string nonce;           // exactly 20 bytes, none of them NUL
  uint32_t capabilities = static_cast<uint32_t>(kServerDefaultCaps);
  uint8_t collation = 33;      // utf8_general_ci exists everywhere
  uint16_t status_flags = server_status::kAutocommit;
  std::string auth_plugin;     // e.g. "mysql_native_password"
};

// Initial Handshake v10. InvalidArgument when the nonce is not 20 bytes or
// contains NUL (part 2 is NUL-terminated on the wire).
absl::StatusOr<std::string> BuildInitialHandshake(const ServerGreeting& greeting);

// What a server reads in the client's first reply. An SSLRequest is the
// 32-byte prefix with CLIENT_SSL set; then only the first four fields are set.
struct ClientHandshake {
  bool ssl_request = false;
  uint64_t capabilities = 0;  // the client's flags ANDed with the server's
  uint32_t max_packet = 0;
  uint8_t collation = 0;
  std::string_view user;
  std::string_view auth_response;
  std::string_view database;
  std::string_view auth_plugin;  // empty without PLUGIN_AUTH
};

// Parses SSLRequest / HandshakeResponse41 against the server's capability
// set. A client without PROTOCOL_41 is FailedPrecondition; truncation is
// OutOfRange naming the field and byte offset.
absl::StatusOr<ClientHandshake> ParseClientHandshake(std::string_view payload,
                                                     uint64_t server_caps);

std::string BuildOkPacket(uint64_t affected_rows = 0, uint64_t last_insert_id = 0,
                          uint16_t status_flags = server_status::kAutocommit,
                          uint16_t warnings = 0);
// OK whose info is `info` as a length-encoded string (the form clients read
// when session tracking is on, and MariaDB's connectors always).
std::string BuildOkPacketWithInfo(std::string_view info);
// ERR with the PROTOCOL_41 '#'+SQLSTATE marker. `sql_state` must be 5 chars
// (anything else is replaced by HY000, the generic state).
std::string BuildErrPacket(uint16_t code, std::string_view sql_state, std::string_view message);
std::string BuildEofPacket(uint16_t warnings = 0,
                           uint16_t status_flags = server_status::kAutocommit);
// 0xFE plugin NUL nonce NUL (sql/auth/sql_authentication.cc
// send_plugin_request_packet).
std::string BuildAuthSwitchRequest(std::string_view plugin, std::string_view nonce);
// 0x01 followed by plugin data (caching_sha2's 0x03 fast-auth OK, 0x04 full auth).
std::string BuildAuthMoreData(std::string_view data);

// Column Definition 41 of a text column: VAR_STRING (0xFD), declared length
// 1024, decimals 0x1F; replicas read every value as a string (mysql_fetch_row
// in sql/rpl_replica.cc get_master_version_and_clock).
std::string BuildColumnDefinition(std::string_view name, uint16_t collation = 33);

using TextRow = std::vector<std::optional<std::string>>;

// One text row: string<lenenc> per value, 0xFB for NULL.
std::string BuildTextRow(const TextRow& row);

// COM_STMT_PREPARE's answer header (0x00, statement id, column and
// parameter counts, warnings).
std::string BuildPrepareOk(uint32_t statement_id, uint16_t columns, uint16_t params);

// One binary-protocol row (COM_STMT_EXECUTE) of VAR_STRING columns: 0x00,
// the NULL bitmap (offset 2), then each non-NULL value as string<lenenc>.
std::string BuildBinaryRow(const TextRow& row);

// A whole framed binary result set of VAR_STRING columns, as
// AppendTextResultSet.
void AppendBinaryResultSet(std::string* out, uint8_t* seq, const std::vector<std::string>& columns,
                           const std::vector<TextRow>& rows);

// Appends a whole framed text result set (column count, definitions, EOF,
// rows, EOF) starting at sequence id *seq; *seq is left after the last packet.
void AppendTextResultSet(std::string* out, uint8_t* seq, const std::vector<std::string>& columns,
                         const std::vector<TextRow>& rows);

}  // namespace binrelay::protocol
