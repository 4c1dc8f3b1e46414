// ClientConnection against a real MariaDB 10.11 (ServerSandbox).
#include "protocol/client_connection.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "protocol/server_error.h"
#include "protocol/text_rows.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/shared_sandbox.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::protocol {
namespace {

using testing::ServerSandbox;

constexpr char kUser[] = "relay";
constexpr char kPassword[] = "s3cret-pw";

class ClientConnectionTest : public testing::SharedSandboxTest<ClientConnectionTest> {
 public:
  static constexpr testing::SandboxAccount kAccount{kUser, kPassword};

 protected:
  ConnectOptions Options(ConnectOptions::Tls tls = ConnectOptions::Tls::kDisabled) {
    ConnectOptions o = sandbox_->ClientOptions(kUser, kPassword);
    o.tls = tls;
    return o;
  }
};

// Guards the whole handshake + mysql_native_password path and ServerInfo.
TEST_F(ClientConnectionTest, NativePasswordConnectsAndReportsServerInfo) {
  BR_ASSERT_OK_AND_ASSIGN(auto conn, ClientConnection::Connect(Options()));
  const ServerInfo& info = conn->server_info();
  EXPECT_TRUE(info.is_mariadb);
  EXPECT_TRUE(absl::StartsWith(info.version, "10.11.")) << info.version;
  EXPECT_EQ(info.auth_plugin, "mysql_native_password");
  EXPECT_FALSE(info.tls);
  EXPECT_GT(info.connection_id, 0u);
  EXPECT_EQ(conn->peer(), absl::StrCat("127.0.0.1:", sandbox_->Port()));
  BR_ASSERT_OK_AND_ASSIGN(QueryResult r, conn->Query("SELECT CURRENT_USER(), CONNECTION_ID()"));
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0][0], "relay@%");
  EXPECT_EQ(r.rows[0][1], std::to_string(info.connection_id));
}

// Guards the typed 1045 error and its operator-facing message.
TEST_F(ClientConnectionTest, WrongPasswordIsPermissionDeniedWithCode1045) {
  ConnectOptions o = Options();
  o.password = "wrong";
  o.credentials_from = "[source] user and password";
  auto conn = ClientConnection::Connect(o);
  ASSERT_FALSE(conn.ok());
  EXPECT_EQ(conn.status().code(), absl::StatusCode::kPermissionDenied);
  std::optional<ServerError> err = GetServerError(conn.status());
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->code, 1045);
  EXPECT_EQ(err->sql_state, "28000");
  EXPECT_TRUE(absl::StrContains(
      conn.status().message(),
      absl::StrCat("access denied for user 'relay' at 127.0.0.1:", sandbox_->Port(),
                   " (error 1045): check the user and password ([source] user and "
                   "password)")))
      << conn.status();
}

// Guards SSLRequest + TLS handshake + auth inside TLS, with certificate checks.
TEST_F(ClientConnectionTest, TlsRequiredWithVerifiedCertificateRunsQueries) {
  ConnectOptions o = Options(ConnectOptions::Tls::kRequired);
  o.tls_ca_file = sandbox_->TlsCaFile();
  BR_ASSERT_OK_AND_ASSIGN(auto conn, ClientConnection::Connect(o));
  EXPECT_TRUE(conn->server_info().tls);
  BR_ASSERT_OK_AND_ASSIGN(QueryResult r, conn->Query("SHOW SESSION STATUS LIKE 'Ssl_cipher'"));
  ASSERT_EQ(r.rows.size(), 1u);
  ASSERT_TRUE(r.rows[0][1].has_value());
  EXPECT_FALSE(r.rows[0][1]->empty()) << "server sees a plain connection";
}

// Guards kPreferred: TLS is used when offered, without verification.
TEST_F(ClientConnectionTest, TlsPreferredUsesTlsWhenOffered) {
  BR_ASSERT_OK_AND_ASSIGN(auto conn,
                          ClientConnection::Connect(Options(ConnectOptions::Tls::kPreferred)));
  EXPECT_TRUE(conn->server_info().tls);
  BR_EXPECT_OK(conn->Ping());
}

// Guards the difference between VERIFY_CA and VERIFY_IDENTITY: "127.1"
// reaches the same server (inet_aton notation) but is not a name the
// certificate holds (IP 127.0.0.1, DNS localhost). Identity checking must
// refuse it; chain checking alone must accept it, over TLS.
TEST_F(ClientConnectionTest, VerifyIdentityChecksTheHostNameVerifyCaOnlyTheChain) {
  ConnectOptions o = Options(ConnectOptions::Tls::kRequired);
  o.host = "127.1";
  o.tls_ca_file = sandbox_->TlsCaFile();
  o.tls_verify_identity = true;
  auto strict = ClientConnection::Connect(o);
  ASSERT_FALSE(strict.ok()) << "a certificate for 127.0.0.1/localhost accepted for 127.1";
  EXPECT_TRUE(absl::StrContains(strict.status().message(), "TLS handshake")) << strict.status();
  EXPECT_TRUE(absl::StrContains(strict.status().message(), "names this host")) << strict.status();
  o.tls_verify_identity = false;
  BR_ASSERT_OK_AND_ASSIGN(auto conn, ClientConnection::Connect(o));
  EXPECT_TRUE(conn->server_info().tls);
  // The chain is still checked: a CA that did not sign it fails.
  o.tls_ca_file = "/etc/ssl/certs/ca-certificates.crt";
  auto wrong_ca = ClientConnection::Connect(o);
  ASSERT_FALSE(wrong_ca.ok());
  EXPECT_TRUE(absl::StrContains(wrong_ca.status().message(), "TLS handshake")) << wrong_ca.status();
}

// Guards certificate verification: a CA that did not sign the cert must fail.
TEST_F(ClientConnectionTest, TlsWithWrongCaFailsVerification) {
  ConnectOptions o = Options(ConnectOptions::Tls::kRequired);
  o.tls_ca_file = "/etc/ssl/certs/ca-certificates.crt";
  auto conn = ClientConnection::Connect(o);
  ASSERT_FALSE(conn.ok());
  EXPECT_EQ(conn.status().code(), absl::StatusCode::kUnavailable) << conn.status();
  EXPECT_TRUE(absl::StrContains(conn.status().message(), "TLS handshake")) << conn.status();
}

// Guards NULL vs empty string and multi-row text results.
TEST_F(ClientConnectionTest, QueryReturnsNullsEmptyStringsAndMultipleRows) {
  BR_ASSERT_OK_AND_ASSIGN(auto conn, ClientConnection::Connect(Options()));
  BR_ASSERT_OK_AND_ASSIGN(
      QueryResult r,
      conn->Query("SELECT 1 AS a, NULL AS b, '' AS c UNION ALL SELECT 2, 'x', NULL "
                  "UNION ALL SELECT 3, NULL, 'yz'"));
  EXPECT_EQ(r.columns, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(r.rows[0][0], "1");
  EXPECT_EQ(r.rows[0][1], std::nullopt);
  EXPECT_EQ(r.rows[0][2], "");
  EXPECT_EQ(r.rows[1][1], "x");
  EXPECT_EQ(r.rows[1][2], std::nullopt);
  EXPECT_EQ(r.rows[2][0], "3");
  EXPECT_EQ(r.rows[2][2], "yz");
}

// Guards QueryRows into a reused buffer (the move's copy reads range after
// range into one): rows or a width left over from the previous result, or
// from a statement that returns no result set.
TEST_F(ClientConnectionTest, QueryRowsIntoAReusedBufferHoldsOnlyTheLastResult) {
  BR_ASSERT_OK_AND_ASSIGN(auto conn, ClientConnection::Connect(Options()));
  TextRows rows;
  BR_ASSERT_OK(conn->QueryRows("SELECT 1, 'wide', NULL UNION ALL SELECT 2, 'x', 'y'", &rows));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows.columns(), 3u);
  BR_ASSERT_OK(conn->QueryRows("SELECT 'a' UNION ALL SELECT NULL UNION ALL SELECT ''", &rows));
  ASSERT_EQ(rows.columns(), 1u);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows.Get(0, 0), "a");
  EXPECT_EQ(rows.Get(1, 0), std::nullopt);
  EXPECT_EQ(rows.Get(2, 0), "");
  EXPECT_EQ(rows.value_bytes(), 1u);
  BR_ASSERT_OK(conn->QueryRows("DO 1", &rows));
  EXPECT_TRUE(rows.empty());
  EXPECT_EQ(rows.value_bytes(), 0u);
}

// Guards OK parsing (affected rows) and empty result sets.
TEST_F(ClientConnectionTest, DmlReportsAffectedRowsAndEmptySelectHasColumns) {
  BR_ASSERT_OK_AND_ASSIGN(auto conn, ClientConnection::Connect(Options()));
  BR_ASSERT_OK(conn->Query("CREATE DATABASE IF NOT EXISTS client_test"));
  BR_ASSERT_OK(conn->Query("CREATE OR REPLACE TABLE client_test.t (id INT PRIMARY KEY)"));
  BR_ASSERT_OK_AND_ASSIGN(QueryResult ins,
                          conn->Query("INSERT INTO client_test.t VALUES (1),(2),(3)"));
  EXPECT_EQ(ins.affected_rows, 3u);
  EXPECT_TRUE(ins.columns.empty());
  BR_ASSERT_OK_AND_ASSIGN(QueryResult sel,
                          conn->Query("SELECT id FROM client_test.t WHERE id > 10"));
  EXPECT_EQ(sel.columns, std::vector<std::string>{"id"});
  EXPECT_TRUE(sel.rows.empty());
}

// Guards SQL errors: typed, with code, and the connection stays usable.
TEST_F(ClientConnectionTest, SqlErrorCarriesCodeAndConnectionSurvives) {
  BR_ASSERT_OK_AND_ASSIGN(auto conn, ClientConnection::Connect(Options()));
  auto r = conn->Query("SELEC 1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(GetServerError(r.status()).has_value());
  EXPECT_EQ(GetServerError(r.status())->code, 1064);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "returned error 1064 (42000)"))
      << r.status();
  BR_EXPECT_OK(conn->Ping());
}

// Guards reassembly of a > 16 MiB result row and splitting of a > 16 MiB query.
TEST_F(ClientConnectionTest, PayloadsOver16MiBRoundTrip) {
  BR_ASSERT_OK_AND_ASSIGN(auto conn, ClientConnection::Connect(Options()));
  BR_ASSERT_OK_AND_ASSIGN(QueryResult big, conn->Query("SELECT REPEAT('x', 17000000)"));
  ASSERT_EQ(big.rows.size(), 1u);
  ASSERT_TRUE(big.rows[0][0].has_value());
  EXPECT_EQ(big.rows[0][0]->size(), 17000000u);
  EXPECT_EQ(big.rows[0][0]->find_first_not_of('x'), std::string::npos);

  std::string sql = "SELECT LENGTH('" + std::string(17000000, 'y') + "')";
  BR_ASSERT_OK_AND_ASSIGN(QueryResult len, conn->Query(sql));
  EXPECT_EQ(len.rows.at(0).at(0), "17000000");
}

// Guards the exact-multiple case: payloads of exactly 0xFFFFFF bytes are
// followed by an empty packet in both directions.
TEST_F(ClientConnectionTest, PayloadsOfExactly0xFFFFFFBytesRoundTrip) {
  BR_ASSERT_OK_AND_ASSIGN(auto conn, ClientConnection::Connect(Options()));
  // Row payload: 0xFD + 3-byte length + n bytes == 0xFFFFFF.
  const size_t n = 0xFFFFFF - 4;
  BR_ASSERT_OK_AND_ASSIGN(QueryResult big, conn->Query(absl::StrCat("SELECT REPEAT('z', ", n, ")")));
  ASSERT_TRUE(big.rows.at(0).at(0).has_value());
  EXPECT_EQ(big.rows[0][0]->size(), n);

  // Command payload: 0x03 + SQL == 0xFFFFFF.
  const std::string head = "SELECT LENGTH('", tail = "')";
  const size_t filler = 0xFFFFFF - 1 - head.size() - tail.size();
  BR_ASSERT_OK_AND_ASSIGN(QueryResult len,
                          conn->Query(head + std::string(filler, 'q') + tail));
  EXPECT_EQ(len.rows.at(0).at(0), std::to_string(filler));
  BR_EXPECT_OK(conn->Ping());
}

// Guards detection of a connection killed on the server side.
TEST_F(ClientConnectionTest, ServerSideKillIsUnavailable) {
  BR_ASSERT_OK_AND_ASSIGN(auto conn, ClientConnection::Connect(Options()));
  BR_ASSERT_OK(sandbox_->Execute(absl::StrCat("KILL ", conn->server_info().connection_id)));
  absl::Status s = conn->Ping();
  if (s.ok()) s = conn->Ping();  // the kill may land after the first ping was answered
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), conn->peer())) << s;
}

// Guards COM_PING and the raw command/packet API the replication session uses.
TEST_F(ClientConnectionTest, PingAndRawCommandAccess) {
  BR_ASSERT_OK_AND_ASSIGN(auto conn, ClientConnection::Connect(Options()));
  BR_EXPECT_OK(conn->Ping());
  BR_ASSERT_OK(conn->WriteCommand(std::string("\x03SELECT 42", 10)));
  BR_ASSERT_OK_AND_ASSIGN(std::string_view count, conn->ReadPacket(std::chrono::seconds(5)));
  EXPECT_EQ(count, std::string_view("\x01", 1));
  for (int i = 0; i < 2; ++i) BR_ASSERT_OK(conn->ReadPacket(std::chrono::seconds(5)));  // def, EOF
  BR_ASSERT_OK_AND_ASSIGN(std::string_view row, conn->ReadPacket(std::chrono::seconds(5)));
  EXPECT_EQ(row, std::string_view("\x02" "42", 3));
  BR_ASSERT_OK_AND_ASSIGN(std::string_view eof, conn->ReadPacket(std::chrono::seconds(5)));
  EXPECT_EQ(static_cast<uint8_t>(eof[0]), 0xFE);
  BR_EXPECT_OK(conn->Ping());
}

// Guards the ReadPacket timeout: DeadlineExceeded, and the connection survives.
TEST_F(ClientConnectionTest, ReadPacketTimeoutIsDeadlineExceededAndRecoverable) {
  BR_ASSERT_OK_AND_ASSIGN(auto conn, ClientConnection::Connect(Options(ConnectOptions::Tls::kRequired)));
  auto start = std::chrono::steady_clock::now();
  auto r = conn->ReadPacket(std::chrono::milliseconds(200));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(190));
  BR_EXPECT_OK(conn->Ping());
}

// Guards CONNECT_WITH_DB.
TEST_F(ClientConnectionTest, ConnectsWithDefaultDatabase) {
  ConnectOptions o = Options();
  o.database = "mysql";
  BR_ASSERT_OK_AND_ASSIGN(auto conn, ClientConnection::Connect(o));
  BR_ASSERT_OK_AND_ASSIGN(QueryResult r, conn->Query("SELECT DATABASE()"));
  EXPECT_EQ(r.rows.at(0).at(0), "mysql");
}

// Guards the connect error for a port nobody listens on.
TEST_F(ClientConnectionTest, ClosedPortIsUnavailableWithPeer) {
  BR_ASSERT_OK_AND_ASSIGN(uint16_t port, testing::FindFreePort());
  ConnectOptions o = Options();
  o.port = port;
  auto conn = ClientConnection::Connect(o);
  ASSERT_FALSE(conn.ok());
  EXPECT_EQ(conn.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(conn.status().message(), absl::StrCat("127.0.0.1:", port)))
      << conn.status();
}

// Guards TLS=required against a server without TLS: a clear FailedPrecondition.
TEST(ClientConnectionNoTlsTest, TlsRequiredAgainstServerWithoutTlsFails) {
  testing::ServerSandboxOptions so;
  so.tls = false;
  BR_ASSERT_OK_AND_ASSIGN(auto sandbox, ServerSandbox::Start(so));
  BR_ASSERT_OK(sandbox->CreateUser(kUser, kPassword));
  ConnectOptions o = sandbox->ClientOptions(kUser, kPassword);
  o.tls = ConnectOptions::Tls::kRequired;
  auto conn = ClientConnection::Connect(o);
  ASSERT_FALSE(conn.ok());
  EXPECT_EQ(conn.status().code(), absl::StatusCode::kFailedPrecondition) << conn.status();
  o.tls = ConnectOptions::Tls::kPreferred;
  BR_ASSERT_OK_AND_ASSIGN(auto plain, ClientConnection::Connect(o));
  EXPECT_FALSE(plain->server_info().tls);
}

}  // namespace
}  // namespace binrelay::protocol
