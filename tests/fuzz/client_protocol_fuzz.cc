// Fuzz target: what a server (the source, a target) sends binrelay's client
// side. The input is a raw byte stream: PacketReader reassembles packets
// (bounded payload), the first is parsed as the greeting, and every packet
// goes to the auth exchange (both with and without TLS, key retrieval
// allowed so the RSA path runs) and to the result-set, error and
// auth-switch parsers, and to TextRows.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/auth.h"
#include "protocol/handshake.h"
#include "protocol/packet_framer.h"
#include "protocol/server_error.h"
#include "protocol/text_resultset.h"
#include "protocol/text_rows.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace binrelay::protocol;
  PacketReader reader(/*max_payload=*/1 << 20, /*min_read_chunk=*/4096);
  char* room = nullptr;
  const size_t n = reader.PrepareWrite(size, &room);
  if (n < size) return 0;
  std::memcpy(room, data, size);
  reader.CommitWrite(size);
  AuthExchange clear("password", /*secure_transport=*/false, RsaKeyPolicy{.allow_retrieval = true});
  AuthExchange tls("password", /*secure_transport=*/true);
  bool clear_live = true, tls_live = true;
  bool first = true;
  std::vector<std::optional<std::string>> row;
  TextRows rows;  // a copy's range, read row by row
  rows.Reset(1 + (size % 8));
  for (int i = 0; i < 64; ++i) {
    auto next = reader.Next();
    if (!next.ok() || !next->has_value()) break;
    std::string_view p = (*next)->payload;
    reader.set_next_seq(static_cast<uint8_t>((*next)->first_seq + (*next)->chunks));
    if (first) {
      first = false;
      auto hs = ParseInitialHandshake(p);
      if (hs.ok()) {
        clear_live = clear.Start(hs->auth_plugin, hs->nonce).ok();
        tls_live = tls.Start(hs->auth_plugin, hs->nonce).ok();
      } else {
        clear_live = clear.Start("caching_sha2_password", "01234567890123456789").ok();
        tls_live = tls.Start("mysql_native_password", "01234567890123456789").ok();
      }
      continue;
    }
    if (!p.empty() && static_cast<uint8_t>(p[0]) == 0xFF) {
      (void)ParseErrPacket(p);
    } else {
      if (clear_live) clear_live = clear.OnServerPacket(p).ok();
      if (tls_live) tls_live = tls.OnServerPacket(p).ok();
    }
    (void)ParseAuthSwitchRequest(p);
    (void)ParseColumnDefinition(p);
    (void)ParseTextRow(p, 1 + (p.size() % 8), &row);
    // A refused row leaves the rows before it whole; every value read
    // back lies within the buffer (ASan checks the view).
    const size_t before = rows.size();
    if (!rows.AppendRow(p).ok() && rows.size() != before) __builtin_trap();
    size_t bytes = 0;
    for (size_t r = 0; r < rows.size(); ++r) {
      for (size_t c = 0; c < rows.columns(); ++c) {
        if (auto v = rows.Get(r, c); v && !v->empty()) {
          bytes += v->size() + static_cast<unsigned char>(v->back());
        }
      }
    }
    if (bytes > (size_t{1} << 40)) __builtin_trap();  // more than the input holds
  }
  return 0;
}
