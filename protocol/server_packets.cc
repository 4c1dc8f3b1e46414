#include "protocol/server_packets.h"

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/packet_framer.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

constexpr size_t kNonceSize = 20;
constexpr size_t kSslRequestSize = 32;

void AppendLenencString(std::string* out, std::string_view s) {
  AppendLenenc(out, s.size());
  out->append(s);
}

// NUL-terminated string that some clients leave unterminated at the very end
// of the packet (old MySQL clients and the schema/plugin fields).
std::string_view LenientNulString(ByteCursor& c) {
  std::string_view rest = c.data().substr(c.position(), c.remaining());
  size_t nul = rest.find('\0');
  if (nul == std::string_view::npos) return c.Rest();
  std::string_view v = c.Bytes(nul);
  c.Skip(1);
  return v;
}

}  // namespace

absl::StatusOr<std::string> BuildInitialHandshake(const ServerGreeting& g) {
  if (g.nonce.size() != kNonceSize || g.nonce.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "handshake nonce must be 20 bytes without NUL, got ", g.nonce.size(), " bytes"));
  }
  std::string out;
  out.push_back('\x0a');
  out.append(g.server_version);
  out.push_back('\0');
  AppendFixed(&out, g.connection_id, 4);
  out.append(g.nonce, 0, 8);
  out.push_back('\0');
  AppendFixed(&out, g.capabilities & 0xFFFF, 2);
  out.push_back(static_cast<char>(g.collation));
  AppendFixed(&out, g.status_flags, 2);
  AppendFixed(&out, g.capabilities >> 16, 2);
  // 21 = 20 nonce bytes + the NUL of part 2.
  out.push_back(static_cast<char>((g.capabilities & cap::kPluginAuth) ? kNonceSize + 1 : 0));
  out.append(10, '\0');
  out.append(g.nonce, 8, kNonceSize - 8);
  out.push_back('\0');
  if (g.capabilities & cap::kPluginAuth) {
    out.append(g.auth_plugin);
    out.push_back('\0');
  }
  return out;
}

absl::StatusOr<ClientHandshake> ParseClientHandshake(std::string_view payload,
                                                     uint64_t server_caps) {
  ByteCursor c(payload);
  ClientHandshake h;
  uint64_t client_caps = c.U32();
  h.max_packet = c.U32();
  h.collation = c.U8();
  c.Skip(23);
  if (!c.ok()) return c.status("client handshake response header");
  if (!(client_caps & cap::kProtocol41)) {
    return absl::FailedPreconditionError(
        "client does not support PROTOCOL_41 (pre-4.1 clients are not supported)");
  }
  h.capabilities = client_caps & server_caps;
  if (payload.size() == kSslRequestSize) {
    if (!(h.capabilities & cap::kSsl)) {
      return absl::OutOfRangeError(
          "client handshake response ends after the 32-byte header without CLIENT_SSL");
    }
    h.ssl_request = true;
    return h;
  }
  h.user = c.NulString();
  if (!c.ok()) return c.status("user name in client handshake response");
  if (h.capabilities & cap::kPluginAuthLenencClientData) {
    h.auth_response = c.LenencString();
  } else if (h.capabilities & cap::kSecureConnection) {
    h.auth_response = c.Bytes(c.U8());
  } else {
    h.auth_response = c.NulString();
  }
  if (!c.ok()) return c.status("auth response in client handshake response");
  if (h.capabilities & cap::kConnectWithDb) h.database = LenientNulString(c);
  if (h.capabilities & cap::kPluginAuth) h.auth_plugin = LenientNulString(c);
  // Connection attributes are not used; they are the rest of the packet.
  return h;
}

std::string BuildOkPacket(uint64_t affected_rows, uint64_t last_insert_id, uint16_t status_flags,
                          uint16_t warnings) {
  std::string out(1, '\0');
  AppendLenenc(&out, affected_rows);
  AppendLenenc(&out, last_insert_id);
  AppendFixed(&out, status_flags, 2);
  AppendFixed(&out, warnings, 2);
  return out;
}

std::string BuildOkPacketWithInfo(std::string_view info) {
  std::string out = BuildOkPacket();
  AppendLenenc(&out, info.size());
  out.append(info);
  return out;
}

std::string BuildErrPacket(uint16_t code, std::string_view sql_state, std::string_view message) {
  std::string out(1, '\xff');
  AppendFixed(&out, code, 2);
  out.push_back('#');
  out.append(sql_state.size() == 5 ? sql_state : std::string_view("HY000"));
  out.append(message);
  return out;
}

std::string BuildEofPacket(uint16_t warnings, uint16_t status_flags) {
  std::string out(1, '\xfe');
  AppendFixed(&out, warnings, 2);
  AppendFixed(&out, status_flags, 2);
  return out;
}

std::string BuildAuthSwitchRequest(std::string_view plugin, std::string_view nonce) {
  std::string out(1, '\xfe');
  out.append(plugin);
  out.push_back('\0');
  out.append(nonce);
  out.push_back('\0');
  return out;
}

std::string BuildAuthMoreData(std::string_view data) {
  std::string out(1, '\x01');
  out.append(data);
  return out;
}

std::string BuildColumnDefinition(std::string_view name, uint16_t collation) {
  std::string out;
  AppendLenencString(&out, "def");
  AppendLenencString(&out, "");  // schema
  AppendLenencString(&out, "");  // table alias
  AppendLenencString(&out, "");  // original table
  AppendLenencString(&out, name);
  AppendLenencString(&out, name);
  out.push_back('\x0c');  // length of the fixed fields
  AppendFixed(&out, collation, 2);
  AppendFixed(&out, 1024, 4);
  out.push_back('\xfd');  // MYSQL_TYPE_VAR_STRING
  AppendFixed(&out, 0, 2);  // flags
  out.push_back('\x1f');    // decimals: "not a fixed-point value"
  out.append(2, '\0');
  return out;
}

std::string BuildTextRow(const TextRow& row) {
  std::string out;
  for (const auto& v : row) {
    if (v) {
      AppendLenencString(&out, *v);
    } else {
      out.push_back('\xfb');
    }
  }
  return out;
}

std::string BuildPrepareOk(uint32_t statement_id, uint16_t columns, uint16_t params) {
  std::string out(1, '\0');
  AppendFixed(&out, statement_id, 4);
  AppendFixed(&out, columns, 2);
  AppendFixed(&out, params, 2);
  out.push_back('\0');     // reserved
  AppendFixed(&out, 0, 2);  // warnings
  return out;
}

std::string BuildBinaryRow(const TextRow& row) {
  std::string out(1, '\0');
  const size_t bitmap_at = out.size();
  out.append((row.size() + 7 + 2) / 8, '\0');
  for (size_t i = 0; i < row.size(); ++i) {
    if (!row[i]) {
      const size_t bit = i + 2;
      out[bitmap_at + bit / 8] = static_cast<char>(out[bitmap_at + bit / 8] | (1 << (bit % 8)));
      continue;
    }
    AppendLenencString(&out, *row[i]);
  }
  return out;
}

void AppendBinaryResultSet(std::string* out, uint8_t* seq, const std::vector<std::string>& columns,
                           const std::vector<TextRow>& rows) {
  std::string count;
  AppendLenenc(&count, columns.size());
  AppendFramedPacket(out, count, seq);
  for (const auto& name : columns) AppendFramedPacket(out, BuildColumnDefinition(name), seq);
  AppendFramedPacket(out, BuildEofPacket(), seq);
  for (const auto& row : rows) AppendFramedPacket(out, BuildBinaryRow(row), seq);
  AppendFramedPacket(out, BuildEofPacket(), seq);
}

void AppendTextResultSet(std::string* out, uint8_t* seq, const std::vector<std::string>& columns,
                         const std::vector<TextRow>& rows) {
  std::string count;
  AppendLenenc(&count, columns.size());
  AppendFramedPacket(out, count, seq);
  for (const auto& name : columns) AppendFramedPacket(out, BuildColumnDefinition(name), seq);
  AppendFramedPacket(out, BuildEofPacket(), seq);
  for (const auto& row : rows) AppendFramedPacket(out, BuildTextRow(row), seq);
  AppendFramedPacket(out, BuildEofPacket(), seq);
}

}  // namespace binrelay::protocol
