#include "proxy/server_session.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "protocol/capabilities.h"
#include "protocol/server_error.h"
#include "protocol/server_packets.h"
#include "protocol/status_macros.h"
#include "spdlog/spdlog.h"
#include "proxy/admin_responder.h"
#include "proxy/client_error.h"

namespace binrelay::proxy {
namespace {

constexpr uint16_t kErMalformedPacket = 1835;  // ER_MALFORMED_PACKET, HY000
constexpr std::string_view kMariaDbCompatPrefix = "5.5.5-";

std::string DisplayVersion(std::string_view v) {
  if (v.starts_with(kMariaDbCompatPrefix)) v.remove_prefix(kMariaDbCompatPrefix.size());
  return std::string(v);
}

}  // namespace

ServerSession::ServerSession(ServerSessionOptions options, AdminHandler* admin, DumpHandler* dump)
    : options_(std::move(options)),
      admin_(admin),
      dump_(dump),
      auth_(options_.auth),
      reader_(options_.max_packet) {}

absl::Status ServerSession::Start(std::string* out) {
  if (state_ != State::kNew) return absl::FailedPreconditionError("session already started");
  BR_ASSIGN_OR_RETURN(std::string nonce, ServerAuth::NewNonce());
  BR_ASSIGN_OR_RETURN(std::string greeting,
                      auth_.Greeting(options_.server_version, options_.connection_id,
                                     std::move(nonce)));
  uint8_t seq = 0;
  protocol::AppendFramedPacket(out, greeting, &seq);
  reader_.set_next_seq(seq);
  state_ = State::kAuth;
  return absl::OkStatus();
}

void ServerSession::Reply(std::string* out, std::string_view payload) {
  uint8_t seq = reader_.next_seq();
  protocol::AppendFramedPacket(out, payload, &seq);
  reader_.set_next_seq(seq);
}

void ServerSession::ReplyError(std::string* out, uint16_t code, std::string_view sql_state,
                               std::string_view message) {
  Reply(out, protocol::BuildErrPacket(code, sql_state, message));
}

absl::Status ServerSession::Close(absl::Status why) {
  state_ = State::kClosed;
  return why;
}

absl::Status ServerSession::Feed(std::string_view bytes, std::string* out) {
  while (!bytes.empty()) {
    char* dst = nullptr;
    size_t room = PrepareRead(bytes.size(), &dst);
    size_t n = std::min(room, bytes.size());
    std::copy_n(bytes.data(), n, dst);
    CommitRead(n);
    bytes.remove_prefix(n);
  }
  return Process(out);
}

absl::Status ServerSession::Process(std::string* out) {
  while (state_ == State::kAuth || state_ == State::kCommand) {
    auto packet = reader_.Next();
    if (!packet.ok()) {
      // PacketReader reports both an oversized length and a sequence error as
      // DataLoss; the client needs the matching server error code.
      bool too_large = absl::StrContains(packet.status().message(), "exceeds the limit");
      ReplyError(out, too_large ? protocol::server_error::kNetPacketTooLarge
                                : kErNetPacketsOutOfOrder,
                 "08S01",
                 too_large ? absl::StrCat("Got a packet bigger than 'max_allowed_packet' bytes (",
                                          options_.max_packet, ")")
                           : std::string("Got packets out of order"));
      return Close(Annotate(packet.status(), "client packet"));
    }
    if (!packet->has_value()) return absl::OkStatus();
    BR_RETURN_IF_ERROR(HandlePacket((*packet)->payload, out));
  }
  return absl::OkStatus();
}

absl::Status ServerSession::HandlePacket(std::string_view payload, std::string* out) {
  if (state_ == State::kAuth) return HandleAuthPacket(payload, out);
  absl::Status st = HandleCommand(payload, out);
  // Every command starts a new exchange at sequence id 0; a dump keeps
  // counting from its request.
  if (state_ == State::kCommand) reader_.set_next_seq(0);
  return st;
}

absl::Status ServerSession::HandleAuthPacket(std::string_view payload, std::string* out) {
  ServerAuth::Step step = auth_.OnClientPacket(payload);
  for (const auto& r : step.replies) Reply(out, r);
  switch (step.kind) {
    case ServerAuth::Step::Kind::kContinue:
      return absl::OkStatus();
    case ServerAuth::Step::Kind::kDone:
      state_ = State::kCommand;
      reader_.set_next_seq(0);
      return absl::OkStatus();
    case ServerAuth::Step::Kind::kStartTls:
      state_ = State::kStartTls;
      return absl::OkStatus();
    case ServerAuth::Step::Kind::kFailed:
      break;
  }
  return Close(absl::PermissionDeniedError(
      absl::StrCat("authentication of user '", AV(auth_.user()), "' failed")));
}

absl::Status ServerSession::HandleCommand(std::string_view payload, std::string* out) {
  if (payload.empty()) {
    ReplyError(out, kErMalformedPacket, "HY000", "Malformed communication packet: empty command");
    return absl::OkStatus();
  }
  const uint8_t command = static_cast<uint8_t>(payload[0]);
  namespace cmd = protocol::command;
  switch (command) {
    case cmd::kQuit:
      state_ = State::kClosed;
      return absl::OkStatus();
    case cmd::kPing:
    case cmd::kInitDb:
      Reply(out, protocol::BuildOkPacket());
      return absl::OkStatus();
    case cmd::kQuery: {
      AdminContext ctx{admin_, DisplayVersion(options_.server_version), &user_variables_};
      AdminReply r = AnswerQuery(payload.substr(1), ctx);
      if (r.kind == AdminReply::Kind::kOk) {
        Reply(out, protocol::BuildOkPacket());
      } else if (r.kind == AdminReply::Kind::kError) {
        // protocol.md §4.4: log what replicas send that binrelay does not
        // answer, so a new replica option shows up in the log.
        spdlog::info("client {} (user '{}'): error {} for query: {}: {}", options_.auth.peer_host,
                     auth_.user(), r.error_code, std::string(payload.substr(1, 200)), r.message);
        ReplyError(out, r.error_code, r.sql_state, r.message);
      } else {
        uint8_t seq = reader_.next_seq();
        protocol::AppendTextResultSet(out, &seq, r.result.columns, r.result.rows);
        reader_.set_next_seq(seq);
      }
      return absl::OkStatus();
    }
    case cmd::kRegisterSlave: {
      auto reg = ParseRegisterSlave(payload);
      if (!reg.ok()) {
        ReplyError(out, kErMalformedPacket, "HY000",
                   absl::StrCat("Malformed COM_REGISTER_SLAVE: ", reg.status().message()));
        return absl::OkStatus();
      }
      registration_ = *reg;
      admin_->ReplicaRegistered(*reg);
      Reply(out, protocol::BuildOkPacket());
      return absl::OkStatus();
    }
    case cmd::kBinlogDump:
    case cmd::kBinlogDumpGtid:
      return HandleDump(payload, out);
    default:
      ReplyError(out, protocol::server_error::kUnknownCommand, "08S01",
                 absl::StrCat("Unknown command 0x", absl::Hex(command, absl::kZeroPad2)));
      return absl::OkStatus();
  }
}

absl::Status ServerSession::HandleDump(std::string_view payload, std::string* out) {
  const bool gtid = static_cast<uint8_t>(payload[0]) == protocol::command::kBinlogDumpGtid;
  const char* what = gtid ? "COM_BINLOG_DUMP_GTID" : "COM_BINLOG_DUMP";
  auto request = gtid ? ParseBinlogDumpGtid(payload) : ParseBinlogDump(payload);
  if (!request.ok()) {
    // A name too long for the source ends the connection without a word;
    // a truncated packet gets ER_MALFORMED_PACKET first (MySQL's READ_INT).
    if (!absl::IsInvalidArgument(request.status())) {
      ReplyError(out, kErMalformedPacket, "HY000", "Malformed communication packet.");
    }
    return Close(Annotate(request.status(), what));
  }
  request->settings = ReadDumpSettings(user_variables_, skip_replication_);
  request->peer = options_.auth.peer_host;
  request->connection_id = options_.connection_id;
  dump_request_ = *request;
  auto stream = dump_->StartDump(*request);
  if (stream.ok()) {
    dump_stream_ = std::move(*stream);
    state_ = State::kDumpAccepted;
    return absl::OkStatus();
  }
  // Real primaries answer a refused dump with its error and end the session
  // (1236 stops a replica; 1105, for what binrelay has not stored yet, makes
  // it retry), except that MariaDB does not know COM_BINLOG_DUMP_GTID at all
  // and answers it as any unknown command, keeping the connection.
  protocol::ServerError e = ClientErrorFor(stream.status(),
                                           protocol::server_error::kMasterFatalReadingBinlog);
  ReplyError(out, e.code, e.sql_state, e.message);
  if (e.code == protocol::server_error::kUnknownCommand) {
    spdlog::info("client {} (user '{}'): {} refused with error {}: {}", options_.auth.peer_host,
                 auth_.user(), what, e.code, e.message);
    return absl::OkStatus();
  }
  return Close(Annotate(stream.status(), what));
}

}  // namespace binrelay::proxy
