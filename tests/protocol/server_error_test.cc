#include "protocol/server_error.h"

#include <gtest/gtest.h>

#include "protocol/response_packets.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::protocol {
namespace {

// ERR 1045 as MariaDB sends it (header, code LE, '#', SQLSTATE, message).
const std::string kAccessDenied =
    std::string("\xff\x15\x04#28000", 9) + "Access denied for user 'x'@'localhost' (using password: YES)";

// Guards field offsets of a PROTOCOL_41 ERR packet.
TEST(ServerErrorTest, ParsesErrPacketWithSqlState) {
  BR_ASSERT_OK_AND_ASSIGN(ServerError e, ParseErrPacket(kAccessDenied));
  EXPECT_EQ(e.code, 1045);
  EXPECT_EQ(e.sql_state, "28000");
  EXPECT_EQ(e.message, "Access denied for user 'x'@'localhost' (using password: YES)");
}

// Guards real bytes: the ERR 1158 of zeek/caching_sha2_password.pcap
// (connection 0, seq 3), MySQL 8.0.32.
TEST(ServerErrorTest, ParsesCapturedMySqlErr1158) {
  std::string payload = "\xff\x86\x04#08S01Got an error reading communication packets";
  BR_ASSERT_OK_AND_ASSIGN(ServerError e, ParseErrPacket(payload));
  EXPECT_EQ(e.code, 1158);
  EXPECT_EQ(e.sql_state, "08S01");
  EXPECT_EQ(e.message, "Got an error reading communication packets");
}

// Guards ERR packets without the SQLSTATE marker (sent before the handshake).
TEST(ServerErrorTest, ParsesErrPacketWithoutSqlState) {
  std::string payload = std::string("\xff\x10\x04", 3) + "Too many connections";
  BR_ASSERT_OK_AND_ASSIGN(ServerError e, ParseErrPacket(payload));
  EXPECT_EQ(e.code, 1040);
  EXPECT_EQ(e.sql_state, "");
  EXPECT_EQ(e.message, "Too many connections");
}

// Guards hostile input: truncated code and SQLSTATE must not read past the end.
TEST(ServerErrorTest, TruncatedErrPacketsAreOutOfRange) {
  for (std::string_view bad : {std::string_view("\xff", 1), std::string_view("\xff\x15", 2),
                               std::string_view("\xff\x15\x04#280", 7)}) {
    auto e = ParseErrPacket(bad);
    ASSERT_FALSE(e.ok()) << bad.size();
    EXPECT_EQ(e.status().code(), absl::StatusCode::kOutOfRange);
  }
  EXPECT_EQ(ParseErrPacket("\x00").status().code(), absl::StatusCode::kInvalidArgument);
}

// Guards the message format and the payload round trip through Status.
TEST(ServerErrorTest, StatusCarriesPeerCodeAndPayload) {
  absl::Status s = ErrPacketToStatus(kAccessDenied, "db1:3306");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(),
            "server db1:3306 returned error 1045 (28000): Access denied for user 'x'@'localhost' "
            "(using password: YES)");
  std::optional<ServerError> e = GetServerError(s);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code, 1045);
  EXPECT_EQ(e->sql_state, "28000");
  EXPECT_FALSE(GetServerError(absl::InternalError("x")).has_value());
}

// Guards the code mapping callers rely on (retry on Unavailable etc.).
TEST(ServerErrorTest, CodeMapping) {
  EXPECT_EQ(StatusCodeForServerError(1927), absl::StatusCode::kUnavailable);
  EXPECT_EQ(StatusCodeForServerError(1053), absl::StatusCode::kUnavailable);
  EXPECT_EQ(StatusCodeForServerError(1236), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(StatusCodeForServerError(1064), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(StatusCodeForServerError(1193), absl::StatusCode::kNotFound);
  EXPECT_EQ(StatusCodeForServerError(1062), absl::StatusCode::kUnknown);
}

// Guards a malformed ERR: DataLoss naming the peer.
TEST(ServerErrorTest, MalformedErrIsDataLoss) {
  absl::Status s = ErrPacketToStatus(std::string_view("\xff\x15", 2), "h:1");
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("h:1"), std::string::npos);
}

// Guards OK parsing on a real MySQL 8.0.32 OK (zeek after-auth-switch capture,
// seq 5): affected 0, insert id 0, status 0x0002, warnings 0, then session
// state info bytes.
TEST(ResponsePacketsTest, ParsesCapturedOk) {
  std::string payload("\x00\x00\x00\x02\x40\x00\x00", 7);
  BR_ASSERT_OK_AND_ASSIGN(OkPacket ok, ParseOkPacket(payload));
  EXPECT_EQ(ok.affected_rows, 0u);
  EXPECT_EQ(ok.status_flags, 0x4002);
  EXPECT_EQ(ok.warnings, 0);
  EXPECT_EQ(ClassifyResponse(payload), ResponseKind::kOk);
}

// Guards lenenc affected rows / insert id (0xFC two-byte form).
TEST(ResponsePacketsTest, ParsesOkWithLenencCounts) {
  std::string payload("\x00\xfc\x10\x27\x05\x02\x00\x01\x00info", 13);
  BR_ASSERT_OK_AND_ASSIGN(OkPacket ok, ParseOkPacket(payload));
  EXPECT_EQ(ok.affected_rows, 10000u);
  EXPECT_EQ(ok.last_insert_id, 5u);
  EXPECT_EQ(ok.status_flags, 2);
  EXPECT_EQ(ok.warnings, 1);
  EXPECT_EQ(ok.info, "info");
}

// Guards hostile OK lengths: a lenenc promising 8 bytes in a short packet.
TEST(ResponsePacketsTest, TruncatedOkIsOutOfRange) {
  auto ok = ParseOkPacket(std::string_view("\x00\xfe\x01\x02", 4));
  EXPECT_EQ(ok.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ParseOkPacket(std::string_view("\x00\x00\x00\x02", 4)).status().code(),
            absl::StatusCode::kOutOfRange);
}

// Guards EOF parsing and the < 9 byte rule that separates it from rows.
TEST(ResponsePacketsTest, ParsesEofAndClassifiesBy0xFEAndLength) {
  // The end-of-rows EOF of the zeek capture: warnings 0, status 0x0022.
  std::string eof("\xfe\x00\x00\x22\x00", 5);
  BR_ASSERT_OK_AND_ASSIGN(EofPacket e, ParseEofPacket(eof));
  EXPECT_EQ(e.warnings, 0);
  EXPECT_EQ(e.status_flags, 0x22);
  EXPECT_EQ(ClassifyResponse(eof), ResponseKind::kEof);
  std::string row(9, '\0');
  row[0] = '\xfe';
  EXPECT_EQ(ClassifyResponse(row), ResponseKind::kOther);
  EXPECT_EQ(ClassifyResponse(std::string_view("\xff\x01\x00", 3)), ResponseKind::kErr);
  EXPECT_EQ(ClassifyResponse(""), ResponseKind::kOther);
  EXPECT_EQ(ParseEofPacket(std::string_view("\xfe\x00", 2)).status().code(),
            absl::StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace binrelay::protocol
