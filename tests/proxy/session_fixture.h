// Test fixture for ServerSession: scripted client packets in, reply frames
// out (with their sequence ids), plus fake handlers.
//
// Thread safety: one test thread. Lifetime: frames own their bytes.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "protocol/auth.h"
#include "protocol/handshake.h"
#include "protocol/packet_framer.h"
#include "protocol/response_packets.h"
#include "protocol/server_error.h"
#include "protocol/text_resultset.h"
#include "proxy/server_session.h"
#include "proxy/sha2_auth_cache.h"
#include "tests/harness/status_matchers.h"
#include "tests/proxy/fake_handlers.h"

namespace binrelay::proxy::session_test {

using protocol::cap::kClientDefault;

constexpr char kUser[] = "repl";
constexpr char kPassword[] = "s3cret";
constexpr char kAdminUser[] = "relay_admin";
constexpr char kAdminPassword[] = "adm1n";

struct Frame {
  uint8_t seq;
  std::string payload;
};

// Splits server output by its 4-byte headers (no reassembly: replies here
// are small), keeping sequence ids visible to the assertions.
inline std::vector<Frame> Frames(const std::string& out) {
  std::vector<Frame> frames;
  size_t p = 0;
  while (p + 4 <= out.size()) {
    size_t len = static_cast<uint8_t>(out[p]) | static_cast<uint8_t>(out[p + 1]) << 8 |
                 static_cast<uint8_t>(out[p + 2]) << 16;
    frames.push_back({static_cast<uint8_t>(out[p + 3]), out.substr(p + 4, len)});
    p += 4 + len;
  }
  EXPECT_EQ(p, out.size()) << "trailing partial frame";
  return frames;
}

inline std::string Framed(std::string_view payload, uint8_t seq) {
  std::string out;
  protocol::AppendFramedPacket(&out, payload, &seq);
  return out;
}

inline uint16_t ErrCode(const Frame& f) {
  auto e = protocol::ParseErrPacket(f.payload);
  return e.ok() ? e->code : 0;
}

class SessionTest : public ::testing::Test {
 protected:
  void NewSession(AuthOptions auth = {}) {
    if (auth.user.empty()) {
      auth.user = kUser;
      auth.password = kPassword;
      auth.admin_user = kAdminUser;
      auth.admin_password = kAdminPassword;
      auth.sha2_cache = &sha2_cache_;
    }
    ServerSessionOptions o = base_options_;
    o.auth = auth;
    session_ = std::make_unique<ServerSession>(o, &admin_, &dump_);
    std::string out;
    BR_ASSERT_OK(session_->Start(&out));
    auto frames = Frames(out);
    ASSERT_EQ(frames.size(), 1u);
    ASSERT_EQ(frames[0].seq, 0);
    BR_ASSERT_OK_AND_ASSIGN(greeting_, protocol::ParseInitialHandshake(frames[0].payload));
  }

  std::string Response(std::string_view plugin, std::string token,
                       std::string_view user = kUser) {
    protocol::HandshakeResponse r;
    r.capabilities = kClientDefault & greeting_.capabilities;
    r.user = std::string(user);
    r.auth_plugin = std::string(plugin);
    r.auth_response = std::move(token);
    auto built = protocol::BuildHandshakeResponse(r);
    EXPECT_TRUE(built.ok());
    return *built;
  }

  // Feeds one client packet; returns the reply frames and the status.
  // Deferred work runs in place, as the listener runs it on its pool.
  std::vector<Frame> Send(std::string_view payload, uint8_t seq, absl::Status* st = nullptr) {
    std::string out;
    absl::Status s = session_->Feed(Framed(payload, seq), &out);
    while (s.ok() && session_->state() == ServerSession::State::kDeferred) {
      ++deferred_runs_;
      DeferredWork work = session_->TakeDeferred();
      s = session_->FinishDeferred(work(), &out);
      if (s.ok()) s = session_->Process(&out);
    }
    if (st) *st = s;
    return Frames(out);
  }
  int deferred_runs_ = 0;  // how many commands went off the io thread

  void Login(bool as_admin = false) {
    NewSession();
    auto r = Send(Response("mysql_native_password",
                           protocol::NativePasswordScramble(as_admin ? kAdminPassword : kPassword,
                                                            greeting_.nonce),
                           as_admin ? kAdminUser : kUser),
                  1);
    ASSERT_EQ(r.size(), 1u);
    ASSERT_EQ(protocol::ClassifyResponse(r[0].payload), protocol::ResponseKind::kOk);
    ASSERT_EQ(session_->state(), ServerSession::State::kCommand);
  }

  std::vector<Frame> Query(std::string_view sql) {
    return Send(absl::StrCat("\x03", AV(sql)), 0);
  }

  // Runs a query that must return a result set; returns columns and rows.
  void QueryRows(std::string_view sql, std::vector<std::string>* columns,
                 std::vector<protocol::TextRow>* rows) {
    auto f = Query(sql);
    ASSERT_GE(f.size(), 3u) << sql << " gave " << (f.empty() ? "nothing" : "a short reply")
                            << (f.size() == 1 ? absl::StrCat(" code ", ErrCode(f[0])) : "");
    size_t n = static_cast<uint8_t>(f[0].payload[0]);
    columns->clear();
    rows->clear();
    for (size_t i = 0; i < n; ++i) {
      BR_ASSERT_OK_AND_ASSIGN(auto def, protocol::ParseColumnDefinition(f[1 + i].payload));
      columns->emplace_back(def.name);
    }
    ASSERT_EQ(protocol::ClassifyResponse(f[1 + n].payload), protocol::ResponseKind::kEof);
    for (size_t i = 2 + n; i + 1 < f.size(); ++i) {
      protocol::TextRow row;
      BR_ASSERT_OK(protocol::ParseTextRow(f[i].payload, n, &row));
      rows->push_back(row);
    }
    ASSERT_EQ(protocol::ClassifyResponse(f.back().payload), protocol::ResponseKind::kEof);
    for (size_t i = 0; i < f.size(); ++i) EXPECT_EQ(f[i].seq, i + 1) << sql;
  }

  std::optional<std::string> Scalar(std::string_view sql) {
    std::vector<std::string> cols;
    std::vector<protocol::TextRow> rows;
    QueryRows(sql, &cols, &rows);
    EXPECT_EQ(rows.size(), 1u) << sql;
    if (rows.size() != 1 || rows[0].size() != 1) return "<bad shape>";
    return rows[0][0];
  }

  ServerSessionOptions base_options_;  // NewSession() starts from these
  // Accounts that may use caching_sha2 fast authentication (NewSession's
  // default accounts use it; empty at first, as after a restart).
  Sha2AuthCache sha2_cache_;
  fakes::FakeAdminHandler admin_;
  fakes::FakeDumpHandler dump_;
  std::unique_ptr<ServerSession> session_;
  protocol::InitialHandshake greeting_;
};

}  // namespace binrelay::proxy::session_test
