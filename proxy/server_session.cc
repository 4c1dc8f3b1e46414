#include "proxy/server_session.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/capabilities.h"
#include "protocol/server_error.h"
#include "protocol/server_packets.h"
#include "protocol/statement_redaction.h"
#include "protocol/status_macros.h"
#include "proxy/admin_parser.h"
#include "proxy/client_error.h"
#include "proxy/forward_policy.h"
#include "spdlog/spdlog.h"

namespace binrelay::proxy {
namespace {

constexpr uint16_t kErMalformedPacket = 1835;         // ER_MALFORMED_PACKET, HY000
constexpr uint16_t kErUnknownStmtHandler = 1243;      // ER_UNKNOWN_STMT_HANDLER, HY000
constexpr uint16_t kErMaxPreparedStmtCount = 1461;    // ER_MAX_PREPARED_STMT_COUNT_REACHED
constexpr std::string_view kMariaDbCompatPrefix = "5.5.5-";

std::string DisplayVersion(std::string_view v) {
  if (v.starts_with(kMariaDbCompatPrefix)) v.remove_prefix(kMariaDbCompatPrefix.size());
  return std::string(v);
}

// Placeholders of a statement ('?' outside quotes and comments).
size_t CountPlaceholders(std::string_view sql) {
  size_t n = 0;
  char quote = 0;
  for (size_t i = 0; i < sql.size(); ++i) {
    char c = sql[i];
    if (quote != 0) {
      if (c == '\\' && quote != '`') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '\'' || c == '"' || c == '`') {
      quote = c;
    } else if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      size_t close = sql.find("*/", i + 2);
      i = close == std::string_view::npos ? sql.size() : close + 1;
    } else if (c == '?') {
      ++n;
    }
  }
  return n;
}

}  // namespace

ServerSession::ServerSession(ServerSessionOptions options, AdminHandler* admin, DumpHandler* dump,
                             QueryForwarder* forwarder, ConnectionControl* connections)
    : options_(std::move(options)),
      admin_(admin),
      dump_(dump),
      forwarder_(forwarder),
      connections_(connections),
      auth_(options_.auth),
      reader_(options_.max_packet, options_.read_buffer) {
  session_.connection_id = options_.connection_id;
  session_.host = options_.auth.peer_host;
}

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

void ServerSession::LogRefusal(std::string_view what, uint16_t code, std::string_view message) {
  // Log what clients send that binrelay does not answer, so a new client's
  // needs show up in the log.
  spdlog::info("client {} (user '{}', connection {}): error {} for {}: {}",
               options_.auth.peer_host, auth_.user(), options_.connection_id, code,
               what.substr(0, 200), message);
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
      // The reader says which: a length over the limit (refused before the
      // payload is buffered) or a sequence id out of order.
      const bool too_large = absl::IsResourceExhausted(packet.status());
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
  // counting from its request, deferred work from its command.
  if (state_ == State::kCommand) {
    reader_.set_next_seq(0);
    current_statement_.clear();  // answered: PROCESSLIST shows a Sleep without Info
  }
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
      session_.user = auth_.user();
      session_.admin = auth_.is_admin();
      session_.database = auth_.database();
      collation_ = auth_.collation();
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

AdminContext ServerSession::Context() {
  AdminContext ctx;
  ctx.handler = admin_;
  ctx.connections = connections_;
  ctx.version = DisplayVersion(options_.server_version);
  ctx.session = &session_;
  ctx.forwarding = forwarder_ != nullptr;
  return ctx;
}

ForwardSession ServerSession::ForwardTarget() const {
  return ForwardSession{session_.database, collation_};
}

void ServerSession::Defer(Pending what, DeferredWork work) {
  pending_ = what;
  deferred_ = std::move(work);
  state_ = State::kDeferred;
}

absl::Status ServerSession::SendAdminReply(const AdminReply& r, bool binary, std::string* out) {
  if (r.kind == AdminReply::Kind::kOk) {
    Reply(out, protocol::BuildOkPacket());
  } else if (r.kind == AdminReply::Kind::kError) {
    LogRefusal(current_statement_, r.error_code, r.message);
    ReplyError(out, r.error_code, r.sql_state, r.message);
    if (r.close_connection) return Close(absl::CancelledError("the client killed its connection"));
  } else {
    uint8_t seq = reader_.next_seq();
    if (binary) {
      protocol::AppendBinaryResultSet(out, &seq, r.result.columns, r.result.rows);
    } else {
      protocol::AppendTextResultSet(out, &seq, r.result.columns, r.result.rows);
    }
    reader_.set_next_seq(seq);
  }
  return absl::OkStatus();
}

absl::Status ServerSession::HandleQuery(std::string_view sql, std::string* out) {
  current_statement_ = protocol::RedactedStatement(sql, kShownStatementBytes);
  AdminContext ctx = Context();
  QueryPlan plan = PlanQuery(sql, ctx);
  switch (plan.kind) {
    case QueryPlan::Kind::kReply:
      return SendAdminReply(plan.reply, false, out);
    case QueryPlan::Kind::kBlocking:
      pending_binary_ = false;
      Defer(Pending::kQuery, [ctx, stmt = std::move(plan.statement)] {
        DeferredResult r;
        r.admin = AnswerStatement(stmt, ctx);
        return r;
      });
      return absl::OkStatus();
    case QueryPlan::Kind::kForward:
      Defer(Pending::kQuery, [fwd = forwarder_, target = ForwardTarget(), q = std::string(sql)] {
        DeferredResult r;
        auto packets = fwd->Query(target, q);
        if (packets.ok()) {
          r.packets = *std::move(packets);
        } else {
          r.status = packets.status();
        }
        return r;
      });
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

absl::Status ServerSession::FinishDeferred(DeferredResult result, std::string* out) {
  if (state_ != State::kDeferred) return absl::FailedPreconditionError("nothing deferred");
  state_ = State::kCommand;
  const Pending what = pending_;
  pending_ = Pending::kNone;
  absl::Status close;
  if (result.admin) {
    close = SendAdminReply(*result.admin, pending_binary_, out);
  } else if (!result.status.ok()) {
    protocol::ServerError e = ClientErrorFor(result.status, protocol::server_error::kUnknownError);
    if (!protocol::GetServerError(result.status)) {
      e.message = absl::StrCat("binrelay could not forward this statement to its source: ",
                               result.status.message());
    }
    LogRefusal(current_statement_, e.code, e.message);
    ReplyError(out, e.code, e.sql_state, e.message);
  } else if (what == Pending::kPrepare && !result.packets.empty() &&
             static_cast<uint8_t>(result.packets[0][0]) == 0x00 &&
             result.packets[0].size() >= 12) {
    // The source's statement id is its own: the client gets binrelay's.
    protocol::ByteCursor c(result.packets[0]);
    c.Skip(5);
    pending_statement_.columns = c.U16();
    pending_statement_.params = c.U16();
    const uint32_t id = next_statement_id_++;
    statements_[id] = pending_statement_;
    std::string head = result.packets[0];
    for (int i = 0; i < 4; ++i) head[1 + i] = static_cast<char>((id >> (8 * i)) & 0xFF);
    Reply(out, head);
    for (size_t i = 1; i < result.packets.size(); ++i) Reply(out, result.packets[i]);
  } else {
    for (const std::string& p : result.packets) Reply(out, p);
  }
  pending_statement_ = Statement{};
  if (state_ == State::kCommand) reader_.set_next_seq(0);
  current_statement_.clear();
  return close;
}

absl::Status ServerSession::HandlePrepare(std::string_view sql, std::string* out) {
  current_statement_ = protocol::RedactedStatement(sql, kShownStatementBytes);
  if (statements_.size() >= kMaxPreparedStatements) {
    ReplyError(out, kErMaxPreparedStmtCount, "42000",
               absl::StrCat("Can't create more than max_prepared_stmt_count statements "
                            "(binrelay keeps ", kMaxPreparedStatements, " per connection)"));
    return absl::OkStatus();
  }
  Statement st;
  st.sql = std::string(sql);
  auto parsed = ParseAdminStatement(sql);
  if (parsed.ok()) {
    // binrelay's own statement: its columns are known by answering it once
    // (only statements that return rows; a SET runs at EXECUTE).
    if (CountPlaceholders(sql) > 0) {
      ReplyError(out, kErNotSupportedYet, "42000",
                 "binrelay answers its own statements without parameters only");
      return absl::OkStatus();
    }
    std::vector<std::string> columns;
    using K = AdminStatement::Kind;
    const bool rows = parsed->kind != K::kSet && parsed->kind != K::kUse &&
                      parsed->kind != K::kTransaction && parsed->kind != K::kKill &&
                      parsed->kind != K::kPurgeBinaryLogsTo &&
                      parsed->kind != K::kCutoverMove && parsed->kind != K::kChangeSource &&
                      !parsed->may_block;
    if (rows) {
      AdminReply r = AnswerStatement(*parsed, Context());
      if (r.kind == AdminReply::Kind::kError) return SendAdminReply(r, false, out);
      columns = r.result.columns;
    }
    const uint32_t id = next_statement_id_++;
    st.columns = static_cast<uint16_t>(columns.size());
    statements_[id] = st;
    Reply(out, protocol::BuildPrepareOk(id, st.columns, 0));
    if (!columns.empty()) {
      for (const auto& c : columns) Reply(out, protocol::BuildColumnDefinition(c));
      Reply(out, protocol::BuildEofPacket());
    }
    return absl::OkStatus();
  }
  ForwardDecision d = ClassifyStatement(sql, session_.database);
  if (d.kind == ForwardDecision::Kind::kForward && forwarder_ != nullptr) {
    st.forwarded = true;
    pending_statement_ = std::move(st);
    Defer(Pending::kPrepare, [fwd = forwarder_, target = ForwardTarget(), q = std::string(sql)] {
      DeferredResult r;
      auto packets = fwd->Prepare(target, q);
      if (packets.ok()) {
        r.packets = *std::move(packets);
      } else {
        r.status = packets.status();
      }
      return r;
    });
    return absl::OkStatus();
  }
  AdminContext ctx = Context();
  AdminReply refusal = PlanQuery(sql, ctx).reply;  // the same refusal as COM_QUERY gets
  if (refusal.kind != AdminReply::Kind::kError) {
    refusal = AdminReply::Error(kErNotSupportedYet, "42000",
                                "binrelay cannot prepare this statement");
  }
  return SendAdminReply(refusal, false, out);
}

absl::Status ServerSession::HandleExecute(std::string_view payload, std::string* out) {
  protocol::ByteCursor c(payload);
  c.Skip(1);
  const uint32_t id = c.U32();
  const uint8_t flags = c.U8();
  c.Skip(4);  // iteration count, always 1
  if (!c.ok()) {
    ReplyError(out, kErMalformedPacket, "HY000", "Malformed communication packet.");
    return absl::OkStatus();
  }
  auto it = statements_.find(id);
  if (it == statements_.end()) {
    ReplyError(out, kErUnknownStmtHandler, "HY000",
               absl::StrCat("Unknown prepared statement handler (", id,
                            ") given to mysqld_stmt_execute"));
    return absl::OkStatus();
  }
  Statement& st = it->second;
  current_statement_ = protocol::RedactedStatement(st.sql, kShownStatementBytes);
  if (st.long_data) {
    ReplyError(out, kErNotSupportedYet, "42000",
               "binrelay does not forward COM_STMT_SEND_LONG_DATA parameters");
    return absl::OkStatus();
  }
  if (!st.forwarded) {
    auto parsed = ParseAdminStatement(st.sql);
    if (!parsed.ok()) return SendAdminReply(PlanQuery(st.sql, Context()).reply, true, out);
    return SendAdminReply(AnswerStatement(*parsed, Context()), true, out);
  }
  // Parameters: NULL bitmap, new-params-bound flag, types (when bound), values.
  std::string tail;
  protocol::AppendFixed(&tail, 0, 1);  // no cursor: the whole result comes back
  (void)flags;
  protocol::AppendFixed(&tail, 1, 4);
  if (st.params > 0) {
    const size_t bitmap = (st.params + 7) / 8;
    std::string_view nulls = c.Bytes(bitmap);
    const uint8_t bound = c.U8();
    if (!c.ok()) {
      ReplyError(out, kErMalformedPacket, "HY000", "Malformed communication packet.");
      return absl::OkStatus();
    }
    if (bound != 0) {
      std::string_view types = c.Bytes(2 * st.params);
      if (!c.ok()) {
        ReplyError(out, kErMalformedPacket, "HY000", "Malformed communication packet.");
        return absl::OkStatus();
      }
      st.param_types = std::string(types);
    } else if (st.param_types.empty()) {
      ReplyError(out, kErWrongArguments, "HY000",
                 "Incorrect arguments to mysqld_stmt_execute (parameter types were never sent)");
      return absl::OkStatus();
    }
    tail.append(nulls);
    tail.push_back('\x01');  // types follow: the source's statement may be new
    tail.append(st.param_types);
    tail.append(c.Rest());
  }
  Defer(Pending::kExecute, [fwd = forwarder_, target = ForwardTarget(), sql = st.sql,
                            tail = std::move(tail)] {
    DeferredResult r;
    auto packets = fwd->Execute(target, sql, tail);
    if (packets.ok()) {
      r.packets = *std::move(packets);
    } else {
      r.status = packets.status();
    }
    return r;
  });
  return absl::OkStatus();
}

absl::Status ServerSession::HandleStatementCommand(uint8_t command, std::string_view payload,
                                                   std::string* out) {
  namespace cmd = protocol::command;
  protocol::ByteCursor c(payload);
  c.Skip(1);
  const uint32_t id = c.U32();
  auto it = c.ok() ? statements_.find(id) : statements_.end();
  switch (command) {
    case cmd::kStmtClose:
      // No reply, whether or not the statement exists.
      if (it != statements_.end()) statements_.erase(it);
      return absl::OkStatus();
    case cmd::kStmtSendLongData:
      // No reply; the EXECUTE that follows is refused.
      if (it != statements_.end()) it->second.long_data = true;
      return absl::OkStatus();
    case cmd::kStmtReset:
      if (it == statements_.end()) {
        ReplyError(out, kErUnknownStmtHandler, "HY000",
                   absl::StrCat("Unknown prepared statement handler (", id,
                                ") given to mysqld_stmt_reset"));
        return absl::OkStatus();
      }
      it->second.long_data = false;
      Reply(out, protocol::BuildOkPacket());
      return absl::OkStatus();
    default:  // kStmtFetch: binrelay never opens a cursor
      ReplyError(out, kErUnknownStmtHandler, "HY000",
                 absl::StrCat("Unknown prepared statement handler (", id,
                              ") given to mysqld_stmt_fetch: binrelay opens no cursors"));
      return absl::OkStatus();
  }
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
      Reply(out, protocol::BuildOkPacket());
      return absl::OkStatus();
    case cmd::kInitDb:
      session_.database = std::string(payload.substr(1));
      Reply(out, protocol::BuildOkPacket());
      return absl::OkStatus();
    case cmd::kResetConnection: {
      // As COM_CHANGE_USER to the same user: variables and statements go.
      const uint32_t id = session_.connection_id;
      const std::string user = session_.user, host = session_.host;
      const bool admin = session_.admin;
      session_ = SessionState{};
      session_.connection_id = id;
      session_.user = user;
      session_.admin = admin;  // the same account, the same rights
      session_.host = host;
      statements_.clear();
      Reply(out, protocol::BuildOkPacket());
      return absl::OkStatus();
    }
    case cmd::kSetOption:
      Reply(out, protocol::BuildEofPacket());  // as MySQL answers it
      return absl::OkStatus();
    case cmd::kStatistics: {
      // mysqladmin status: a line of text, as servers answer it.
      std::string uptime = "0", threads = "0";
      for (const auto& [name, value] : admin_->StatusVariables()) {
        if (name == "Uptime") uptime = value;
        if (name == "Threads_connected") threads = value;
      }
      Reply(out, absl::StrCat("Uptime: ", uptime, "  Threads: ", threads,
                              "  Questions: 0  Slow queries: 0  Opens: 0  Open tables: 0  "
                              "Queries per second avg: 0.000"));
      return absl::OkStatus();
    }
    case cmd::kProcessKill: {
      protocol::ByteCursor c(payload);
      c.Skip(1);
      const uint32_t id = c.U32();
      if (!c.ok()) {
        ReplyError(out, kErMalformedPacket, "HY000", "Malformed communication packet.");
        return absl::OkStatus();
      }
      return HandleQuery(absl::StrCat("KILL ", id), out);
    }
    case cmd::kQuery:
      return HandleQuery(payload.substr(1), out);
    case cmd::kStmtPrepare:
      return HandlePrepare(payload.substr(1), out);
    case cmd::kStmtExecute:
      return HandleExecute(payload, out);
    case cmd::kStmtClose:
    case cmd::kStmtReset:
    case cmd::kStmtSendLongData:
    case cmd::kStmtFetch:
      return HandleStatementCommand(command, payload, out);
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
    default: {
      const std::string what = absl::StrCat("command 0x", absl::Hex(command, absl::kZeroPad2));
      LogRefusal(what, protocol::server_error::kUnknownCommand, "Unknown command");
      ReplyError(out, protocol::server_error::kUnknownCommand, "08S01", "Unknown command");
      return absl::OkStatus();
    }
  }
}

absl::Status ServerSession::HandleDump(std::string_view payload, std::string* out) {
  const bool gtid = static_cast<uint8_t>(payload[0]) == protocol::command::kBinlogDumpGtid;
  const char* what = gtid ? "COM_BINLOG_DUMP_GTID" : "COM_BINLOG_DUMP";
  auto request = gtid ? ParseBinlogDumpGtid(payload) : ParseBinlogDump(payload);
  if (!request.ok()) {
    // A name too long for the source is never looked up: MariaDB's
    // dispatch_command (sql/sql_parse.cc, COM_BINLOG_DUMP) skips
    // mysql_binlog_send, ends the statement with a plain OK and closes. A
    // truncated packet gets ER_MALFORMED_PACKET (MySQL's READ_INT).
    if (absl::IsInvalidArgument(request.status())) {
      Reply(out, protocol::BuildOkPacket());
      spdlog::info("client {} (user '{}', connection {}): {} refused with OK and close, as "
                   "the source does: {}",
                   options_.auth.peer_host, auth_.user(), options_.connection_id, what,
                   SV(request.status().message()));
    } else {
      ReplyError(out, kErMalformedPacket, "HY000", "Malformed communication packet.");
      LogRefusal(what, kErMalformedPacket, SV(request.status().message()));
    }
    return Close(Annotate(request.status(), what));
  }
  request->settings = ReadDumpSettings(session_.user_variables, session_.skip_replication);
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
    LogRefusal(what, e.code, e.message);
    return absl::OkStatus();
  }
  return Close(Annotate(stream.status(), what));
}

}  // namespace binrelay::proxy
