// ServerSession: the server side of one client connection, without sockets.
// Received bytes go into its PacketReader buffer (PrepareRead/CommitRead);
// Process() handles every complete packet and appends framed replies:
// greeting → authentication of the one configured user (server_auth.h) →
// command phase:
//   COM_QUERY           admin_responder.h answers it, or plans it for the
//                       blocking pool or for forwarding to the source
//   COM_STMT_PREPARE/EXECUTE/CLOSE/RESET/SEND_LONG_DATA
//                       prepared statements: forwarded ones live on the
//                       source (query_forwarder.h), binrelay's own are
//                       answered with binary-protocol rows
//   COM_PING, COM_INIT_DB, COM_QUIT, COM_STATISTICS, COM_PROCESS_KILL,
//   COM_SET_OPTION, COM_RESET_CONNECTION
//   COM_REGISTER_SLAVE  recorded, OK
//   COM_BINLOG_DUMP(_GTID)  parsed into a DumpRequest for the DumpHandler
//   anything else       ER_UNKNOWN_COM_ERROR (1047), logged
//
// Work that may block (SQL on the source, a stored-file scan, a purge) is
// never done here: the session enters kDeferred and hands the transport a
// closure to run off its io thread (TakeDeferred); FinishDeferred frames
// the result. Packets that arrive meanwhile wait in the buffer.
//
// Hostile input never crashes it: an oversized packet gets
// ER_NET_PACKET_TOO_LARGE (1153), a sequence error ER_NET_PACKETS_OUT_OF_ORDER
// (1156) or a malformed handshake an ERR, and the session is closed (the
// transport then closes the socket). Prepared statements and user
// variables per session are bounded.
//
// Thread safety: none; a session belongs to one connection coroutine. A
// deferred closure runs on another thread while the session waits for it;
// nothing else touches the session meanwhile.
// Lifetime: the handlers must outlive the session.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "protocol/packet_framer.h"
#include "proxy/admin_handler.h"
#include "proxy/admin_responder.h"
#include "proxy/connection_control.h"
#include "proxy/dump_request.h"
#include "proxy/query_forwarder.h"
#include "proxy/server_auth.h"

namespace binrelay::proxy {

inline constexpr uint16_t kErNetPacketsOutOfOrder = 1156;  // 08S01
// A session holds at most this many prepared statements (MySQL's
// max_prepared_stmt_count is server-wide; this bounds one client).
inline constexpr size_t kMaxPreparedStatements = 256;
// SHOW FULL PROCESSLIST's Info and the log show at most this much of a
// statement (redacted when it names a password: statement_redaction.h).
inline constexpr size_t kShownStatementBytes = 1024;

struct ServerSessionOptions {
  // MariaDB-flavoured by default; MySQL 8 style is e.g. "8.0.36-binrelay".
  std::string server_version = "5.5.5-10.11.0-binrelay";
  uint32_t connection_id = 1;
  // Largest client packet accepted. Admin statements and dump requests are
  // small, so the default is far below the 1 GiB a client may announce.
  size_t max_packet = 1 << 20;
  // The receive buffer's size; a larger packet grows it while it lasts.
  size_t read_buffer = 4096;
  AuthOptions auth;
};

// What the transport runs off its io thread for a deferred command.
struct DeferredResult {
  absl::Status status;          // a forwarding failure (the source unreachable, ...)
  PacketList packets;           // forwarded: the source's response
  std::optional<AdminReply> admin;  // a blocking admin statement's reply
};
using DeferredWork = std::function<DeferredResult()>;

class ServerSession {
 public:
  // kStartTls: the client sent an SSLRequest; the transport runs the TLS
  // handshake (feeding it TakeTlsBytes() first) and calls TlsStarted().
  enum class State { kNew, kAuth, kStartTls, kCommand, kDeferred, kDumpAccepted, kClosed };

  // `forwarder` and `connections` may be null (no forwarding; no KILL or
  // PROCESSLIST).
  ServerSession(ServerSessionOptions options, AdminHandler* admin, DumpHandler* dump,
                QueryForwarder* forwarder = nullptr, ConnectionControl* connections = nullptr);

  // Appends the framed greeting (seq 0). Call once, first.
  absl::Status Start(std::string* out);

  // Where the transport writes received bytes (see PacketReader).
  size_t PrepareRead(size_t min_bytes, char** out) { return reader_.PrepareWrite(min_bytes, out); }
  void CommitRead(size_t n) { reader_.CommitWrite(n); }

  // Handles every complete packet buffered and appends framed replies to
  // *out. Returns an error when the connection must be closed after *out is
  // written (the error says why, for the log); state() is then kClosed.
  // COM_QUIT closes with OK status; a dump accepted by the DumpHandler leaves
  // the session in kDumpAccepted, deferred work in kDeferred, and processing
  // stops until the transport has dealt with it.
  absl::Status Process(std::string* out);

  // Convenience for tests and simple transports: CommitRead + Process.
  absl::Status Feed(std::string_view bytes, std::string* out);

  // kDeferred: the work to run off the io thread, then its result back.
  DeferredWork TakeDeferred() { return std::move(deferred_); }
  absl::Status FinishDeferred(DeferredResult result, std::string* out);

  State state() const { return state_; }
  const std::string& user() const { return auth_.user(); }
  const SessionState& session_state() const { return session_; }
  const UserVariables& user_variables() const { return session_.user_variables; }
  const std::optional<ReplicaRegistration>& registration() const { return registration_; }
  const std::optional<DumpRequest>& dump_request() const { return dump_request_; }
  // What the connection is doing, for SHOW PROCESSLIST.
  const std::string& current_statement() const { return current_statement_; }
  // Bytes of an incomplete packet are buffered (the client is mid-packet).
  bool mid_packet() const { return reader_.buffered() > 0; }
  size_t buffer_capacity() const { return reader_.capacity(); }
  std::string TakeTlsBytes() { return reader_.TakeBuffered(); }
  void TlsStarted() {
    auth_.TlsStarted();
    state_ = State::kAuth;
  }
  // The accepted dump's stream (state kDumpAccepted); the transport drives it.
  std::unique_ptr<DumpStream> TakeDumpStream() { return std::move(dump_stream_); }
  // A dump ended: the source ends the connection after a dump (even one that
  // ended with EOF), so the session is closed.
  void EndDump() { state_ = State::kClosed; }

 private:
  struct Statement {
    std::string sql;
    bool forwarded = false;
    uint16_t params = 0;
    uint16_t columns = 0;
    std::string param_types;  // 2 bytes per parameter, once the client bound them
    bool long_data = false;   // COM_STMT_SEND_LONG_DATA was used: not supported
  };
  enum class Pending { kNone, kQuery, kPrepare, kExecute };

  absl::Status HandlePacket(std::string_view payload, std::string* out);
  absl::Status HandleAuthPacket(std::string_view payload, std::string* out);
  absl::Status HandleCommand(std::string_view payload, std::string* out);
  absl::Status HandleQuery(std::string_view sql, std::string* out);
  absl::Status HandleDump(std::string_view payload, std::string* out);
  absl::Status HandlePrepare(std::string_view sql, std::string* out);
  absl::Status HandleExecute(std::string_view payload, std::string* out);
  absl::Status HandleStatementCommand(uint8_t command, std::string_view payload, std::string* out);
  // Frames an admin reply (text or binary rows); closes on KILL of self.
  absl::Status SendAdminReply(const AdminReply& reply, bool binary, std::string* out);
  void Defer(Pending what, DeferredWork work);
  ForwardSession ForwardTarget() const;
  AdminContext Context();
  // Frames `payload` with the exchange's next sequence id.
  void Reply(std::string* out, std::string_view payload);
  void ReplyError(std::string* out, uint16_t code, std::string_view state, std::string_view msg);
  void LogRefusal(std::string_view what, uint16_t code, std::string_view message);
  absl::Status Close(absl::Status why);

  ServerSessionOptions options_;
  AdminHandler* admin_;
  DumpHandler* dump_;
  QueryForwarder* forwarder_;
  ConnectionControl* connections_;
  ServerAuth auth_;
  protocol::PacketReader reader_;
  State state_ = State::kNew;
  SessionState session_;
  uint8_t collation_ = 0;
  std::optional<ReplicaRegistration> registration_;
  std::optional<DumpRequest> dump_request_;
  std::unique_ptr<DumpStream> dump_stream_;
  std::map<uint32_t, Statement> statements_;
  uint32_t next_statement_id_ = 1;
  DeferredWork deferred_;
  Pending pending_ = Pending::kNone;
  Statement pending_statement_;  // kPrepare: the statement being prepared
  bool pending_binary_ = false;  // kQuery: an admin reply for COM_STMT_EXECUTE
  std::string current_statement_;
};

}  // namespace binrelay::proxy
