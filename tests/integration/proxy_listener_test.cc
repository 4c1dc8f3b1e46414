// The proxy listener on 127.0.0.1:0 with fake handlers, driven by real
// clients: libmysqlclient (native password), binrelay's own client
// (caching_sha2_password), the `mariadb` CLI and `mariadb-binlog
// --read-from-remote-server` up to its COM_BINLOG_DUMP; plus hostile raw
// sockets next to a healthy connection.
#include "proxy/listener.h"
#include "proxy/rsa_key_pair.h"
#include "proxy/sha2_auth_cache.h"

#include <gtest/gtest.h>

#include <functional>
#include <mysql.h>

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <vector>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "protocol/client_connection.h"
#include "replication/dump_commands.h"
#include "tests/harness/status_matchers.h"
#include "tests/proxy/fake_handlers.h"

namespace binrelay::proxy {
namespace {

constexpr char kUser[] = "repl";
constexpr char kPassword[] = "s3cret";

// Runs a shell command with a timeout; returns its combined output.
std::string RunShell(const std::string& cmd) {
  std::string full = absl::StrCat("timeout 30 ", cmd, " 2>&1");
  FILE* f = popen(full.c_str(), "r");
  if (!f) return "<popen failed>";
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  pclose(f);
  return out;
}

class ProxyListenerTest : public ::testing::Test {
 protected:
  void StartListener(std::string plugin = "mysql_native_password",
                     std::chrono::milliseconds read_timeout = std::chrono::seconds(10),
                     std::function<void(ListenerOptions&)> more = nullptr) {
    ListenerOptions o;
    o.read_timeout = read_timeout;
    if (more) more(o);
    o.session.auth.user = kUser;
    o.session.auth.password = kPassword;
    o.session.auth.plugin = plugin;
    BR_ASSERT_OK_AND_ASSIGN(listener_, Listener::Create(ioc_, o, &admin_, &dump_));
    listener_->Start();
    io_thread_ = std::thread([this] { ioc_.run(); });
  }
  Sha2AuthCache sha2_cache_;
  void TearDown() override {
    if (listener_) listener_->Stop();
    ioc_.stop();
    if (io_thread_.joinable()) io_thread_.join();
  }

  // A libmysqlclient connection; nullptr (and *err set) on failure.
  MYSQL* Connect(const char* password, unsigned* err = nullptr, std::string* msg = nullptr) {
    MYSQL* m = mysql_init(nullptr);
    unsigned timeout = 10;
    mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
    mysql_options(m, MYSQL_OPT_READ_TIMEOUT, &timeout);
    if (!mysql_real_connect(m, "127.0.0.1", kUser, password, nullptr, listener_->port(), nullptr,
                            0)) {
      if (err) *err = mysql_errno(m);
      if (msg) *msg = mysql_error(m);
      mysql_close(m);
      return nullptr;
    }
    return m;
  }

  std::optional<std::string> Scalar(MYSQL* m, const char* sql) {
    if (mysql_query(m, sql) != 0) return absl::StrCat("<error ", mysql_errno(m), ">");
    MYSQL_RES* res = mysql_store_result(m);
    if (!res) return "<no result>";
    MYSQL_ROW row = mysql_fetch_row(res);
    std::optional<std::string> v;
    if (row && row[0]) v = row[0];
    mysql_free_result(res);
    return v;
  }

  std::string Cli(const std::string& args) {
    return RunShell(absl::StrCat("mariadb --protocol=tcp -h127.0.0.1 -P", listener_->port(), " -u",
                            kUser, " -p", kPassword, " ", args));
  }

  asio::io_context ioc_;
  fakes::FakeAdminHandler admin_;
  fakes::FakeDumpHandler dump_;
  std::unique_ptr<Listener> listener_;
  std::thread io_thread_;
};

// The whole path through a real client library: handshake, native auth,
// result sets, ERR that keeps the session, ping.
TEST_F(ProxyListenerTest, LibmysqlclientNativePasswordAndQueries) {
  StartListener();
  MYSQL* m = Connect(kPassword);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Scalar(m, "SELECT @@server_id"), "7");
  EXPECT_EQ(Scalar(m, "SELECT @@gtid_binlog_pos"), "0-1-100");
  EXPECT_NE(mysql_query(m, "SHOW TABLES"), 0);
  EXPECT_EQ(mysql_errno(m), 1235u);
  EXPECT_EQ(Scalar(m, "SELECT 1"), "1");  // still usable
  EXPECT_EQ(mysql_query(m, "SET @master_binlog_checksum='NONE'"), 0);
  EXPECT_EQ(Scalar(m, "SELECT @master_binlog_checksum"), "NONE");
  EXPECT_EQ(mysql_ping(m), 0);
  mysql_close(m);
}

// A wrong password is error 1045 at the client.
TEST_F(ProxyListenerTest, WrongPasswordIs1045) {
  StartListener();
  unsigned err = 0;
  std::string msg;
  EXPECT_EQ(Connect("wrong", &err, &msg), nullptr);
  EXPECT_EQ(err, 1045u) << msg;
  EXPECT_NE(msg.find("Access denied for user 'repl'@'127.0.0.1'"), std::string::npos) << msg;
}

// binrelay's own client against a caching_sha2_password listener, as a
// MySQL 8+ client meets mysqld: the first login authenticates in full (here
// with the RSA key, no TLS), later ones by the fast path from the cache.
TEST_F(ProxyListenerTest, CachingSha2FullThenFastPathWithBinrelayClient) {
  auto pem = RsaKeyPair::GeneratePrivatePem();
  ASSERT_TRUE(pem.ok()) << pem.status();
  auto key = RsaKeyPair::FromPrivatePem(*pem, "test key");
  ASSERT_TRUE(key.ok()) << key.status();
  StartListener("caching_sha2_password", std::chrono::seconds(10), [&](ListenerOptions& l) {
    l.session.auth.sha2_cache = &sha2_cache_;
    l.session.auth.rsa_key = *key;
  });
  protocol::ConnectOptions o;
  o.host = "127.0.0.1";
  o.port = listener_->port();
  o.user = kUser;
  o.password = kPassword;
  o.tls = protocol::ConnectOptions::Tls::kDisabled;
  // Not cached and no key allowed: refused, as mysqld refuses it.
  EXPECT_FALSE(protocol::ClientConnection::Connect(o).ok());
  o.rsa.allow_retrieval = true;
  BR_ASSERT_OK_AND_ASSIGN(auto conn, protocol::ClientConnection::Connect(o));
  EXPECT_EQ(conn->server_info().auth_plugin, "caching_sha2_password");
  BR_ASSERT_OK_AND_ASSIGN(auto r, conn->Query("SHOW MASTER STATUS"));
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0][0], "mysql-bin.000003");
  o.rsa.allow_retrieval = false;  // cached now: the fast path needs no key
  BR_EXPECT_OK(protocol::ClientConnection::Connect(o).status());
  o.password = "bad";
  auto bad = protocol::ClientConnection::Connect(o);
  EXPECT_FALSE(bad.ok());
}

// The mariadb CLI: its startup queries and admin statements.
TEST_F(ProxyListenerTest, MariadbCliRunsAdminStatements) {
  StartListener();
  std::string out = Cli("-N -B -e 'SELECT @@server_id; SHOW BINARY LOGS'");
  EXPECT_NE(out.find("7\n"), std::string::npos) << out;
  EXPECT_NE(out.find("mysql-bin.000002\t500"), std::string::npos) << out;
  std::string bad = RunShell(absl::StrCat("mariadb --protocol=tcp -h127.0.0.1 -P", listener_->port(),
                                     " -u", kUser, " -pwrong -e 'SELECT 1'"));
  EXPECT_NE(bad.find("1045"), std::string::npos) << bad;
}

// mariadb-binlog sends its setup statements and COM_BINLOG_DUMP with the
// file and position asked for, non-blocking without --stop-never.
TEST_F(ProxyListenerTest, MariadbBinlogReachesDumpWithFileAndPosition) {
  StartListener();
  std::string out = RunShell(absl::StrCat(
      "mariadb-binlog --read-from-remote-server --protocol=tcp -h127.0.0.1 -P", listener_->port(),
      " -u", kUser, " -p", kPassword, " --start-position=1234 mysql-bin.000003"));
  auto reqs = dump_.requests();
  ASSERT_EQ(reqs.size(), 1u) << out;
  EXPECT_EQ(reqs[0].kind, DumpRequest::Kind::kFilePosition);
  EXPECT_EQ(reqs[0].file, "mysql-bin.000003");
  EXPECT_EQ(reqs[0].position, 1234u);
  EXPECT_EQ(reqs[0].server_id, 0u);  // mariadb-binlog's default: not a replica
  EXPECT_TRUE(reqs[0].NonBlocking());
  // NON_BLOCK (no --stop-never) | MariaDB's BINLOG_SEND_ANNOTATE_ROWS_EVENT.
  EXPECT_EQ(reqs[0].flags, 0x03);
  EXPECT_EQ(reqs[0].settings.checksum, "NONE") << out;
  EXPECT_EQ(reqs[0].settings.mariadb_capability, 4) << out;
}

// With --stop-never and a connection server id it is a blocking dump.
TEST_F(ProxyListenerTest, MariadbBinlogStopNeverSendsServerIdAndBlocks) {
  StartListener();
  std::string out = RunShell(absl::StrCat(
      "mariadb-binlog --read-from-remote-server --protocol=tcp -h127.0.0.1 -P", listener_->port(),
      " -u", kUser, " -p", kPassword,
      " --stop-never --stop-never-slave-server-id=4242 --start-position=4 mysql-bin.000002"));
  auto reqs = dump_.requests();
  ASSERT_EQ(reqs.size(), 1u) << out;
  EXPECT_EQ(reqs[0].file, "mysql-bin.000002");
  EXPECT_EQ(reqs[0].position, 4u);
  EXPECT_EQ(reqs[0].server_id, 4242u);
  EXPECT_EQ(reqs[0].flags, 0x02);  // ANNOTATE_ROWS only: a blocking dump
  EXPECT_FALSE(reqs[0].NonBlocking());
}

// Raw hostile clients get an error or a close; a healthy connection opened
// before them keeps working afterwards, and nothing crashes.
TEST_F(ProxyListenerTest, HostileClientsDoNotDisturbAHealthyOne) {
  StartListener();
  MYSQL* healthy = Connect(kPassword);
  ASSERT_NE(healthy, nullptr);

  auto raw_session = [&](const std::string& bytes) {
    asio::io_context local;
    tcp::socket s(local);
    boost::system::error_code ec;
    s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), listener_->port()), ec);
    EXPECT_FALSE(ec) << ec.message();
    char buf[4096];
    (void)s.read_some(asio::buffer(buf), ec);  // greeting
    // Write, then half-close: a server waiting for the rest of a packet sees
    // EOF instead of waiting for its read timeout.
    boost::system::error_code wec;
    asio::write(s, asio::buffer(bytes), wec);
    s.shutdown(tcp::socket::shutdown_send, wec);
    std::string reply;
    while (!ec) {
      size_t n = s.read_some(asio::buffer(buf), ec);
      reply.append(buf, n);
    }
    // The server closed the connection (EOF or reset), after at most an ERR.
    EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset) << ec.message();
    return reply;
  };
  std::string junk(1000, '\0');
  for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<char>((i * 7919 + 13) % 251);
  raw_session(junk);
  std::string giant = raw_session(std::string("\xff\xff\xff\x01", 4) + std::string(4096, 'x'));
  ASSERT_GE(giant.size(), 7u);
  EXPECT_EQ(static_cast<uint8_t>(giant[4]), 0xFF);
  EXPECT_EQ(static_cast<uint8_t>(giant[5]) | static_cast<uint8_t>(giant[6]) << 8, 1153);
  raw_session(std::string("\x10\x00\x00\x01\x85\xa6", 6));  // truncated handshake, then EOF

  EXPECT_EQ(Scalar(healthy, "SELECT @@server_id"), "7");
  mysql_close(healthy);
}

// Guards: a client that connects and says nothing (or trickles bytes, one
// every 100 ms, which re-arming a per-read timeout would never stop) holding
// a connection beyond the authentication deadline; it gets
// ER_HANDSHAKE_ERROR and the close.
TEST_F(ProxyListenerTest, SilentOrTricklingClientIsClosedAtTheAuthDeadline) {
  StartListener("mysql_native_password", std::chrono::seconds(10), [](ListenerOptions& o) {
    o.auth_timeout = std::chrono::milliseconds(600);
  });
  for (bool trickle : {false, true}) {
    asio::io_context local;
    tcp::socket s(local);
    auto start = std::chrono::steady_clock::now();  // before connect: the deadline runs from accept
    s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), listener_->port()));
    boost::system::error_code ec;
    std::string got;
    char buf[4096];
    size_t n = s.read_some(asio::buffer(buf), ec);  // the greeting
    ASSERT_FALSE(ec);
    (void)n;
    s.non_blocking(true);
    // Up to 30 s: a deadline re-armed by each byte would never close it.
    for (int i = 0; i < 300 && !ec; ++i) {
      if (trickle) asio::write(s, asio::buffer("\x01", 1), ec);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      size_t m = s.read_some(asio::buffer(buf), ec);
      if (ec == asio::error::would_block) {
        ec = {};
      } else if (!ec) {
        got.append(buf, m);
      }
    }
    auto waited = std::chrono::steady_clock::now() - start;
    EXPECT_TRUE(ec) << "still open after 30 s; trickle " << trickle;
    EXPECT_GE(waited, std::chrono::milliseconds(600)) << trickle;
    // Well before the 10 s read timeout and default auth_timeout: the
    // configured 600 ms deadline is what closed it.
    EXPECT_LT(waited, std::chrono::seconds(8)) << trickle;
    // Unless the trickled bytes made a packet of their own, the last word is
    // ER_HANDSHAKE_ERROR (1043).
    ASSERT_GE(got.size(), 7u) << trickle;
    EXPECT_EQ(static_cast<uint8_t>(got[4]), 0xFF) << trickle;
    EXPECT_EQ(static_cast<uint8_t>(got[5]) | static_cast<uint8_t>(got[6]) << 8, 1043) << trickle;
  }
}

// Guards: max_connections not enforced (every connection holds memory and a
// descriptor) or enforced silently: one too many gets ER_CON_COUNT_ERROR
// (1040) as its first packet, and a freed slot serves again.
TEST_F(ProxyListenerTest, OneConnectionTooManyGetsTooManyConnections) {
  StartListener("mysql_native_password", std::chrono::seconds(10),
                [](ListenerOptions& o) { o.max_connections = 2; });
  asio::io_context local;
  auto open = [&] {
    auto s = std::make_unique<tcp::socket>(local);
    s->connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), listener_->port()));
    char buf[512];
    boost::system::error_code ec;
    size_t n = s->read_some(asio::buffer(buf), ec);
    return std::make_pair(std::move(s), std::string(buf, ec ? 0 : n));
  };
  auto a = open();
  auto b = open();
  EXPECT_EQ(static_cast<uint8_t>(a.second[4]), 10) << "a greeting (protocol 10)";
  EXPECT_EQ(static_cast<uint8_t>(b.second[4]), 10);
  auto c = open();
  ASSERT_GE(c.second.size(), 7u);
  EXPECT_EQ(static_cast<uint8_t>(c.second[4]), 0xFF);
  EXPECT_EQ(static_cast<uint8_t>(c.second[5]) | static_cast<uint8_t>(c.second[6]) << 8, 1040);
  EXPECT_EQ(listener_->refused_connections(), 1u);
  a.first->close();
  for (int i = 0; i < 1500 && listener_->open_connections() > 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  MYSQL* m = Connect(kPassword);
  ASSERT_NE(m, nullptr);
  mysql_close(m);
}

// Guards: an authenticated client that goes quiet kept forever, and a
// packet that stalls half-way kept until the idle timeout instead of the
// read timeout.
TEST_F(ProxyListenerTest, IdleAndStalledClientsAreClosed) {
  // 3 s: the login and the first query must fit in it under a sanitizer.
  StartListener("mysql_native_password", std::chrono::milliseconds(400), [](ListenerOptions& o) {
    o.idle_timeout = std::chrono::seconds(3);
  });
  MYSQL* m = Connect(kPassword);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Scalar(m, "SELECT 1"), "1");
  const auto idle_since = std::chrono::steady_clock::now();
  for (int i = 0; i < 300 && listener_->open_connections() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(listener_->open_connections(), 0u) << "still open 30 s after its last command";
  EXPECT_GE(std::chrono::steady_clock::now() - idle_since, std::chrono::milliseconds(2500));
  EXPECT_NE(mysql_query(m, "SELECT 1"), 0) << "closed after idle_timeout";
  mysql_close(m);
}

// Guards a dump whose replica vanished keeping its stream (its store pin
// and registry entry) until the next commit, which on an idle source with
// heartbeats off may be never: a reader beside the dump notices the close.
TEST_F(ProxyListenerTest, ClosedDumpClientIsNoticedWithoutANewEvent) {
  dump_.set_hold(true);
  StartListener();
  protocol::ConnectOptions o;
  o.port = listener_->port();
  o.user = kUser;
  o.password = kPassword;
  o.tls = protocol::ConnectOptions::Tls::kDisabled;
  {
    BR_ASSERT_OK_AND_ASSIGN(auto conn, protocol::ClientConnection::Connect(o));
    BR_ASSERT_OK(conn->WriteCommand(replication::BuildBinlogDump(77, "mysql-bin.000001", 4, 0)));
    for (int i = 0; i < 1500 && dump_.live() == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_EQ(dump_.live(), 1) << "the dump started";
  }  // the client closes its socket
  for (int i = 0; i < 1500 && dump_.live() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(dump_.live(), 0) << "the dump still holds its stream";
  for (int i = 0; i < 1500 && listener_->open_connections() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(listener_->open_connections(), 0u);
}

// Guards: an exception escaping a connection (a handler threw) leaving the
// connection listed and its replica registered (the cleanup was not
// exception-safe).
TEST_F(ProxyListenerTest, AConnectionEndedByAnExceptionLeavesNoTrace) {
  StartListener();
  protocol::ConnectOptions o;
  o.port = listener_->port();
  o.user = kUser;
  o.password = kPassword;
  o.tls = protocol::ConnectOptions::Tls::kDisabled;
  BR_ASSERT_OK_AND_ASSIGN(auto conn, protocol::ClientConnection::Connect(o));
  replication::RegisterReplica reg;
  reg.server_id = 31;
  BR_ASSERT_OK(conn->WriteCommand(replication::BuildRegisterSlave(reg)));
  BR_ASSERT_OK(conn->ReadPacket(std::chrono::seconds(5)).status());
  admin_.throw_on("explode");
  EXPECT_FALSE(conn->Query("SELECT @@explode").ok()) << "the connection ends";
  for (int i = 0; i < 1500 && listener_->open_connections() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(listener_->open_connections(), 0u);
  EXPECT_EQ(admin_.disconnected(), 1) << "the replica left SHOW SLAVE HOSTS";
  admin_.throw_on("");
  MYSQL* again = Connect(kPassword);
  ASSERT_NE(again, nullptr) << "the listener still serves";
  EXPECT_EQ(Scalar(again, "SELECT 1"), "1");
  mysql_close(again);
}

// Guards the accept loop spinning at 100% CPU, logging every failure, while
// the process has no descriptors left (EMFILE): it backs off, and accepts
// the waiting clients once descriptors are free again.
TEST_F(ProxyListenerTest, AcceptBacksOffWhenOutOfDescriptors) {
#ifdef __SANITIZE_ADDRESS__
  // The sanitizer runtime probes memory through a pipe (sanitizer_common's
  // IsAccessibleMemoryRange) when UBSan checks a vptr; in a process without
  // free descriptors that probe fails and UBSan reports every virtual call
  // as a bad object. The release build runs this test.
  GTEST_SKIP() << "needs a process without free descriptors, which the sanitizer runtime "
                  "cannot run in";
#endif
  StartListener();
  asio::io_context local;
  std::vector<std::unique_ptr<tcp::socket>> clients;
  for (int i = 0; i < 3; ++i) {
    clients.push_back(std::make_unique<tcp::socket>(local));
    clients.back()->open(tcp::v4());
  }
  // A new descriptor takes the lowest free number (dup() finds it): below
  // it everything is open, so a limit there leaves none.
  const int lowest_free = ::dup(0);
  ASSERT_GE(lowest_free, 0);
  ::close(lowest_free);
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit tight = saved;
  tight.rlim_cur = static_cast<rlim_t>(lowest_free);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &tight), 0);
  for (auto& c : clients) {
    c->connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), listener_->port()));
  }
  {
    // The accept really fails now: nothing reaches a client meanwhile.
    clients[0]->non_blocking(true);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    char probe[16];
    boost::system::error_code ec;
    clients[0]->read_some(asio::buffer(probe), ec);
    EXPECT_EQ(ec, asio::error::would_block) << "a greeting came without descriptors";
    clients[0]->non_blocking(false);
  }
  auto cpu = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  };
  const double before = cpu();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double used = cpu() - before;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  EXPECT_LT(used, 0.3) << "CPU seconds spent in one second without descriptors";
  // Descriptors back: every waiting client gets its greeting.
  for (auto& c : clients) {
    char buf[512];
    boost::system::error_code ec;
    size_t n = c->read_some(asio::buffer(buf), ec);
    ASSERT_FALSE(ec) << ec.message();
    ASSERT_GT(n, 4u);
    EXPECT_EQ(static_cast<uint8_t>(buf[4]), 10);
  }
}

}  // namespace
}  // namespace binrelay::proxy
