// Fuzz target: what a client (a replica, mysqlbinlog, any peer on the
// listener) sends binrelay's server side before and after it logs in: the
// handshake response and auth packets (ServerAuth, as each plugin and with
// full authentication), the replication commands (COM_REGISTER_SLAVE,
// COM_BINLOG_DUMP, COM_BINLOG_DUMP_GTID) and the admin SQL parser.
// The first byte picks the plugin; the rest is a stream of packets.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "protocol/packet_framer.h"
#include "protocol/server_packets.h"
#include "proxy/admin_parser.h"
#include "proxy/replication_commands.h"
#include "proxy/server_auth.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace binrelay;
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  ++data;
  --size;
  proxy::AuthOptions o;
  o.user = "repl";
  o.password = (mode & 1) ? "" : "secret";
  o.plugin = (mode & 2) ? "caching_sha2_password" : "mysql_native_password";
  o.secure_transport = (mode & 4) != 0;
  o.tls_available = (mode & 8) != 0;
  // Bit 16: the account is cached (caching_sha2 fast path); otherwise full
  // authentication, over TLS or (bit 32) with the RSA key on a plain link.
  static proxy::Sha2AuthCache* cached = [] {
    auto* c = new proxy::Sha2AuthCache();
    c->Add("repl");
    return c;
  }();
  static proxy::Sha2AuthCache* empty = new proxy::Sha2AuthCache();
  static std::shared_ptr<const proxy::RsaKeyPair>* rsa = [] {
    auto pem = proxy::RsaKeyPair::GeneratePrivatePem();
    auto key = proxy::RsaKeyPair::FromPrivatePem(pem.ok() ? *pem : "", "fuzz key");
    return new std::shared_ptr<const proxy::RsaKeyPair>(key.ok() ? *key : nullptr);
  }();
  o.sha2_cache = (mode & 16) ? cached : empty;
  if (mode & 32) o.rsa_key = *rsa;
  proxy::ServerAuth auth(o);
  (void)auth.Greeting("10.11.6-MariaDB", 7, "01234567890123456789");

  protocol::PacketReader reader(/*max_payload=*/1 << 20, /*min_read_chunk=*/4096);
  char* room = nullptr;
  if (reader.PrepareWrite(size, &room) < size) return 0;
  std::memcpy(room, data, size);
  reader.CommitWrite(size);
  bool authing = true;
  for (int i = 0; i < 64; ++i) {
    auto next = reader.Next();
    if (!next.ok() || !next->has_value()) break;
    std::string_view p = (*next)->payload;
    reader.set_next_seq(static_cast<uint8_t>((*next)->first_seq + (*next)->chunks));
    if (authing) {
      (void)protocol::ParseClientHandshake(p, ~uint64_t{0});
      auto step = auth.OnClientPacket(p);
      if (step.kind == proxy::ServerAuth::Step::Kind::kStartTls) auth.TlsStarted();
      authing = step.kind == proxy::ServerAuth::Step::Kind::kContinue ||
                step.kind == proxy::ServerAuth::Step::Kind::kStartTls;
      continue;
    }
    if (p.empty()) continue;
    const std::string_view body = p.substr(1);
    switch (static_cast<uint8_t>(p[0])) {
      case 0x15: (void)proxy::ParseRegisterSlave(body); break;
      case 0x12: (void)proxy::ParseBinlogDump(body); break;
      case 0x1e: (void)proxy::ParseBinlogDumpGtid(body); break;
      default: (void)proxy::ParseAdminStatement(body); break;
    }
  }
  return 0;
}
