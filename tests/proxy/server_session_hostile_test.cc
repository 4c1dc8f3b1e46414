// ServerSession under hostile input: random bytes, truncated handshakes,
// giant length announcements, sequence errors, input after close.
#include "proxy/server_session.h"

#include <gtest/gtest.h>

#include <random>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "replication/dump_commands.h"
#include "tests/harness/erlang_terms.h"
#include "tests/proxy/session_fixture.h"

namespace binrelay::proxy {
namespace {

using namespace session_test;  // NOLINT: the fixture and its helpers

// --- Hostile input -----------------------------------------------------------

// Random bytes instead of a handshake response: no crash, never logged in.
TEST_F(SessionTest, RandomBytesNeverAuthenticate) {
  std::mt19937 rng(20261129);  // fixed seed: a failure replays
  for (int i = 0; i < 500; ++i) {
    NewSession();
    std::string junk(rng() % 300, '\0');
    for (auto& c : junk) c = static_cast<char>(rng());
    std::string out;
    (void)session_->Feed(junk, &out);
    EXPECT_NE(session_->state(), ServerSession::State::kCommand) << "iteration " << i;
  }
}

// Every truncated handshake response (a complete packet with too few bytes)
// is ERR and closed; a packet still arriving is simply waited for.
TEST_F(SessionTest, TruncatedHandshakeIsErrAndClosed) {
  NewSession();
  std::string full = Response("mysql_native_password",
                              protocol::NativePasswordScramble(kPassword, greeting_.nonce));
  const size_t token_end = 32 + sizeof(kUser) + 1 + 20;
  for (size_t n = 0; n < token_end; ++n) {
    NewSession();
    absl::Status st;
    auto r = Send(full.substr(0, n), 1, &st);
    ASSERT_EQ(r.size(), 1u) << n;
    EXPECT_EQ(ErrCode(r[0]), 1043) << n;
    EXPECT_EQ(session_->state(), ServerSession::State::kClosed) << n;
  }
  NewSession();
  std::string partial = Framed(full, 1).substr(0, 20);
  std::string out;
  BR_EXPECT_OK(session_->Feed(partial, &out));
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(session_->state(), ServerSession::State::kAuth);
}

// A packet announcing 1 GiB (a chain of 16 MiB chunks) is refused from its
// first header, before any of it is buffered, with ER_NET_PACKET_TOO_LARGE.
TEST_F(SessionTest, GiantPacketAnnouncementIsRefused) {
  for (bool after_login : {false, true}) {
    if (after_login) {
      Login();
    } else {
      NewSession();
    }
    std::string header("\xff\xff\xff", 3);
    header.push_back(after_login ? 0 : 1);
    absl::Status st;
    std::string out;
    st = session_->Feed(header + "\x03SELECT", &out);
    auto r = Frames(out);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(ErrCode(r[0]), 1153);
    EXPECT_FALSE(st.ok());
    EXPECT_EQ(session_->state(), ServerSession::State::kClosed);
  }
}

// A packet with the wrong sequence id is ERR 1156 and closed.
TEST_F(SessionTest, OutOfOrderSequenceIsRefused) {
  NewSession();
  absl::Status st;
  auto r = Send(Response("mysql_native_password", ""), 5, &st);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(ErrCode(r[0]), 1156);
  EXPECT_EQ(session_->state(), ServerSession::State::kClosed);
}

// Bytes after close are ignored, not processed.
TEST_F(SessionTest, NothingIsProcessedAfterClose) {
  NewSession();
  Send(Response("mysql_native_password", "bad-token-of-20-byte"), 1);
  ASSERT_EQ(session_->state(), ServerSession::State::kClosed);
  std::string out;
  BR_EXPECT_OK(session_->Feed(Framed("\x03SELECT 1", 0), &out));
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace binrelay::proxy
