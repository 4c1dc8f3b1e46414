// ServerSession driven by scripted client packets: authentication, every
// statement form and replication commands (hostile input:
// server_session_hostile_test.cc).
#include "proxy/server_session.h"

#include <gtest/gtest.h>

#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "replication/dump_commands.h"
#include "tests/harness/erlang_terms.h"
#include "tests/harness/fixtures.h"
#include "proxy/rsa_key_pair.h"
#include "tests/proxy/session_fixture.h"

namespace binrelay::proxy {
namespace {

using namespace session_test;  // NOLINT: the fixture and its helpers

// --- Greeting and authentication -----------------------------------------

// Guards what replicas check first: version string, plugin and a 20-byte nonce.
TEST_F(SessionTest, GreetingIsMariaDbFlavouredWithNativePlugin) {
  NewSession();
  EXPECT_EQ(greeting_.server_version, "5.5.5-10.11.0-binrelay");
  EXPECT_EQ(greeting_.auth_plugin, "mysql_native_password");
  EXPECT_EQ(greeting_.nonce.size(), 20u);
  EXPECT_EQ(greeting_.nonce.find('\0'), std::string::npos);
}

// MySQL 8 style: no "5.5.5-" prefix, caching_sha2 announced; VERSION()
// returns the string unchanged (only MariaDB's prefix is stripped).
TEST_F(SessionTest, MySqlStyleVersionAndCachingSha2Plugin) {
  base_options_.server_version = "8.0.36-binrelay";
  AuthOptions a;
  a.user = kUser;
  a.password = kPassword;
  a.plugin = "caching_sha2_password";
  a.sha2_cache = &sha2_cache_;
  sha2_cache_.Add(kUser);
  NewSession(a);
  EXPECT_EQ(greeting_.server_version, "8.0.36-binrelay");
  EXPECT_EQ(greeting_.auth_plugin, "caching_sha2_password");
  auto r = Send(Response("caching_sha2_password",
                         protocol::CachingSha2Scramble(kPassword, greeting_.nonce)),
                1);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(Scalar("SELECT VERSION()"), "8.0.36-binrelay");
}

// Two sessions must not share a nonce (a replayed token would authenticate).
TEST_F(SessionTest, EachSessionGetsAFreshNonce) {
  NewSession();
  std::string first = greeting_.nonce;
  NewSession();
  EXPECT_NE(first, greeting_.nonce);
}

// The basic login path with the right scramble; OK carries sequence id 2.
TEST_F(SessionTest, NativePasswordAccepted) {
  NewSession();
  auto r = Send(Response("mysql_native_password",
                         protocol::NativePasswordScramble(kPassword, greeting_.nonce)),
                1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].seq, 2);
  EXPECT_EQ(protocol::ClassifyResponse(r[0].payload), protocol::ResponseKind::kOk);
  EXPECT_EQ(session_->state(), ServerSession::State::kCommand);
  EXPECT_EQ(session_->user(), kUser);
}

// A wrong password must be ER_ACCESS_DENIED_ERROR 1045 / 28000 and close.
TEST_F(SessionTest, WrongNativePasswordIsAccessDenied) {
  NewSession();
  absl::Status st;
  auto r = Send(Response("mysql_native_password",
                         protocol::NativePasswordScramble("wrong", greeting_.nonce)),
                1, &st);
  ASSERT_EQ(r.size(), 1u);
  BR_ASSERT_OK_AND_ASSIGN(auto err, protocol::ParseErrPacket(r[0].payload));
  EXPECT_EQ(err.code, 1045);
  EXPECT_EQ(err.sql_state, "28000");
  EXPECT_EQ(err.message, "Access denied for user 'repl'@'localhost' (using password: YES)");
  EXPECT_TRUE(absl::IsPermissionDenied(st)) << st;
  EXPECT_EQ(session_->state(), ServerSession::State::kClosed);
}

// Only the configured user may log in, even with the right password.
TEST_F(SessionTest, OtherUserIsAccessDenied) {
  NewSession();
  auto r = Send(Response("mysql_native_password",
                         protocol::NativePasswordScramble(kPassword, greeting_.nonce), "root"),
                1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(ErrCode(r[0]), 1045);
  EXPECT_EQ(session_->state(), ServerSession::State::kClosed);
}

// An empty token is "using password: NO" and denied when a password is set.
TEST_F(SessionTest, EmptyTokenIsDeniedWithUsingPasswordNo) {
  NewSession();
  auto r = Send(Response("mysql_native_password", ""), 1);
  ASSERT_EQ(r.size(), 1u);
  BR_ASSERT_OK_AND_ASSIGN(auto err, protocol::ParseErrPacket(r[0].payload));
  EXPECT_EQ(err.code, 1045);
  EXPECT_NE(err.message.find("using password: NO"), std::string::npos) << err.message;
}

// MySQL 8 replicas answer for caching_sha2: once the account is cached the
// fast path is 01 03 then OK.
TEST_F(SessionTest, CachingSha2FastPathAccepted) {
  sha2_cache_.Add(kUser);
  NewSession();
  auto r = Send(Response("caching_sha2_password",
                         protocol::CachingSha2Scramble(kPassword, greeting_.nonce)),
                1);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].payload, std::string("\x01\x03", 2));
  EXPECT_EQ(r[0].seq, 2);
  EXPECT_EQ(protocol::ClassifyResponse(r[1].payload), protocol::ResponseKind::kOk);
  EXPECT_EQ(r[1].seq, 3);
  EXPECT_EQ(session_->state(), ServerSession::State::kCommand);
}

TEST_F(SessionTest, CachingSha2WrongPasswordIsAccessDenied) {
  sha2_cache_.Add(kUser);
  NewSession();
  auto r = Send(Response("caching_sha2_password",
                         protocol::CachingSha2Scramble("nope", greeting_.nonce)),
                1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(ErrCode(r[0]), 1045);
}

// An account not yet cached (binrelay just started) must authenticate in
// full even with the right scramble, as with mysqld: 01 04 instead of 01 03.
// Guards against a fast path that would skip what a restarted mysqld asks.
TEST_F(SessionTest, CachingSha2UncachedAccountNeedsFullAuthentication) {
  NewSession();
  auto r = Send(Response("caching_sha2_password",
                         protocol::CachingSha2Scramble(kPassword, greeting_.nonce)),
                1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].payload, std::string("\x01\x04", 2));
  EXPECT_EQ(session_->state(), ServerSession::State::kAuth);
}

// Full authentication over a secure transport: 01 04, clear password + NUL,
// OK; the account is then cached and the next login takes the fast path.
TEST_F(SessionTest, CachingSha2FullAuthOverSecureTransportCachesTheAccount) {
  AuthOptions a;
  a.user = kUser;
  a.password = kPassword;
  a.secure_transport = true;
  a.sha2_cache = &sha2_cache_;
  NewSession(a);
  auto r = Send(Response("caching_sha2_password",
                         protocol::CachingSha2Scramble(kPassword, greeting_.nonce)),
                1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].payload, std::string("\x01\x04", 2));
  auto ok = Send(std::string(kPassword) + '\0', 3);
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].seq, 4);
  EXPECT_EQ(protocol::ClassifyResponse(ok[0].payload), protocol::ResponseKind::kOk);
  EXPECT_TRUE(sha2_cache_.Contains(kUser));

  a.secure_transport = false;
  NewSession(a);
  auto fast = Send(Response("caching_sha2_password",
                            protocol::CachingSha2Scramble(kPassword, greeting_.nonce)),
                   1);
  ASSERT_EQ(fast.size(), 2u);
  EXPECT_EQ(fast[0].payload, std::string("\x01\x03", 2));
}

// A wrong clear password over TLS is denied and does not enter the cache.
TEST_F(SessionTest, CachingSha2FullAuthWrongPasswordIsDeniedAndNotCached) {
  AuthOptions a;
  a.user = kUser;
  a.password = kPassword;
  a.secure_transport = true;
  a.sha2_cache = &sha2_cache_;
  NewSession(a);
  Send(Response("caching_sha2_password", protocol::CachingSha2Scramble("nope", greeting_.nonce)),
       1);
  auto r = Send(std::string("nope") + '\0', 3);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(ErrCode(r[0]), 1045);
  EXPECT_FALSE(sha2_cache_.Contains(kUser));
}

// Without TLS and without an RSA key: a clear ERR that names TLS, not a hang.
TEST_F(SessionTest, CachingSha2FullAuthWithoutTlsOrRsaKeyIsClearError) {
  NewSession();
  Send(Response("caching_sha2_password", protocol::CachingSha2Scramble(kPassword, greeting_.nonce)),
       1);
  auto r = Send("\x02", 3);  // request the public key
  ASSERT_EQ(r.size(), 1u);
  BR_ASSERT_OK_AND_ASSIGN(auto err, protocol::ParseErrPacket(r[0].payload));
  EXPECT_EQ(err.code, 1251);
  EXPECT_NE(err.message.find("TLS"), std::string::npos);
  EXPECT_EQ(session_->state(), ServerSession::State::kClosed);
}

class RsaSessionTest : public SessionTest {
 protected:
  static void SetUpTestSuite() {
    auto pem = RsaKeyPair::GeneratePrivatePem();
    ASSERT_TRUE(pem.ok()) << pem.status();
    auto key = RsaKeyPair::FromPrivatePem(*pem, "test key");
    ASSERT_TRUE(key.ok()) << key.status();
    key_ = new std::shared_ptr<const RsaKeyPair>(*key);
  }
  void NewRsaSession() {
    AuthOptions a;
    a.user = kUser;
    a.password = kPassword;
    a.sha2_cache = &sha2_cache_;
    a.rsa_key = *key_;
    NewSession(a);
    auto r = Send(Response("caching_sha2_password",
                           protocol::CachingSha2Scramble(kPassword, greeting_.nonce)),
                  1);
    ASSERT_EQ(r.size(), 1u);
    ASSERT_EQ(r[0].payload, std::string("\x01\x04", 2));
  }
  static inline std::shared_ptr<const RsaKeyPair>* key_ = nullptr;
};

// The RSA exchange on a plain connection (mysql --get-server-public-key,
// GET_SOURCE_PUBLIC_KEY=1): 02 asks for the key, which comes back as PEM in
// AuthMoreData; the password encrypted to it logs in and caches the account.
TEST_F(RsaSessionTest, PublicKeyRequestThenEncryptedPasswordLogsIn) {
  NewRsaSession();
  auto key = Send("\x02", 3);
  ASSERT_EQ(key.size(), 1u);
  ASSERT_FALSE(key[0].payload.empty());
  EXPECT_EQ(key[0].payload[0], '\x01');
  const std::string pem = key[0].payload.substr(1);
  EXPECT_EQ(pem, (*key_)->public_pem());
  BR_ASSERT_OK_AND_ASSIGN(std::string cipher,
                          protocol::CachingSha2RsaEncrypt(kPassword, greeting_.nonce, pem));
  auto ok = Send(cipher, 5);
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(protocol::ClassifyResponse(ok[0].payload), protocol::ResponseKind::kOk);
  EXPECT_TRUE(sha2_cache_.Contains(kUser));
}

// A client with the key pinned (--server-public-key-path) sends the
// ciphertext at once, without asking for the key.
TEST_F(RsaSessionTest, PinnedKeyCiphertextWithoutRequestLogsIn) {
  NewRsaSession();
  BR_ASSERT_OK_AND_ASSIGN(std::string cipher, protocol::CachingSha2RsaEncrypt(
                                                  kPassword, greeting_.nonce, (*key_)->public_pem()));
  auto ok = Send(cipher, 3);
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(protocol::ClassifyResponse(ok[0].payload), protocol::ResponseKind::kOk);
}

// The wrong password, a ciphertext under another nonce (a replay) and bytes
// that are no ciphertext at all are each denied, never accepted or crashed on.
TEST_F(RsaSessionTest, WrongPasswordReplayOrGarbageCiphertextIsDenied) {
  const std::string pem = (*key_)->public_pem();
  NewRsaSession();
  BR_ASSERT_OK_AND_ASSIGN(std::string wrong,
                          protocol::CachingSha2RsaEncrypt("nope", greeting_.nonce, pem));
  EXPECT_EQ(ErrCode(Send(wrong, 3).at(0)), 1045);

  NewRsaSession();
  BR_ASSERT_OK_AND_ASSIGN(std::string replay, protocol::CachingSha2RsaEncrypt(
                                                  kPassword, "another-nonce-0123456", pem));
  EXPECT_EQ(ErrCode(Send(replay, 3).at(0)), 1045);

  NewRsaSession();
  EXPECT_EQ(ErrCode(Send(std::string(256, 'x'), 3).at(0)), 1045);
  NewRsaSession();
  EXPECT_EQ(ErrCode(Send(std::string(7, 'x'), 3).at(0)), 1045);
  EXPECT_FALSE(sha2_cache_.Contains(kUser));
}

// MySQL 9's client has no mysql_native_password: greeted with it, it
// answers for caching_sha2_password with no token. binrelay switches it to
// caching_sha2_password (it used to deny it, "using password: NO").
TEST_F(SessionTest, ClientWithoutTheGreetingPluginIsSwitchedToItsOwn) {
  sha2_cache_.Add(kUser);
  NewSession();
  ASSERT_EQ(greeting_.auth_plugin, "mysql_native_password");
  auto r = Send(Response("caching_sha2_password", ""), 1);
  ASSERT_EQ(r.size(), 1u);
  BR_ASSERT_OK_AND_ASSIGN(protocol::AuthSwitchRequest sw,
                          protocol::ParseAuthSwitchRequest(r[0].payload));
  EXPECT_EQ(sw.plugin, "caching_sha2_password");
  auto ok = Send(protocol::CachingSha2Scramble(kPassword, sw.nonce), 3);
  ASSERT_EQ(ok.size(), 2u);
  EXPECT_EQ(ok[0].payload, std::string("\x01\x03", 2));
  EXPECT_EQ(protocol::ClassifyResponse(ok[1].payload), protocol::ResponseKind::kOk);
}

// The greeting's plugin follows the source: caching_sha2_password for MySQL
// 8.0 and later, mysql_native_password for MariaDB (with or without the
// 5.5.5- prefix) and MySQL 5.7.
TEST(GreetingPluginTest, FollowsTheSourceFlavourAndVersion) {
  EXPECT_EQ(GreetingPluginFor("9.7.4-2"), "caching_sha2_password");
  EXPECT_EQ(GreetingPluginFor("8.0.36-binrelay"), "caching_sha2_password");
  EXPECT_EQ(GreetingPluginFor("10.0.1"), "caching_sha2_password");
  EXPECT_EQ(GreetingPluginFor("5.7.44-log"), "mysql_native_password");
  EXPECT_EQ(GreetingPluginFor("5.5.5-10.11.6-MariaDB-log"), "mysql_native_password");
  EXPECT_EQ(GreetingPluginFor("11.8.9-MariaDB-0+deb13u1 from Debian-log"),
            "mysql_native_password");
  EXPECT_EQ(GreetingPluginFor(""), "mysql_native_password");
}

// A client answering for an unknown plugin is switched to ours (as
// sql/auth/sql_authentication.cc does with send_plugin_request_packet), with
// a new nonce the token must then use.
TEST_F(SessionTest, UnknownClientPluginGetsAuthSwitch) {
  NewSession();
  auto r = Send(Response("client_ed25519", std::string(64, 'x')), 1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].seq, 2);
  BR_ASSERT_OK_AND_ASSIGN(auto sw, protocol::ParseAuthSwitchRequest(r[0].payload));
  EXPECT_EQ(sw.plugin, "mysql_native_password");
  ASSERT_EQ(sw.nonce.size(), 20u);
  EXPECT_NE(sw.nonce, greeting_.nonce);
  auto ok = Send(protocol::NativePasswordScramble(kPassword, sw.nonce), 3);
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].seq, 4);
  EXPECT_EQ(protocol::ClassifyResponse(ok[0].payload), protocol::ResponseKind::kOk);
}

// binrelay's own client (AuthExchange) must log in against the session:
// guards that both ends agree on the scramble and packet order.
TEST_F(SessionTest, BinrelayClientAuthExchangeLogsIn) {
  NewSession();
  protocol::AuthExchange ex(kPassword, /*secure_transport=*/false);
  BR_ASSERT_OK_AND_ASSIGN(std::string token, ex.Start(greeting_.auth_plugin, greeting_.nonce));
  auto r = Send(Response(ex.plugin(), token), 1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(protocol::ClassifyResponse(r[0].payload), protocol::ResponseKind::kOk);
}

// --- Statements ------------------------------------------------------------

// The MariaDB IO thread sequence (sql/slave.cc) up to the dump, with the answers it needs.
TEST_F(SessionTest, MariaDbReplicaStatementSequence) {
  Login();
  int64_t now = absl::ToUnixSeconds(absl::Now());
  auto ts = Scalar("SELECT UNIX_TIMESTAMP()");
  ASSERT_TRUE(ts.has_value());
  EXPECT_NEAR(std::stoll(*ts), now, 5);

  std::vector<std::string> cols;
  std::vector<protocol::TextRow> rows;
  QueryRows("SHOW VARIABLES LIKE 'SERVER_ID'", &cols, &rows);
  EXPECT_EQ(cols, (std::vector<std::string>{"Variable_name", "Value"}));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], (protocol::TextRow{std::string("server_id"), std::string("7")}));

  for (const char* set :
       {"SET @master_heartbeat_period= 1800000000",
        "SET @master_binlog_checksum= @@global.binlog_checksum", "SET skip_replication=1",
        "SET @mariadb_slave_capability=4", "SET @slave_connect_state='0-1-100'",
        "SET @slave_gtid_strict_mode=1", "SET @slave_gtid_ignore_duplicates=0"}) {
    auto r = Query(set);
    ASSERT_EQ(r.size(), 1u) << set;
    EXPECT_EQ(protocol::ClassifyResponse(r[0].payload), protocol::ResponseKind::kOk) << set;
    EXPECT_EQ(r[0].seq, 1);
  }
  EXPECT_EQ(Scalar("SELECT @master_binlog_checksum"), "CRC32");
  EXPECT_EQ(Scalar("SELECT @@GLOBAL.gtid_domain_id"), "0");
  EXPECT_EQ(Scalar("SELECT binlog_gtid_pos('mysql-bin.000003',1234)"), "0-1-100");
  EXPECT_EQ(Scalar("SELECT binlog_gtid_pos('mysql-bin.000009',4)"), std::nullopt);
  const auto& vars = session_->user_variables();
  EXPECT_EQ(vars.at("master_heartbeat_period"), "1800000000");
  EXPECT_EQ(vars.at("slave_connect_state"), "0-1-100");
  EXPECT_EQ(vars.at("mariadb_slave_capability"), "4");
  EXPECT_EQ(vars.count("skip_replication"), 0u);  // a system variable, not recorded as @var
}

// The MySQL 8 IO thread sequence (sql/rpl_replica.cc).
TEST_F(SessionTest, MySqlReplicaStatementSequence) {
  Login();
  EXPECT_EQ(Scalar("SELECT @@GLOBAL.SERVER_ID"), "7");
  EXPECT_EQ(Query("SET @master_heartbeat_period = 30000000000, @source_heartbeat_period = "
                  "30000000000")[0].payload[0], 0);
  Query("SET @master_binlog_checksum = @@global.binlog_checksum, @source_binlog_checksum = "
        "@@global.binlog_checksum");
  EXPECT_EQ(Scalar("SELECT @source_binlog_checksum"), "CRC32");
  EXPECT_EQ(Scalar("SELECT @@GLOBAL.GTID_MODE"), "OFF");
  EXPECT_EQ(Scalar("SELECT @@GLOBAL.SERVER_UUID"), "3e11fa47-71ca-11e1-9e33-c80aa9429562");
  Query("SET @slave_uuid = 'aaaaaaaa-71ca-11e1-9e33-c80aa9429562', @replica_uuid = "
        "'aaaaaaaa-71ca-11e1-9e33-c80aa9429562'");
  EXPECT_EQ(session_->user_variables().at("replica_uuid"), "aaaaaaaa-71ca-11e1-9e33-c80aa9429562");
  // 8.0.26+ asks the new name first and must get 1193 to fall back.
  auto r = Query("SELECT @@global.rpl_semi_sync_source_enabled");
  ASSERT_EQ(r.size(), 1u);
  BR_ASSERT_OK_AND_ASSIGN(auto err, protocol::ParseErrPacket(r[0].payload));
  EXPECT_EQ(err.code, 1193);
  EXPECT_EQ(err.sql_state, "HY000");
  EXPECT_EQ(err.message, "Unknown system variable 'rpl_semi_sync_source_enabled'");
}

// mysqlbinlog / mariadb-binlog (client/mysqlbinlog.cc) and the mariadb CLI.
TEST_F(SessionTest, BinlogClientAndCliStatements) {
  Login();
  EXPECT_EQ(Scalar("SELECT VERSION()"), "10.11.0-binrelay");
  EXPECT_EQ(Scalar("select @@version_comment limit 1"), "binrelay");
  Query("SET @master_binlog_checksum='NONE', @source_binlog_checksum='NONE'");
  EXPECT_EQ(Scalar("SELECT @master_binlog_checksum"), "NONE");
  EXPECT_EQ(Scalar("SELECT @never_set"), std::nullopt);
}

// Admin statements come from the AdminHandler.
TEST_F(SessionTest, AdminStatements) {
  Login();
  std::vector<std::string> cols;
  std::vector<protocol::TextRow> rows;
  QueryRows("SHOW MASTER STATUS", &cols, &rows);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], "mysql-bin.000003");
  EXPECT_EQ(rows[0][1], "1234");
  QueryRows("SHOW BINARY LOG STATUS", &cols, &rows);
  EXPECT_EQ(cols[0], "File");
  QueryRows("SHOW BINARY LOGS", &cols, &rows);
  EXPECT_EQ(rows.size(), 2u);
  QueryRows("SHOW RELAY STATUS", &cols, &rows);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][1], std::nullopt);
  EXPECT_EQ(Scalar("SELECT @@gtid_binlog_pos"), "0-1-100");
  EXPECT_EQ(Scalar("SELECT @@global.gtid_purged"), "");

  // The replication user may not purge (1227), nor kill another user's
  // connection; the admin account may.
  auto refused = Query("PURGE BINARY LOGS TO 'mysql-bin.000002'");
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(ErrCode(refused[0]), 1227);
  EXPECT_TRUE(admin_.purged_to().empty());

  Login(/*as_admin=*/true);
  const int deferred = deferred_runs_;
  auto ok = Query("PURGE BINARY LOGS TO 'mysql-bin.000002'");
  ASSERT_EQ(ok.size(), 1u);
  // It unlinks files: never on the io thread.
  EXPECT_EQ(deferred_runs_, deferred + 1);
  EXPECT_EQ(protocol::ClassifyResponse(ok[0].payload), protocol::ResponseKind::kOk);
  EXPECT_EQ(admin_.purged_to(), std::vector<std::string>{"mysql-bin.000002"});
  auto missing = Query("PURGE BINARY LOGS TO 'nope.000001'");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(ErrCode(missing[0]), 1373);
  // COM_RESET_CONNECTION (connection pools) keeps the account's rights.
  auto reset = Send(std::string(1, '\x1f'), 0);
  ASSERT_EQ(reset.size(), 1u);
  ASSERT_EQ(protocol::ClassifyResponse(reset[0].payload), protocol::ResponseKind::kOk);
  auto again = Query("PURGE BINARY LOGS TO 'mysql-bin.000003'");
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(protocol::ClassifyResponse(again[0].payload), protocol::ResponseKind::kOk)
      << ErrCode(again[0]);
}

// Guards the two accounts: each logs in with its own password only (an
// admin login with the replication password, or the reverse, would let the
// replication user's secret open the admin's rights), others are refused.
TEST_F(SessionTest, AdminAccountLogsInWithItsOwnPasswordOnly) {
  struct Case {
    const char* user;
    const char* password;
    bool ok;
  };
  for (const Case& c : {Case{kAdminUser, kAdminPassword, true}, Case{kUser, kPassword, true},
                        Case{kAdminUser, kPassword, false}, Case{kUser, kAdminPassword, false},
                        Case{"nobody", kAdminPassword, false}}) {
    NewSession();
    auto r = Send(Response("mysql_native_password",
                           protocol::NativePasswordScramble(c.password, greeting_.nonce), c.user),
                  1);
    ASSERT_EQ(r.size(), 1u) << c.user << "/" << c.password;
    if (c.ok) {
      EXPECT_EQ(protocol::ClassifyResponse(r[0].payload), protocol::ResponseKind::kOk)
          << c.user << "/" << c.password;
    } else {
      EXPECT_EQ(ErrCode(r[0]), 1045) << c.user << "/" << c.password;
    }
  }
}

// Unsupported or broken statements get an ERR and the session stays usable;
// writes get the read-only server's ER_OPTION_PREVENTS_STATEMENT.
TEST_F(SessionTest, UnsupportedStatementKeepsSessionUsable) {
  Login();
  for (const char* sql : {"SHOW TABLES", "SELECT * FROM mysql.user", ""}) {
    auto r = Query(sql);
    ASSERT_EQ(r.size(), 1u) << sql;
    BR_ASSERT_OK_AND_ASSIGN(auto err, protocol::ParseErrPacket(r[0].payload));
    EXPECT_EQ(err.code, 1235) << sql;
    EXPECT_EQ(err.sql_state, "42000");
    EXPECT_EQ(session_->state(), ServerSession::State::kCommand);
  }
  for (const char* sql : {"DROP DATABASE x", "INSERT INTO t VALUES (1)", "SET GLOBAL x = 1",
                          "SET @@global.read_only = 1, @a = 1", "SET PASSWORD = 'x'"}) {
    auto r = Query(sql);
    ASSERT_EQ(r.size(), 1u) << sql;
    EXPECT_EQ(ErrCode(r[0]), 1290) << sql;
    EXPECT_EQ(session_->state(), ServerSession::State::kCommand);
  }
  EXPECT_EQ(session_->user_variables().count("a"), 0u) << "a refused SET applies nothing";
  auto bad = Query("SET @a 1");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(ErrCode(bad[0]), 1064);
  EXPECT_EQ(Scalar("SELECT 1"), "1");
}

// A failed assignment list must not apply its earlier items.
TEST_F(SessionTest, SetWithUnknownSystemVariableChangesNothing) {
  Login();
  auto r = Query("SET @a = 1, @b = @@global.no_such_variable");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(ErrCode(r[0]), 1193);
  EXPECT_EQ(session_->user_variables().count("a"), 0u);
}

// --- Commands --------------------------------------------------------------

TEST_F(SessionTest, PingInitDbUnknownCommandAndQuit) {
  Login();
  auto ping = Send("\x0e", 0);
  ASSERT_EQ(ping.size(), 1u);
  EXPECT_EQ(protocol::ClassifyResponse(ping[0].payload), protocol::ResponseKind::kOk);
  auto init = Send("\x02test", 0);
  EXPECT_EQ(protocol::ClassifyResponse(init[0].payload), protocol::ResponseKind::kOk);
  auto stats = Send("\x09", 0);  // COM_STATISTICS: a line of text
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_TRUE(absl::StartsWith(AV(stats[0].payload), "Uptime: ")) << stats[0].payload;
  auto unknown = Send("\x1d", 0);  // COM_DAEMON
  ASSERT_EQ(unknown.size(), 1u);
  BR_ASSERT_OK_AND_ASSIGN(auto err, protocol::ParseErrPacket(unknown[0].payload));
  EXPECT_EQ(err.code, 1047);
  EXPECT_EQ(err.sql_state, "08S01");
  auto empty = Send("", 0);
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_NE(ErrCode(empty[0]), 0);
  EXPECT_EQ(session_->state(), ServerSession::State::kCommand);
  absl::Status st;
  auto quit = Send("\x01", 0, &st);
  EXPECT_TRUE(quit.empty());
  BR_EXPECT_OK(st);
  EXPECT_EQ(session_->state(), ServerSession::State::kClosed);
}

// Golden COM_REGISTER_SLAVE from msmp (server_id 200, port 3306): OK and
// recorded for SHOW SLAVE HOSTS.
TEST_F(SessionTest, RegisterSlaveGoldenIsRecorded) {
  BINRELAY_REQUIRE_FIXTURE("msmp/register-replica.terms");
  Login();
  // The term's recovery_rank <<0,0,0,0>> also looks like an empty frame; the
  // packet is the last binary of the file.
  auto frames = binrelay::testing::WirePacketsFromTerms("msmp/register-replica.terms");
  ASSERT_FALSE(frames.empty());
  ASSERT_EQ(frames.back().size(), 22u);
  auto r = Send(frames.back().substr(4), 0);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(protocol::ClassifyResponse(r[0].payload), protocol::ResponseKind::kOk);
  ASSERT_TRUE(session_->registration().has_value());
  EXPECT_EQ(session_->registration()->server_id, 200u);
  EXPECT_EQ(session_->registration()->report_port, 3306);
  ASSERT_EQ(admin_.registrations().size(), 1u);
  std::vector<std::string> cols;
  std::vector<protocol::TextRow> rows;
  QueryRows("SHOW SLAVE HOSTS", &cols, &rows);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], "200");
}

// A register packet whose host length runs past the end is an ERR, not a crash.
TEST_F(SessionTest, TruncatedRegisterSlaveIsErrAndSessionUsable) {
  Login();
  std::string p = replication::BuildRegisterSlave({5, "host", "u", "p", 3307});
  p[5] = 100;  // host length beyond the packet
  auto r = Send(p, 0);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(ErrCode(r[0]), 0);
  EXPECT_EQ(session_->state(), ServerSession::State::kCommand);
  for (size_t n = 1; n < 10; ++n) {  // port ends at byte 10; rank and master id are optional
    auto t = Send(std::string_view(replication::BuildRegisterSlave({5, "", "", "", 1})).substr(0, n), 0);
    ASSERT_EQ(t.size(), 1u) << n;
    EXPECT_NE(ErrCode(t[0]), 0) << n;
  }
}

// Golden COM_BINLOG_DUMP from msmp (file "", pos 4, flags 2, server 200):
// handed to the DumpHandler with the session's variables.
TEST_F(SessionTest, BinlogDumpGoldenReachesDumpHandler) {
  BINRELAY_REQUIRE_FIXTURE("msmp/binlog-dump.terms");
  Login();
  Query("SET @master_binlog_checksum='CRC32'");
  auto frames = binrelay::testing::WirePacketsFromTerms("msmp/binlog-dump.terms");
  ASSERT_EQ(frames.size(), 1u);
  auto r = Send(frames[0].substr(4), 0);
  EXPECT_TRUE(r.empty());  // the stream is the dump's business
  EXPECT_EQ(session_->state(), ServerSession::State::kDumpAccepted);
  auto reqs = dump_.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].kind, DumpRequest::Kind::kFilePosition);
  EXPECT_EQ(reqs[0].file, "");
  EXPECT_EQ(reqs[0].position, 4u);
  EXPECT_EQ(reqs[0].flags, 2);
  EXPECT_EQ(reqs[0].server_id, 200u);
  EXPECT_FALSE(reqs[0].NonBlocking());
  EXPECT_EQ(reqs[0].settings.checksum, "CRC32");
}

// Golden COM_BINLOG_DUMP_GTID (msmp: one SID ae705970-65d8-11ee-989c-0242ac1b0003,
// interval 1-6): the encoded set is passed through intact.
TEST_F(SessionTest, BinlogDumpGtidGoldenReachesDumpHandler) {
  BINRELAY_REQUIRE_FIXTURE("msmp/binlog-dump-gtid.terms");
  Login();
  auto frames = binrelay::testing::WirePacketsFromTerms("msmp/binlog-dump-gtid.terms");
  ASSERT_GE(frames.size(), 1u);
  Send(frames[0].substr(4), 0);
  auto reqs = dump_.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].kind, DumpRequest::Kind::kMySqlGtid);
  EXPECT_EQ(reqs[0].server_id, 200u);
  EXPECT_EQ(reqs[0].flags, 2);
  EXPECT_EQ(reqs[0].position, 4u);
  ASSERT_EQ(reqs[0].encoded_gtid_set.size(), 48u);
  EXPECT_EQ(static_cast<uint8_t>(reqs[0].encoded_gtid_set[8]), 174);
}

// A refused dump is ERR 1236 with the handler's reason, and the session ends.
TEST_F(SessionTest, RefusedDumpIs1236AndCloses) {
  Login();
  dump_.set_result(absl::NotFoundError("binlog 'mysql-bin.000099' does not exist"));
  absl::Status st;
  auto r = Send(replication::BuildBinlogDump(9, "mysql-bin.000099", 4, 0), 0, &st);
  ASSERT_EQ(r.size(), 1u);
  BR_ASSERT_OK_AND_ASSIGN(auto err, protocol::ParseErrPacket(r[0].payload));
  EXPECT_EQ(err.code, 1236);
  EXPECT_NE(err.message.find("mysql-bin.000099"), std::string::npos);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(session_->state(), ServerSession::State::kClosed);
}

// Every truncation of a GTID dump request is refused with
// ER_MALFORMED_PACKET, as MySQL refuses it.
TEST_F(SessionTest, TruncatedGtidDumpIsRefused) {
  std::string full = replication::BuildBinlogDumpGtid(3, "f", 4, 0, std::string(48, 'x'));
  for (size_t n = 1; n < full.size(); ++n) {
    Login();
    auto r = Send(std::string_view(full).substr(0, n), 0);
    ASSERT_EQ(r.size(), 1u) << n;
    EXPECT_EQ(ErrCode(r[0]), 1835) << n;
  }
  EXPECT_TRUE(dump_.requests().empty());
}

// Guards: memory per connection that a crowd of idle clients multiplies
// (the receive buffer started at 64 KiB and kept the size of the largest
// packet ever received).
TEST_F(SessionTest, ReadBufferStartsSmallAndShrinksAfterABigPacket) {
  Login();
  char* dst = nullptr;
  session_->PrepareRead(16, &dst);
  EXPECT_LE(session_->buffer_capacity(), 8192u);
  std::string big = "SELECT '" + std::string(200 * 1024, 'x') + "'";
  Query(big);
  EXPECT_GE(session_->buffer_capacity(), 200u * 1024);
  session_->PrepareRead(16, &dst);
  EXPECT_LE(session_->buffer_capacity(), 8192u) << "given back once the packet is handled";
}

// Guards what SHOW PROCESSLIST's Info shows: a running statement that names
// a credential shows '<secret>' for its literals, and no statement lingers as
// the Info of an idle connection once it has been answered.
TEST_F(SessionTest, ProcesslistInfoIsRedactedAndClearedOnceAnswered) {
  Login();
  std::string out;
  BR_ASSERT_OK(session_->Feed(
      Framed("\x03SELECT binlog_gtid_pos('mysql-bin.000003', 1234) /* PASSWORD 'hunter2' */", 0),
      &out));
  ASSERT_EQ(session_->state(), ServerSession::State::kDeferred);
  EXPECT_EQ(session_->current_statement(), "SELECT binlog_gtid_pos('<secret>', 1234) /* */");
  DeferredWork work = session_->TakeDeferred();
  BR_ASSERT_OK(session_->FinishDeferred(work(), &out));
  EXPECT_EQ(session_->current_statement(), "");

  auto refused = Query("SET PASSWORD = PASSWORD('hunter2')");
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_NE(ErrCode(refused[0]), 0);
  EXPECT_EQ(session_->current_statement(), "") << "an answered statement stays as Info";
}

}  // namespace
}  // namespace binrelay::proxy

namespace binrelay::proxy {
namespace {

// Guards a client growing a session without bound (SET @v1..@vN, each up to
// the packet limit; they were also copied into every dump request).
TEST_F(SessionTest, UserVariablesAreBounded) {
  Login();
  for (size_t i = 0; i < kMaxUserVariables; ++i) {
    auto r = Query(absl::StrCat("SET @v", i, " = ", i));
    ASSERT_EQ(ErrCode(r[0]), 0) << i;
  }
  auto over = Query("SET @one_too_many = 1");
  EXPECT_EQ(ErrCode(over[0]), 1041);
  EXPECT_EQ(session_->user_variables().count("one_too_many"), 0u);
  auto replace = Query("SET @v0 = 'again'");
  EXPECT_EQ(ErrCode(replace[0]), 0) << "replacing a variable is not a new one";
  auto big = Query(absl::StrCat("SET @v1 = '", std::string(kMaxUserVariableBytes, 'x'), "'"));
  EXPECT_EQ(ErrCode(big[0]), 1041);
  EXPECT_EQ(session_->user_variables().at("v1"), "1") << "a refused SET changes nothing";
  EXPECT_EQ(Scalar("SELECT 1"), "1");
}

// Guards a stored-file scan (binlog_gtid_pos) running on an io thread,
// stalling every dump there.
TEST_F(SessionTest, BinlogGtidPosRunsOffTheIoThread) {
  Login();
  const int before = deferred_runs_;
  EXPECT_EQ(Scalar("SELECT binlog_gtid_pos('mysql-bin.000003', 1234)"), "0-1-100");
  EXPECT_EQ(deferred_runs_, before + 1);
  EXPECT_EQ(Scalar("SELECT @@server_id"), "7");
  EXPECT_EQ(deferred_runs_, before + 1) << "in-memory answers stay inline";
}

}  // namespace
}  // namespace binrelay::proxy
