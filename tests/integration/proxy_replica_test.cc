// A real MariaDB 10.11 replica (ServerSandbox) pointed at the proxy
// listener with CHANGE MASTER TO: its IO thread must get through every
// pre-dump statement (sql/slave.cc get_master_version_and_clock) and
// COM_REGISTER_SLAVE, and send
// COM_BINLOG_DUMP with its server id and the session variables the dump
// will need. The fake DumpHandler accepts; the listener then closes (no
// streaming yet), and the replica retries, which is fine here.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "proxy/listener.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/status_matchers.h"
#include "tests/proxy/fake_handlers.h"

namespace binrelay::proxy {
namespace {

class ProxyReplicaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ListenerOptions o;
    o.session.auth.user = "repl";
    o.session.auth.password = "s3cret";
    BR_ASSERT_OK_AND_ASSIGN(listener_, Listener::Create(ioc_, o, &admin_, &dump_));
    listener_->Start();
    io_thread_ = std::thread([this] { ioc_.run(); });
    binrelay::testing::ServerSandboxOptions so;
    so.server_id = 2;
    so.tls = false;
    BR_ASSERT_OK_AND_ASSIGN(replica_, binrelay::testing::ServerSandbox::Start(so));
  }
  void TearDown() override {
    if (replica_) (void)replica_->Execute("STOP SLAVE");
    replica_.reset();
    if (listener_) listener_->Stop();
    ioc_.stop();
    if (io_thread_.joinable()) io_thread_.join();
  }

  // Waits (bounded) for the replica's first dump request.
  std::optional<DumpRequest> AwaitDump() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      auto reqs = dump_.requests();
      if (!reqs.empty()) return reqs[0];
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return std::nullopt;
  }

  std::string ReplicaStatus() {
    auto rows = replica_->Query("SHOW SLAVE STATUS");
    if (!rows.ok()) return std::string(rows.status().message());
    std::string s;
    for (const auto& row : *rows) {
      for (const auto& v : row) absl::StrAppend(&s, v.value_or("NULL"), " | ");
    }
    return s;
  }

  asio::io_context ioc_;
  fakes::FakeAdminHandler admin_;
  fakes::FakeDumpHandler dump_;
  std::unique_ptr<Listener> listener_;
  std::thread io_thread_;
  std::unique_ptr<binrelay::testing::ServerSandbox> replica_;
};

// File/position replication: the dump names the file and position given to
// CHANGE MASTER, and the replica registered itself first.
TEST_F(ProxyReplicaTest, MariaDbReplicaFilePositionReachesDump) {
  BR_ASSERT_OK(replica_->Execute(absl::StrCat(
      "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=", listener_->port(),
      ", MASTER_USER='repl', MASTER_PASSWORD='s3cret', MASTER_LOG_FILE='mysql-bin.000003', "
      "MASTER_LOG_POS=1234, MASTER_USE_GTID=no, MASTER_HEARTBEAT_PERIOD=5, "
      "MASTER_CONNECT_RETRY=1")));
  BR_ASSERT_OK(replica_->Execute("START SLAVE"));
  auto d = AwaitDump();
  ASSERT_TRUE(d.has_value()) << ReplicaStatus() << "\n" << replica_->ErrorLogTail();
  EXPECT_EQ(d->kind, DumpRequest::Kind::kFilePosition);
  EXPECT_EQ(d->file, "mysql-bin.000003");
  EXPECT_EQ(d->position, 1234u);
  EXPECT_EQ(d->server_id, 2u);
  EXPECT_FALSE(d->NonBlocking());
  EXPECT_EQ(d->settings.checksum, "CRC32");
  EXPECT_EQ(d->settings.heartbeat_period, std::chrono::seconds(5));
  EXPECT_EQ(d->settings.mariadb_capability, 4);
  auto regs = admin_.registrations();
  ASSERT_FALSE(regs.empty());
  EXPECT_EQ(regs[0].server_id, 2u);
}

// GTID replication (MASTER_USE_GTID=slave_pos): the connect state reaches
// the dump as @slave_connect_state.
TEST_F(ProxyReplicaTest, MariaDbReplicaGtidModeSendsConnectState) {
  BR_ASSERT_OK(replica_->Execute("SET GLOBAL gtid_slave_pos='0-1-100'"));
  BR_ASSERT_OK(replica_->Execute(absl::StrCat(
      "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=", listener_->port(),
      ", MASTER_USER='repl', MASTER_PASSWORD='s3cret', MASTER_USE_GTID=slave_pos, "
      "MASTER_CONNECT_RETRY=1")));
  BR_ASSERT_OK(replica_->Execute("START SLAVE"));
  auto d = AwaitDump();
  ASSERT_TRUE(d.has_value()) << ReplicaStatus() << "\n" << replica_->ErrorLogTail();
  EXPECT_EQ(d->server_id, 2u);
  EXPECT_EQ(d->settings.slave_connect_state, "0-1-100");
  EXPECT_FALSE(d->settings.gtid_strict_mode);
}

}  // namespace
}  // namespace binrelay::proxy
