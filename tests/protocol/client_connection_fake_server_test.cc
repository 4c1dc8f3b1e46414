// ClientConnection against a scripted in-process fake MySQL 8 server, for the
// caching_sha2_password paths MariaDB cannot exercise (fast auth, RSA full
// auth). Unit-test only: integration tests use real servers.
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <sys/socket.h>
#include <unistd.h>
#include <gtest/gtest.h>

#include "absl/strings/escaping.h"

#include <functional>
#include <memory>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "protocol/auth.h"
#include "protocol/byte_cursor.h"
#include "protocol/capabilities.h"
#include "protocol/client_connection.h"
#include "protocol/packet_framer.h"
#include "protocol/server_error.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::protocol {
namespace {

constexpr char kNonce[] = "0123456789abcdefghij";

// Blocking helpers for the server side of one connection.
struct ServerSide {
  int fd;
  bool SendPacket(uint8_t seq, std::string_view payload) {
    std::string out;
    AppendFramedPacket(&out, payload, &seq);
    return write(fd, out.data(), out.size()) == static_cast<ssize_t>(out.size());
  }
  bool ReadFull(char* p, size_t n) {
    while (n > 0) {
      ssize_t r = read(fd, p, n);
      if (r <= 0) return false;
      p += r;
      n -= r;
    }
    return true;
  }
  std::optional<std::string> ReadPacket(uint8_t* seq = nullptr) {
    char h[4];
    if (!ReadFull(h, 4)) return std::nullopt;
    size_t len = static_cast<uint8_t>(h[0]) | (static_cast<uint8_t>(h[1]) << 8) |
                 (static_cast<uint8_t>(h[2]) << 16);
    if (seq) *seq = static_cast<uint8_t>(h[3]);
    std::string p(len, '\0');
    if (!ReadFull(p.data(), len)) return std::nullopt;
    return p;
  }
};

std::string Greeting() {
  const uint64_t caps = cap::kClientDefault | cap::kConnectAttrs | cap::kConnectWithDb |
                        cap::kDeprecateEof | cap::kSessionTrack;
  std::string g;
  g.push_back(10);
  g += std::string("8.0.36\0", 7);
  AppendFixed(&g, 77, 4);
  g.append(kNonce, 8);
  g.push_back(0);
  AppendFixed(&g, caps & 0xFFFF, 2);
  g.push_back(static_cast<char>(255));
  AppendFixed(&g, 2, 2);
  AppendFixed(&g, (caps >> 16) & 0xFFFF, 2);
  g.push_back(21);
  g.append(10, '\0');
  g.append(kNonce + 8, 12);
  g.push_back(0);
  g += std::string("caching_sha2_password\0", 22);
  return g;
}

const std::string kOk("\x00\x00\x00\x02\x00\x00\x00", 7);

// Auth response of a HandshakeResponse41 with LENENC client data.
std::string AuthResponseOf(const std::string& response) {
  ByteCursor c(response);
  c.Skip(32);
  c.NulString();
  return std::string(c.LenencString());
}

class FakeServer {
 public:
  explicit FakeServer(std::function<void(ServerSide&)> script) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    listen(listen_fd_, 1);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this, script] {
      int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      ServerSide s{fd};
      script(s);
      close(fd);
    });
  }
  ~FakeServer() {
    shutdown(listen_fd_, SHUT_RDWR);
    thread_.join();
    close(listen_fd_);
  }
  ConnectOptions Options(std::string password) const {
    ConnectOptions o;
    o.port = port_;
    o.user = "repl";
    o.password = std::move(password);
    o.tls = ConnectOptions::Tls::kPreferred;  // the fake offers no TLS
    o.connect_timeout = std::chrono::seconds(5);
    o.io_timeout = std::chrono::seconds(5);
    return o;
  }

 private:
  int listen_fd_;
  uint16_t port_;
  std::thread thread_;
};

// Guards the caching_sha2 fast path end to end: scramble accepted, 01 03,
// OK, then a command with sequence ids restarting at 0.
TEST(ClientConnectionFakeServerTest, CachingSha2FastAuth) {
  std::string got_auth;
  uint8_t ping_seq = 99;
  FakeServer server([&](ServerSide& s) {
    s.SendPacket(0, Greeting());
    auto resp = s.ReadPacket();
    if (!resp) return;
    got_auth = AuthResponseOf(*resp);
    s.SendPacket(2, std::string("\x01\x03", 2));
    s.SendPacket(3, kOk);
    auto ping = s.ReadPacket(&ping_seq);
    if (ping && *ping == "\x0e") s.SendPacket(1, kOk);
  });
  BR_ASSERT_OK_AND_ASSIGN(auto conn, ClientConnection::Connect(server.Options("pw")));
  EXPECT_EQ(conn->server_info().auth_plugin, "caching_sha2_password");
  EXPECT_EQ(conn->server_info().version, "8.0.36");
  EXPECT_FALSE(conn->server_info().is_mariadb);
  EXPECT_FALSE(conn->server_info().tls);
  EXPECT_EQ(conn->server_info().capabilities & cap::kDeprecateEof, 0u);
  BR_EXPECT_OK(conn->Ping());
  EXPECT_EQ(ping_seq, 0);
  EXPECT_EQ(got_auth, CachingSha2Scramble("pw", kNonce));
}

// Guards RSA full authentication over plain TCP end to end: the server
// decrypts what the client sent and finds password XOR nonce.
TEST(ClientConnectionFakeServerTest, CachingSha2FullAuthWithRsaKey) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_RSA_gen(2048), EVP_PKEY_free);
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_PUBKEY(bio.get(), key.get());
  char* pem_data = nullptr;
  long pem_len = BIO_get_mem_data(bio.get(), &pem_data);
  const std::string pem(pem_data, pem_len);

  std::string key_request, decrypted;
  FakeServer server([&](ServerSide& s) {
    s.SendPacket(0, Greeting());
    if (!s.ReadPacket()) return;
    s.SendPacket(2, std::string("\x01\x04", 2));
    uint8_t seq = 0;
    auto req = s.ReadPacket(&seq);
    if (!req || seq != 3) return;
    key_request = *req;
    s.SendPacket(4, "\x01" + pem);
    auto ct = s.ReadPacket(&seq);
    if (!ct || seq != 5) return;
    std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(
        EVP_PKEY_CTX_new(key.get(), nullptr), EVP_PKEY_CTX_free);
    EVP_PKEY_decrypt_init(ctx.get());
    EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_PKCS1_OAEP_PADDING);
    std::string plain(256, '\0');
    size_t n = plain.size();
    if (EVP_PKEY_decrypt(ctx.get(), reinterpret_cast<unsigned char*>(plain.data()), &n,
                         reinterpret_cast<const unsigned char*>(ct->data()), ct->size()) <= 0)
      return;
    plain.resize(n);
    for (size_t i = 0; i < plain.size(); ++i) plain[i] ^= kNonce[i % 20];
    decrypted = plain;
    s.SendPacket(6, kOk);
  });
  ConnectOptions options = server.Options("full-auth-pw");
  options.rsa.allow_retrieval = true;  // get_server_public_key = on
  BR_ASSERT_OK_AND_ASSIGN(auto conn, ClientConnection::Connect(options));
  EXPECT_EQ(key_request, "\x02");
  EXPECT_EQ(decrypted, std::string("full-auth-pw\0", 13));
}

// Guards the pinned key end to end (server_public_key_path): the client
// answers 01 04 with the password encrypted to the pinned key at once (the
// server decrypts it with that key's private half), never asking for a key.
TEST(ClientConnectionFakeServerTest, CachingSha2FullAuthWithPinnedKey) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_RSA_gen(2048), EVP_PKEY_free);
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_PUBKEY(bio.get(), key.get());
  char* pem_data = nullptr;
  long pem_len = BIO_get_mem_data(bio.get(), &pem_data);
  const std::string pem(pem_data, pem_len);

  std::string decrypted;
  FakeServer server([&](ServerSide& s) {
    s.SendPacket(0, Greeting());
    if (!s.ReadPacket()) return;
    s.SendPacket(2, std::string("\x01\x04", 2));
    uint8_t seq = 0;
    auto ct = s.ReadPacket(&seq);
    if (!ct || seq != 3) return;
    std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(
        EVP_PKEY_CTX_new(key.get(), nullptr), EVP_PKEY_CTX_free);
    EVP_PKEY_decrypt_init(ctx.get());
    EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_PKCS1_OAEP_PADDING);
    std::string plain(256, '\0');
    size_t n = plain.size();
    if (EVP_PKEY_decrypt(ctx.get(), reinterpret_cast<unsigned char*>(plain.data()), &n,
                         reinterpret_cast<const unsigned char*>(ct->data()), ct->size()) <= 0)
      return;
    plain.resize(n);
    for (size_t i = 0; i < plain.size(); ++i) plain[i] ^= kNonce[i % 20];
    decrypted = plain;
    s.SendPacket(4, kOk);
  });
  ConnectOptions options = server.Options("pinned-pw");
  options.rsa.pinned_pem = pem;
  BR_ASSERT_OK_AND_ASSIGN(auto conn, ClientConnection::Connect(options));
  EXPECT_EQ(decrypted, std::string("pinned-pw\0", 10));
}

// Guards the default: without TLS, a pinned key or get_server_public_key,
// full authentication is refused before anything about the password is
// sent, and the error says how to proceed.
TEST(ClientConnectionFakeServerTest, CachingSha2FullAuthWithoutTlsOrKeyIsRefused) {
  std::optional<std::string> after;
  absl::StatusOr<std::unique_ptr<ClientConnection>> conn = absl::UnknownError("not run");
  {
    FakeServer server([&](ServerSide& s) {
      s.SendPacket(0, Greeting());
      if (!s.ReadPacket()) return;
      s.SendPacket(2, std::string("\x01\x04", 2));
      after = s.ReadPacket();  // nullopt: the client hung up without replying
    });
    conn = ClientConnection::Connect(server.Options("secret-pw"));
  }  // the server's script has finished
  ASSERT_FALSE(conn.ok());
  EXPECT_EQ(conn.status().code(), absl::StatusCode::kFailedPrecondition) << conn.status();
  EXPECT_NE(conn.status().message().find("server_public_key_path"), std::string::npos)
      << conn.status();
  EXPECT_EQ(conn.status().message().find("secret-pw"), std::string::npos);
  EXPECT_FALSE(after.has_value()) << "the client sent: " << absl::CEscape(after.value_or(""));
}

// Guards the 1045 message on the caching_sha2 path.
TEST(ClientConnectionFakeServerTest, AccessDeniedAfterFullAuthIsPermissionDenied) {
  FakeServer server([&](ServerSide& s) {
    s.SendPacket(0, Greeting());
    if (!s.ReadPacket()) return;
    s.SendPacket(2, std::string("\xff\x15\x04#28000Access denied for user 'repl'@'localhost'", 48));
  });
  auto conn = ClientConnection::Connect(server.Options("bad"));
  ASSERT_FALSE(conn.ok());
  EXPECT_EQ(conn.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(absl::StrContains(conn.status().message(), "access denied for user 'repl' at 127.0.0.1:"))
      << conn.status();
  ASSERT_TRUE(GetServerError(conn.status()).has_value());
  EXPECT_EQ(GetServerError(conn.status())->code, 1045);
}

// Guards EOF mid-stream: ReadPacket reports Unavailable with host:port, and a
// half packet followed by close is not returned as data.
TEST(ClientConnectionFakeServerTest, ServerCloseDuringReadIsUnavailable) {
  FakeServer server([&](ServerSide& s) {
    s.SendPacket(0, Greeting());
    if (!s.ReadPacket()) return;
    s.SendPacket(2, std::string("\x01\x03", 2));
    s.SendPacket(3, kOk);
    s.ReadPacket();  // the client's command
    const char partial[] = {10, 0, 0, 1, 'x'};
    (void)!write(s.fd, partial, sizeof(partial));
  });
  BR_ASSERT_OK_AND_ASSIGN(auto conn, ClientConnection::Connect(server.Options("pw")));
  BR_ASSERT_OK(conn->WriteCommand("\x12"));
  auto p = conn->ReadPacket(std::chrono::seconds(5));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kUnavailable) << p.status();
  EXPECT_TRUE(absl::StrContains(p.status().message(), conn->peer())) << p.status();
}

// Guards the connect timeout: a server that never sends a greeting.
TEST(ClientConnectionFakeServerTest, SilentServerTimesOut) {
  FakeServer server([&](ServerSide& s) { s.ReadPacket(); });
  ConnectOptions o = server.Options("pw");
  o.connect_timeout = std::chrono::milliseconds(300);
  auto conn = ClientConnection::Connect(o);
  ASSERT_FALSE(conn.ok());
  EXPECT_EQ(conn.status().code(), absl::StatusCode::kDeadlineExceeded) << conn.status();
}

}  // namespace
}  // namespace binrelay::protocol
