// ServerSession: the server side of one client connection, without sockets.
// Received bytes go into its PacketReader buffer (PrepareRead/CommitRead);
// Process() handles every complete packet and appends framed replies:
// greeting → authentication of the one configured user (server_auth.h) →
// command phase: COM_QUERY through admin_responder.h, COM_PING, COM_INIT_DB,
// COM_QUIT, COM_REGISTER_SLAVE (recorded, OK), COM_BINLOG_DUMP and
// COM_BINLOG_DUMP_GTID (parsed into a DumpRequest for the DumpHandler),
// anything else ER_UNKNOWN_COM_ERROR (1047).
//
// Hostile input never crashes it: an oversized packet gets
// ER_NET_PACKET_TOO_LARGE (1153) and a sequence error or malformed handshake
// an ERR, and the session is closed (the transport then closes the socket).
//
// Thread safety: none; a session belongs to one connection coroutine.
// Lifetime: the handlers must outlive the session.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "protocol/packet_framer.h"
#include "proxy/admin_handler.h"
#include "proxy/dump_request.h"
#include "proxy/server_auth.h"

namespace binrelay::proxy {

inline constexpr uint16_t kErNetPacketsOutOfOrder = 1156;  // 08S01

struct ServerSessionOptions {
  // MariaDB-flavoured by default; MySQL 8 style is e.g. "8.0.36-binrelay".
  std::string server_version = "5.5.5-10.11.0-binrelay";
  uint32_t connection_id = 1;
  // Largest client packet accepted. Admin statements and dump requests are
  // small, so the default is far below the 1 GiB a client may announce.
  size_t max_packet = 1 << 20;
  AuthOptions auth;
};

class ServerSession {
 public:
  // kStartTls: the client sent an SSLRequest; the transport runs the TLS
  // handshake (feeding it TakeTlsBytes() first) and calls TlsStarted().
  enum class State { kNew, kAuth, kStartTls, kCommand, kDumpAccepted, kClosed };

  ServerSession(ServerSessionOptions options, AdminHandler* admin, DumpHandler* dump);

  // Appends the framed greeting (seq 0). Call once, first.
  absl::Status Start(std::string* out);

  // Where the transport writes received bytes (see PacketReader).
  size_t PrepareRead(size_t min_bytes, char** out) { return reader_.PrepareWrite(min_bytes, out); }
  void CommitRead(size_t n) { reader_.CommitWrite(n); }

  // Handles every complete packet buffered and appends framed replies to
  // *out. Returns an error when the connection must be closed after *out is
  // written (the error says why, for the log); state() is then kClosed.
  // COM_QUIT closes with OK status; a dump accepted by the DumpHandler leaves
  // the session in kDumpAccepted and stops processing.
  absl::Status Process(std::string* out);

  // Convenience for tests and simple transports: CommitRead + Process.
  absl::Status Feed(std::string_view bytes, std::string* out);

  State state() const { return state_; }
  const std::string& user() const { return auth_.user(); }
  const UserVariables& user_variables() const { return user_variables_; }
  const std::optional<ReplicaRegistration>& registration() const { return registration_; }
  const std::optional<DumpRequest>& dump_request() const { return dump_request_; }
  std::string TakeTlsBytes() { return reader_.TakeBuffered(); }
  void TlsStarted() {
    auth_.TlsStarted();
    state_ = State::kAuth;
  }
  // The accepted dump's stream (state kDumpAccepted); the transport drives it.
  std::unique_ptr<DumpStream> TakeDumpStream() { return std::move(dump_stream_); }
  // A non-blocking dump ended with EOF: the connection is back in the
  // command phase, as on a real server.
  void EndDump() {
    state_ = State::kCommand;
    reader_.set_next_seq(0);
  }

 private:
  absl::Status HandlePacket(std::string_view payload, std::string* out);
  absl::Status HandleAuthPacket(std::string_view payload, std::string* out);
  absl::Status HandleCommand(std::string_view payload, std::string* out);
  absl::Status HandleDump(std::string_view payload, std::string* out);
  // Frames `payload` with the exchange's next sequence id.
  void Reply(std::string* out, std::string_view payload);
  void ReplyError(std::string* out, uint16_t code, std::string_view state, std::string_view msg);
  absl::Status Close(absl::Status why);

  ServerSessionOptions options_;
  AdminHandler* admin_;
  DumpHandler* dump_;
  ServerAuth auth_;
  protocol::PacketReader reader_;
  State state_ = State::kNew;
  UserVariables user_variables_;
  bool skip_replication_ = false;  // SET skip_replication=1 (MariaDB replicas)
  std::optional<ReplicaRegistration> registration_;
  std::optional<DumpRequest> dump_request_;
  std::unique_ptr<DumpStream> dump_stream_;
};

}  // namespace binrelay::proxy
