// The proxy listener on 127.0.0.1:0 with fake handlers, driven by real
// clients: libmysqlclient (native password), binrelay's own client
// (caching_sha2_password), the `mariadb` CLI and `mariadb-binlog
// --read-from-remote-server` up to its COM_BINLOG_DUMP; plus hostile raw
// sockets next to a healthy connection.
#include "proxy/listener.h"

#include <gtest/gtest.h>
#include <mysql.h>

#include <cstdio>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "protocol/client_connection.h"
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
                     std::chrono::milliseconds read_timeout = std::chrono::seconds(10)) {
    ListenerOptions o;
    o.read_timeout = read_timeout;
    o.session.auth.user = kUser;
    o.session.auth.password = kPassword;
    o.session.auth.plugin = plugin;
    BR_ASSERT_OK_AND_ASSIGN(listener_, Listener::Create(ioc_, o, &admin_, &dump_));
    listener_->Start();
    io_thread_ = std::thread([this] { ioc_.run(); });
  }
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

// binrelay's own client against a caching_sha2_password listener: the
// MySQL 8 fast path end to end.
TEST_F(ProxyListenerTest, CachingSha2FastPathWithBinrelayClient) {
  StartListener("caching_sha2_password");
  protocol::ConnectOptions o;
  o.host = "127.0.0.1";
  o.port = listener_->port();
  o.user = kUser;
  o.password = kPassword;
  o.tls = protocol::ConnectOptions::Tls::kDisabled;
  BR_ASSERT_OK_AND_ASSIGN(auto conn, protocol::ClientConnection::Connect(o));
  EXPECT_EQ(conn->server_info().auth_plugin, "caching_sha2_password");
  BR_ASSERT_OK_AND_ASSIGN(auto r, conn->Query("SHOW MASTER STATUS"));
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0][0], "mysql-bin.000003");
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

// A client that connects and says nothing is closed after the read timeout.
TEST_F(ProxyListenerTest, SilentClientIsClosedAfterReadTimeout) {
  StartListener("mysql_native_password", std::chrono::milliseconds(300));
  asio::io_context local;
  tcp::socket s(local);
  s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), listener_->port()));
  auto start = std::chrono::steady_clock::now();
  boost::system::error_code ec;
  char buf[4096];
  while (!ec) (void)s.read_some(asio::buffer(buf), ec);
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(250));
  EXPECT_LT(waited, std::chrono::seconds(5));
}

}  // namespace
}  // namespace binrelay::proxy
