#include "protocol/handshake.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

constexpr std::string_view kMariaDbCompatPrefix = "5.5.5-";

// The first 32 bytes shared by SSLRequest and HandshakeResponse41. MariaDB
// reads its extended capabilities from the last 4 filler bytes when the
// client does not set CLIENT_MYSQL (bit 0).
void AppendResponsePrefix(std::string* out, uint64_t caps, uint32_t max_packet,
                          uint8_t collation) {
  AppendFixed(out, caps & 0xFFFFFFFF, 4);
  AppendFixed(out, max_packet, 4);
  out->push_back(static_cast<char>(collation));
  out->append(19, '\0');
  AppendFixed(out, (caps & cap::kLongPassword) ? 0 : (caps >> 32), 4);
}

}  // namespace

std::string InitialHandshake::DisplayVersion() const {
  if (is_mariadb && server_version.starts_with(kMariaDbCompatPrefix)) {
    return server_version.substr(kMariaDbCompatPrefix.size());
  }
  return server_version;
}

absl::StatusOr<InitialHandshake> ParseInitialHandshake(std::string_view payload) {
  ByteCursor c(payload);
  InitialHandshake h;
  h.protocol_version = c.U8();
  if (!c.ok()) return c.status("handshake protocol version");
  if (h.protocol_version != 10) {
    return absl::FailedPreconditionError(
        absl::StrCat("server greeting has protocol version ", h.protocol_version,
                     "; only version 10 (MySQL >= 3.21, MariaDB) is supported"));
  }
  h.server_version = std::string(c.NulString());
  h.connection_id = c.U32();
  std::string_view part1 = c.Bytes(8);
  c.Skip(1);  // filler
  uint64_t caps = c.U16();
  if (!c.ok()) return c.status("handshake header");
  h.collation = c.U8();
  h.status_flags = c.U16();
  caps |= uint64_t{c.U16()} << 16;
  uint8_t auth_data_len = c.U8();
  c.Skip(6);
  uint32_t mariadb_ext_caps = c.U32();
  if (!c.ok()) return c.status("handshake capability block");
  // MariaDB >= 10.2 clears CLIENT_MYSQL to announce its extended capabilities.
  if (!(caps & cap::kLongPassword)) caps |= uint64_t{mariadb_ext_caps} << 32;
  h.capabilities = caps;

  h.nonce = std::string(part1);
  if (caps & cap::kSecureConnection) {
    size_t part2_len = std::max<int>(13, int{auth_data_len} - 8);
    std::string_view part2 = c.Bytes(part2_len);
    if (!c.ok()) return c.status("handshake auth-plugin-data part 2");
    // The nonce part is NUL-terminated; the NUL is not part of the nonce.
    if (!part2.empty() && part2.back() == '\0') part2.remove_suffix(1);
    h.nonce.append(part2);
  }
  if (caps & cap::kPluginAuth) {
    // MySQL 5.5.7-5.5.9 sent the name without its NUL terminator.
    std::string_view rest = c.Rest();
    h.auth_plugin = std::string(rest.substr(0, rest.find('\0')));
  }
  h.is_mariadb = absl::StrContains(h.server_version, "MariaDB") || !(caps & cap::kLongPassword);
  return h;
}

std::string BuildSslRequest(uint64_t capabilities, uint32_t max_packet, uint8_t collation) {
  std::string out;
  AppendResponsePrefix(&out, capabilities | cap::kSsl, max_packet, collation);
  return out;
}

absl::StatusOr<std::string> BuildHandshakeResponse(const HandshakeResponse& r) {
  const uint64_t caps = r.capabilities;
  std::string out;
  AppendResponsePrefix(&out, caps, r.max_packet, r.collation);
  out += r.user;
  out.push_back('\0');
  if (caps & cap::kPluginAuthLenencClientData) {
    AppendLenenc(&out, r.auth_response.size());
    out += r.auth_response;
  } else if (caps & cap::kSecureConnection) {
    if (r.auth_response.size() > 255) {
      return absl::InvalidArgumentError(absl::StrCat(
          "auth response of ", r.auth_response.size(),
          " bytes needs PLUGIN_AUTH_LENENC_CLIENT_DATA, which the server did not offer"));
    }
    out.push_back(static_cast<char>(r.auth_response.size()));
    out += r.auth_response;
  } else {
    out += r.auth_response;
    out.push_back('\0');
  }
  if (caps & cap::kConnectWithDb) {
    out += r.database;
    out.push_back('\0');
  }
  if (caps & cap::kPluginAuth) {
    out += r.auth_plugin;
    out.push_back('\0');
  }
  if (caps & cap::kConnectAttrs) {
    std::string attrs;
    for (const auto& [key, value] : r.attributes) {
      AppendLenenc(&attrs, key.size());
      attrs += key;
      AppendLenenc(&attrs, value.size());
      attrs += value;
    }
    AppendLenenc(&out, attrs.size());
    out += attrs;
  }
  return out;
}

}  // namespace binrelay::protocol
