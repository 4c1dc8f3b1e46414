// ClientConnection: a blocking MySQL/MariaDB client connection (TCP, optional
// TLS) that authenticates (mysql_native_password, caching_sha2_password),
// runs text-protocol queries, and gives the replication session raw packet
// access for COM_REGISTER_SLAVE / COM_BINLOG_DUMP and the event stream.
//
// Every error names the peer ("host:port"). Server errors carry a
// ServerError payload (server_error.h: GetServerError). A lost connection is
// Unavailable; a timeout is DeadlineExceeded (a timed-out ReadPacket leaves
// the connection usable; any other failure closes it).
//
// Thread safety: none; one thread uses a connection at a time.
// Lifetime: the view returned by ReadPacket() is valid until the next call
// of ReadPacket(), Query(), Ping(), WriteCommand() or Quit() (they reuse the
// receive buffer). Everything else returned is owned by the caller.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "protocol/auth.h"
#include "protocol/packet_framer.h"
#include "protocol/text_rows.h"

namespace binrelay::protocol {

class BlockingTransport;

struct ConnectOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 3306;
  std::string user;
  std::string password;
  std::string database;
  enum class Tls { kDisabled, kPreferred, kRequired } tls = Tls::kPreferred;
  std::string tls_ca_file;  // verify the server certificate if set
  // With tls_ca_file: also check that the certificate names `host`
  // (ssl_mode VERIFY_IDENTITY); off: the chain only (VERIFY_CA).
  bool tls_verify_identity = true;
  // caching_sha2_password full authentication without TLS (auth.h).
  RsaKeyPolicy rsa;
  // Where the user and password were configured, named in an access-denied
  // error ("[source] user and password"); "" for a generic hint.
  std::string credentials_from;
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds io_timeout{60000};
  // Announce MARIADB_CLIENT_STMT_BULK_OPERATIONS (if the server offers it),
  // which COM_STMT_BULK_EXECUTE needs (bulk_execute.h).
  bool bulk_operations = false;
  // Statements run right after authentication on every connection opened
  // with these options, re-run on each reconnect (libmysqlclient's
  // MYSQL_INIT_COMMAND): session settings that must hold for every
  // statement, on MySQL too, which has no SET STATEMENT ... FOR.
  std::vector<std::string> session_sql;
};

struct ServerInfo {
  std::string version;  // without MariaDB's "5.5.5-" prefix
  uint32_t connection_id = 0;
  uint64_t capabilities = 0;  // negotiated: the client's request ANDed with the server's set
  bool is_mariadb = false;
  std::string auth_plugin;  // plugin that finally authenticated the user
  bool tls = false;
};

struct QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
  uint64_t affected_rows = 0;
  uint16_t warnings = 0;  // of the (last) OK packet
};

class ClientConnection {
 public:
  static absl::StatusOr<std::unique_ptr<ClientConnection>> Connect(const ConnectOptions& options);
  ~ClientConnection();
  ClientConnection(const ClientConnection&) = delete;
  ClientConnection& operator=(const ClientConnection&) = delete;

  // COM_QUERY, text protocol. Result sets after the first (CALL) are read
  // and dropped.
  absl::StatusOr<QueryResult> Query(std::string_view sql);
  // The same, with the first result's rows in one buffer (text_rows.h):
  // for large results, without an allocation per value.
  absl::StatusOr<TextRows> QueryRows(std::string_view sql);
  // The same into `into`, emptied first: its memory is reused (a copy
  // reading range after range grows one buffer, not one per range). After
  // an error it may hold part of the result.
  absl::Status QueryRows(std::string_view sql, TextRows* into);
  absl::Status Ping();  // COM_PING

  // COM_STMT_PREPARE. The parameter and column definitions that follow are
  // read and dropped.
  struct Prepared {
    uint32_t id = 0;
    uint16_t params = 0;
    uint16_t columns = 0;
  };
  absl::StatusOr<Prepared> Prepare(std::string_view sql);
  // Sends `command` (a whole command payload, e.g. from BulkExecuteBuilder)
  // and reads its OK or ERR reply. For statements without a result set.
  struct CommandResult {
    uint64_t affected_rows = 0;
    uint16_t warnings = 0;
  };
  absl::StatusOr<CommandResult> RunCommand(std::string_view command);
  // RunCommand's second half, after WriteCommand: the reply to a command
  // sent earlier (the caller built its next command meanwhile).
  absl::StatusOr<CommandResult> ReadCommandReply(uint8_t command);
  // COM_STMT_CLOSE (the server sends no reply).
  absl::Status CloseStatement(uint32_t id);
  void Quit();          // COM_QUIT, then close; errors are ignored

  // Sends a command packet: sequence id reset to 0, split if >= 16 MiB.
  absl::Status WriteCommand(std::string_view payload);
  // Sends one packet (< 16 MiB) numbered 0 in the middle of a stream the
  // server keeps sending (a semi-sync ACK), leaving the sequence expected of
  // the server's next packet as it was.
  absl::Status WriteOutOfBand(std::string_view payload);
  // Next logical packet payload (reassembled). See the lifetime note above.
  absl::StatusOr<std::string_view> ReadPacket(std::chrono::milliseconds timeout);

  const ServerInfo& server_info() const { return info_; }
  std::string peer() const;  // "host:port"
  // Exposed for the dump session (MariaDB semi-sync resets sequence ids:
  // net.pkt_nr_can_be_reset in sql/semisync_master.cc).
  void set_check_sequence(bool check) { reader_.set_check_sequence(check); }
  // Bytes received and not yet returned by ReadPacket (0 does not prove the
  // socket is idle: TLS may hold decrypted bytes).
  size_t buffered() const { return reader_.buffered(); }

 private:
  using Clock = std::chrono::steady_clock;
  explicit ClientConnection(const ConnectOptions& options);

  absl::Status Handshake(Clock::time_point deadline);
  absl::Status Authenticate(std::string_view server_plugin, std::string_view nonce,
                            uint64_t caps, Clock::time_point deadline);
  absl::Status AuthError(std::string_view err_payload);
  // Writes one (possibly split) packet continuing the current sequence.
  absl::Status WritePacket(std::string_view payload, Clock::time_point deadline);
  absl::StatusOr<std::string_view> ReadPacketUntil(Clock::time_point deadline);
  absl::StatusOr<std::string_view> ReadForQuery();
  // Reads one result (OK, ERR or a result set) after COM_QUERY into *out;
  // with `compact`, the rows go there instead of out->rows.
  absl::Status ReadResult(QueryResult* out, bool* more_results, TextRows* compact = nullptr);
  // COM_QUERY: the first result into *out (its rows into `compact` if
  // given); results after it (CALL) read and dropped.
  absl::Status RunQuery(std::string_view sql, QueryResult* out, TextRows* compact);
  // Marks the connection unusable after a protocol or network failure.
  absl::Status Fail(absl::Status status);

  ConnectOptions options_;
  std::unique_ptr<BlockingTransport> transport_;
  PacketReader reader_;
  std::string write_buf_;
  std::vector<std::optional<std::string>> row_scratch_;
  ServerInfo info_;
};

}  // namespace binrelay::protocol
