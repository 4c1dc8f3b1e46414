#include "protocol/client_connection.h"

#include "absl/strings/str_cat.h"
#include "protocol/auth.h"
#include "protocol/blocking_transport.h"
#include "protocol/byte_cursor.h"
#include "protocol/capabilities.h"
#include "protocol/handshake.h"
#include "protocol/response_packets.h"
#include "protocol/server_error.h"
#include "protocol/status_macros.h"
#include "protocol/text_resultset.h"

namespace binrelay::protocol {

ClientConnection::ClientConnection(const ConnectOptions& options) : options_(options) {}

ClientConnection::~ClientConnection() = default;

std::string ClientConnection::peer() const {
  return absl::StrCat(options_.host, ":", options_.port);
}

absl::StatusOr<std::unique_ptr<ClientConnection>> ClientConnection::Connect(
    const ConnectOptions& options) {
  std::unique_ptr<ClientConnection> conn(new ClientConnection(options));
  const Clock::time_point deadline = Clock::now() + options.connect_timeout;
  BR_ASSIGN_OR_RETURN(conn->transport_,
                      BlockingTransport::Connect(options.host, options.port,
                                                 options.tls_ca_file,
                                                 options.tls_verify_identity, deadline));
  absl::Status s = conn->Handshake(deadline);
  if (!s.ok()) {
    conn->transport_->Close();
    return s;
  }
  for (const std::string& sql : options.session_sql) {
    if (auto q = conn->Query(sql); !q.ok()) {
      conn->transport_->Close();
      return Annotate(q.status(), absl::StrCat("setting up the session on ", conn->peer(),
                                               " (", sql, ")"));
    }
  }
  return conn;
}

absl::Status ClientConnection::Handshake(Clock::time_point deadline) {
  reader_.set_next_seq(0);
  BR_ASSIGN_OR_RETURN(std::string_view greeting, ReadPacketUntil(deadline));
  if (ClassifyResponse(greeting) == ResponseKind::kErr) {
    // E.g. 1040 too many connections, 1129/1130 host blocked or not allowed.
    return ErrPacketToStatus(greeting, peer());
  }
  absl::StatusOr<InitialHandshake> hs = ParseInitialHandshake(greeting);
  if (!hs.ok()) return Annotate(hs.status(), absl::StrCat("greeting from ", peer()));
  if (!(hs->capabilities & cap::kProtocol41)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "server ", peer(), " (", hs->server_version, ") lacks CLIENT_PROTOCOL_41; binrelay "
        "needs MySQL >= 4.1 or MariaDB"));
  }
  info_.version = hs->DisplayVersion();
  info_.connection_id = hs->connection_id;
  info_.is_mariadb = hs->is_mariadb;

  uint64_t caps = cap::kClientDefault & hs->capabilities;
  if (!options_.database.empty()) caps |= cap::kConnectWithDb & hs->capabilities;
  caps |= cap::kConnectAttrs & hs->capabilities;
  if (options_.bulk_operations) caps |= cap::kMariaDbStmtBulk & hs->capabilities;

  const bool server_tls = hs->capabilities & cap::kSsl;
  if (options_.tls == ConnectOptions::Tls::kRequired && !server_tls) {
    return absl::FailedPreconditionError(
        absl::StrCat("TLS is required but server ", peer(), " does not offer it (have_ssl "
                     "is off); configure ssl_cert/ssl_key on the server or disable TLS"));
  }
  if (options_.tls != ConnectOptions::Tls::kDisabled && server_tls) {
    caps |= cap::kSsl;
    BR_RETURN_IF_ERROR(WritePacket(BuildSslRequest(caps), deadline));
    BR_RETURN_IF_ERROR(transport_->StartTls(deadline));
    info_.tls = true;
  }
  info_.capabilities = caps;
  return Authenticate(hs->auth_plugin, hs->nonce, caps, deadline);
}

absl::Status ClientConnection::Authenticate(std::string_view server_plugin,
                                            std::string_view nonce, uint64_t caps,
                                            Clock::time_point deadline) {
  AuthExchange auth(options_.password, info_.tls, options_.rsa);
  BR_ASSIGN_OR_RETURN(std::string auth_response, auth.Start(server_plugin, nonce));
  HandshakeResponse response;
  response.capabilities = caps;
  response.user = options_.user;
  response.auth_response = std::move(auth_response);
  response.database = options_.database;
  response.auth_plugin = auth.plugin();
  response.attributes = {{"_client_name", "binrelay"}, {"program_name", "binrelay"}};
  BR_ASSIGN_OR_RETURN(std::string packet, BuildHandshakeResponse(response));
  BR_RETURN_IF_ERROR(WritePacket(packet, deadline));

  while (true) {
    BR_ASSIGN_OR_RETURN(std::string_view reply, ReadPacketUntil(deadline));
    if (ClassifyResponse(reply) == ResponseKind::kErr) return AuthError(reply);
    absl::StatusOr<AuthExchange::Step> step = auth.OnServerPacket(reply);
    if (!step.ok()) {
      return Annotate(step.status(), absl::StrCat("authenticating user '", options_.user,
                                                  "' at ", peer(), " with ", auth.plugin()));
    }
    if (step->kind == AuthExchange::Step::kDone) break;
    if (step->kind == AuthExchange::Step::kSend) {
      BR_RETURN_IF_ERROR(WritePacket(step->payload, deadline));
    }
  }
  info_.auth_plugin = auth.plugin();
  return absl::OkStatus();
}

absl::Status ClientConnection::AuthError(std::string_view err_payload) {
  absl::StatusOr<ServerError> err = ParseErrPacket(err_payload);
  if (!err.ok()) return ErrPacketToStatus(err_payload, peer());
  if (err->code == server_error::kAccessDenied) {
    return ServerErrorStatus(
        *err, absl::StatusCode::kPermissionDenied,
        absl::StrCat("access denied for user '", options_.user, "' at ", peer(),
                     " (error 1045): check the user and password",
                     options_.credentials_from.empty() ? "" : " (",
                     options_.credentials_from, options_.credentials_from.empty() ? "" : ")",
                     "; server said: ", err->message));
  }
  // Built directly (not via Annotate) so the ServerError payload survives.
  absl::Status plain = ServerErrorStatus(*err, peer());
  return ServerErrorStatus(
      *err, plain.code(),
      absl::StrCat("authenticating user '", options_.user, "': ", plain.message()));
}

absl::Status ClientConnection::WritePacket(std::string_view payload,
                                           Clock::time_point deadline) {
  uint8_t seq = reader_.next_seq();
  // TLS writes each buffer of a gathered write as a record of its own: a
  // small command is copied behind its header instead.
  constexpr size_t kGatherFrom = 16 << 10;
  if (payload.size() < kMaxPacketChunk && (!transport_->tls() || payload.size() >= kGatherFrom)) {
    // One packet: its header and the caller's bytes in one gathered write,
    // with no copy of a payload that may be a megabyte of bulk rows.
    const uint32_t len = static_cast<uint32_t>(payload.size());
    const char head[kPacketHeaderSize] = {static_cast<char>(len & 0xFF),
                                          static_cast<char>((len >> 8) & 0xFF),
                                          static_cast<char>((len >> 16) & 0xFF),
                                          static_cast<char>(seq)};
    reader_.set_next_seq(static_cast<uint8_t>(seq + 1));
    return transport_->WriteAll(std::string_view(head, sizeof head), payload, deadline);
  }
  write_buf_.clear();
  AppendFramedPacket(&write_buf_, payload, &seq);
  reader_.set_next_seq(seq);
  absl::Status s = transport_->WriteAll(write_buf_, deadline);
  // Don't keep a 16 MiB+ buffer around after one large command.
  if (write_buf_.capacity() > (size_t{1} << 20)) std::string().swap(write_buf_);
  return s;
}

absl::Status ClientConnection::WriteOutOfBand(std::string_view payload) {
  if (payload.size() >= kMaxPacketChunk) {
    return absl::InvalidArgumentError("an out-of-band packet must be under 16 MiB");
  }
  const uint8_t expected = reader_.next_seq();
  reader_.set_next_seq(0);
  absl::Status s = WritePacket(payload, Clock::now() + options_.io_timeout);
  reader_.set_next_seq(expected);
  return s;
}

absl::Status ClientConnection::WriteCommand(std::string_view payload) {
  reader_.set_next_seq(0);
  return WritePacket(payload, Clock::now() + options_.io_timeout);
}

absl::StatusOr<std::string_view> ClientConnection::ReadPacketUntil(Clock::time_point deadline) {
  while (true) {
    absl::StatusOr<std::optional<Packet>> packet = reader_.Next();
    if (!packet.ok()) return Fail(Annotate(packet.status(), absl::StrCat("from ", peer())));
    if (*packet) return (*packet)->payload;
    char* buf = nullptr;
    size_t room = reader_.PrepareWrite(0, &buf);
    BR_ASSIGN_OR_RETURN(size_t n, transport_->ReadSome(buf, room, deadline));
    reader_.CommitWrite(n);
  }
}

absl::StatusOr<std::string_view> ClientConnection::ReadPacket(std::chrono::milliseconds timeout) {
  // During a dump most packets are already buffered: hand them out without
  // reading the clock for a deadline that will not be needed.
  absl::StatusOr<std::optional<Packet>> packet = reader_.Next();
  if (!packet.ok()) return Fail(Annotate(packet.status(), absl::StrCat("from ", peer())));
  if (*packet) return (*packet)->payload;
  return ReadPacketUntil(Clock::now() + timeout);
}

absl::StatusOr<std::string_view> ClientConnection::ReadForQuery() {
  absl::StatusOr<std::string_view> p = ReadPacketUntil(Clock::now() + options_.io_timeout);
  if (!p.ok() && absl::IsDeadlineExceeded(p.status())) {
    // A half-read result cannot be resynchronised.
    return Fail(p.status());
  }
  return p;
}

absl::Status ClientConnection::Fail(absl::Status status) {
  if (transport_) transport_->Close();
  return status;
}

absl::Status ClientConnection::ReadResult(QueryResult* out, bool* more_results,
                                          TextRows* compact) {
  *more_results = false;
  BR_ASSIGN_OR_RETURN(std::string_view first, ReadForQuery());
  switch (ClassifyResponse(first)) {
    case ResponseKind::kErr:
      return ErrPacketToStatus(first, peer());
    case ResponseKind::kOk: {
      BR_ASSIGN_OR_RETURN(OkPacket ok, ParseOkPacket(first));
      out->affected_rows = ok.affected_rows;
      out->warnings = ok.warnings;
      *more_results = ok.status_flags & server_status::kMoreResultsExist;
      return absl::OkStatus();
    }
    default:
      break;
  }
  ByteCursor c(first);
  uint64_t columns = c.Lenenc();
  if (!c.ok() || columns == 0 || columns > 4096) {
    return Fail(absl::DataLossError(absl::StrCat(
        "malformed result set header from ", peer(), " (", first.size(), " bytes)")));
  }
  out->columns.clear();
  for (uint64_t i = 0; i < columns; ++i) {
    BR_ASSIGN_OR_RETURN(std::string_view def, ReadForQuery());
    absl::StatusOr<ColumnDefinition> col = ParseColumnDefinition(def);
    if (!col.ok()) {
      return Fail(Annotate(col.status(), absl::StrCat("column ", i, " definition from ", peer())));
    }
    out->columns.emplace_back(col->name);
  }
  BR_ASSIGN_OR_RETURN(std::string_view eof, ReadForQuery());
  if (ClassifyResponse(eof) != ResponseKind::kEof) {
    return Fail(absl::DataLossError(
        absl::StrCat("expected EOF after column definitions from ", peer())));
  }
  if (compact != nullptr) compact->Reset(columns);
  while (true) {
    BR_ASSIGN_OR_RETURN(std::string_view row, ReadForQuery());
    ResponseKind kind = ClassifyResponse(row);
    if (kind == ResponseKind::kErr) return ErrPacketToStatus(row, peer());
    if (kind == ResponseKind::kEof) {
      BR_ASSIGN_OR_RETURN(EofPacket end, ParseEofPacket(row));
      *more_results = end.status_flags & server_status::kMoreResultsExist;
      return absl::OkStatus();
    }
    if (compact != nullptr) {
      absl::Status s = compact->AppendRow(row);
      if (!s.ok()) return Fail(Annotate(s, absl::StrCat("row ", compact->size(), " from ", peer())));
      continue;
    }
    absl::Status s = ParseTextRow(row, columns, &row_scratch_);
    if (!s.ok()) return Fail(Annotate(s, absl::StrCat("row ", out->rows.size(), " from ", peer())));
    out->rows.push_back(row_scratch_);
  }
}

absl::Status ClientConnection::RunQuery(std::string_view sql, QueryResult* out,
                                        TextRows* compact) {
  std::string payload;
  payload.reserve(sql.size() + 1);
  payload.push_back(static_cast<char>(command::kQuery));
  payload.append(sql);
  BR_RETURN_IF_ERROR(WriteCommand(payload));
  bool more = false;
  BR_RETURN_IF_ERROR(ReadResult(out, &more, compact));
  while (more) {
    QueryResult ignored;
    BR_RETURN_IF_ERROR(ReadResult(&ignored, &more));
  }
  return absl::OkStatus();
}

absl::StatusOr<QueryResult> ClientConnection::Query(std::string_view sql) {
  QueryResult result;
  BR_RETURN_IF_ERROR(RunQuery(sql, &result, nullptr));
  return result;
}

absl::StatusOr<TextRows> ClientConnection::QueryRows(std::string_view sql) {
  TextRows rows;
  BR_RETURN_IF_ERROR(QueryRows(sql, &rows));
  return rows;
}

absl::Status ClientConnection::QueryRows(std::string_view sql, TextRows* into) {
  into->Reset(0);  // a statement without a result set leaves it empty
  QueryResult meta;
  return RunQuery(sql, &meta, into);
}

absl::StatusOr<ClientConnection::Prepared> ClientConnection::Prepare(std::string_view sql) {
  std::string payload;
  payload.reserve(sql.size() + 1);
  payload.push_back(static_cast<char>(command::kStmtPrepare));
  payload.append(sql);
  BR_RETURN_IF_ERROR(WriteCommand(payload));
  BR_ASSIGN_OR_RETURN(std::string_view first, ReadForQuery());
  if (ClassifyResponse(first) == ResponseKind::kErr) return ErrPacketToStatus(first, peer());
  // COM_STMT_PREPARE_OK: 0x00, id (4), columns (2), params (2), filler (1),
  // warnings (2) (sql/sql_prepare.cc send_prep_stmt).
  ByteCursor c(first);
  Prepared p;
  const uint8_t status = c.U8();
  p.id = static_cast<uint32_t>(c.Fixed(4));
  p.columns = static_cast<uint16_t>(c.Fixed(2));
  p.params = static_cast<uint16_t>(c.Fixed(2));
  if (!c.ok() || status != 0) {
    return Fail(absl::DataLossError(absl::StrCat("malformed COM_STMT_PREPARE reply from ", peer(),
                                                 " (", first.size(), " bytes)")));
  }
  // Definitions of the parameters, then of the columns, each list ended by
  // an EOF packet (DEPRECATE_EOF is never negotiated).
  for (int list = 0; list < 2; ++list) {
    const uint32_t n = list == 0 ? p.params : p.columns;
    if (n == 0) continue;
    for (uint32_t i = 0; i <= n; ++i) BR_RETURN_IF_ERROR(ReadForQuery().status());
  }
  return p;
}

absl::StatusOr<ClientConnection::CommandResult> ClientConnection::RunCommand(
    std::string_view command) {
  BR_RETURN_IF_ERROR(WriteCommand(command));
  return ReadCommandReply(command.empty() ? 0 : static_cast<uint8_t>(command[0]));
}

absl::StatusOr<ClientConnection::CommandResult> ClientConnection::ReadCommandReply(
    uint8_t command) {
  BR_ASSIGN_OR_RETURN(std::string_view reply, ReadForQuery());
  switch (ClassifyResponse(reply)) {
    case ResponseKind::kOk: {
      BR_ASSIGN_OR_RETURN(OkPacket ok, ParseOkPacket(reply));
      return CommandResult{ok.affected_rows, ok.warnings};
    }
    case ResponseKind::kErr:
      return ErrPacketToStatus(reply, peer());
    default:
      // A result set would leave packets we do not read: the connection
      // cannot be reused.
      return Fail(absl::DataLossError(absl::StrCat("unexpected result set from ", peer(),
                                                   " for command 0x", absl::Hex(command))));
  }
}

absl::Status ClientConnection::CloseStatement(uint32_t id) {
  std::string payload;
  payload.push_back(static_cast<char>(command::kStmtClose));
  AppendFixed(&payload, id, 4);
  return WriteCommand(payload);
}

absl::Status ClientConnection::Ping() {
  const char cmd = static_cast<char>(command::kPing);
  BR_RETURN_IF_ERROR(WriteCommand(std::string_view(&cmd, 1)));
  BR_ASSIGN_OR_RETURN(std::string_view reply, ReadForQuery());
  switch (ClassifyResponse(reply)) {
    case ResponseKind::kOk:
      return absl::OkStatus();
    case ResponseKind::kErr:
      return ErrPacketToStatus(reply, peer());
    default:
      return Fail(absl::DataLossError(absl::StrCat("unexpected reply to COM_PING from ", peer())));
  }
}

void ClientConnection::Quit() {
  if (!transport_ || !transport_->is_open()) return;
  const char cmd = static_cast<char>(command::kQuit);
  (void)WriteCommand(std::string_view(&cmd, 1));
  transport_->Close();
}

}  // namespace binrelay::protocol
