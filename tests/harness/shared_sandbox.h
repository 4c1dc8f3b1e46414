// SharedSandboxTest: a gtest fixture base whose tests share one MariaDB
// sandbox, started once per test suite with one account created on it.
// Replaces the SetUpTestSuite/TearDownTestSuite boilerplate that several
// integration suites repeated.
//
// Usage (CRTP; the suite names its account):
//   class TailFilterTest : public SharedSandboxTest<TailFilterTest> {
//    public:
//     static constexpr SandboxAccount kAccount{kUser, kPassword, kReplicationGrants};
//   };
//   TEST_F(TailFilterTest, X) { sandbox_->Execute(...); }
// A failed start (no server binary, CreateUser error) fails every test of
// the suite in SetUp with the reason; it never skips.
//
// Thread safety: the sandbox is used from the test thread (see
// ServerSandbox). Lifetime: sandbox_ lives from SetUpTestSuite to
// TearDownTestSuite; each Suite type has its own.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "tests/harness/server_sandbox.h"

namespace binrelay::testing {

// What a replication client (binrelay, tail) needs on a MariaDB source.
inline constexpr char kReplicationGrants[] = "REPLICATION SLAVE, BINLOG MONITOR, SELECT";

struct SandboxAccount {
  const char* user;
  const char* password;
  const char* grants = "ALL PRIVILEGES";
};

template <typename Suite>
class SharedSandboxTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<ServerSandbox>> sb = ServerSandbox::Start();
    if (!sb.ok()) {
      *start_error_ = sb.status();
      return;
    }
    sandbox_ = sb->release();
    *start_error_ = sandbox_->CreateUser(Suite::kAccount.user, Suite::kAccount.password,
                                         Suite::kAccount.grants);
  }
  static void TearDownTestSuite() {
    delete sandbox_;
    sandbox_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(start_error_->ok()) << *start_error_; }

  static inline ServerSandbox* sandbox_ = nullptr;
  // Heap-allocated and never freed: no static destructor order to worry about.
  static inline absl::Status* start_error_ = new absl::Status();
};

// SourceTargetSandboxTest: the same for suites that need two servers, a
// source (server_id 1) and a target (server_id 2), each with the suite's
// account.
template <typename Suite>
class SourceTargetSandboxTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    for (uint32_t id : {1u, 2u}) {
      ServerSandboxOptions o;
      o.server_id = id;
      absl::StatusOr<std::unique_ptr<ServerSandbox>> sb = ServerSandbox::Start(o);
      if (!sb.ok()) {
        *start_error_ = sb.status();
        return;
      }
      ServerSandbox*& slot = id == 1 ? source_ : target_;
      slot = sb->release();
      absl::Status s = slot->CreateUser(Suite::kAccount.user, Suite::kAccount.password,
                                        Suite::kAccount.grants);
      if (!s.ok()) {
        *start_error_ = s;
        return;
      }
    }
  }
  static void TearDownTestSuite() {
    delete source_;
    delete target_;
    source_ = target_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(start_error_->ok()) << *start_error_; }

  static inline ServerSandbox* source_ = nullptr;
  static inline ServerSandbox* target_ = nullptr;
  static inline absl::Status* start_error_ = new absl::Status();
};

}  // namespace binrelay::testing
