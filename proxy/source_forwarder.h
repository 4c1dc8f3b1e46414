// SourceForwarder: the QueryForwarder of `binrelay serve`. It keeps a few
// side connections to binrelay's source (binrelay's own client code,
// protocol/client_connection.h) and relays statements over them packet for
// packet, so clients get the source's result sets unchanged: column
// definitions, values, warnings, errors.
//
// Each side connection is read-only on the source (SET SESSION TRANSACTION
// READ ONLY) with a statement time limit (MariaDB max_statement_time, MySQL
// max_execution_time), so whatever a client sends runs as a bounded read as
// binrelay's forwarding user, never with more rights than that user has.
// Before each statement it takes the client's database (COM_INIT_DB) and,
// if it differs, its connection collation (SET NAMES). Prepared statements
// are prepared on a side connection when first executed there (by their
// text) and cached per connection; the client's statement ids are
// binrelay's (server_session.h).
//
// Bounds: at most `connections` side connections (a caller waits up to the
// statement timeout for a free one); a response larger than
// max_result_bytes is refused with an error (the side connection is then
// closed, since the rest of the response is unread); a connection the
// source dropped is replaced on next use.
//
// Thread safety: all methods from any thread (they block).
// Lifetime: results are owned by the caller.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "protocol/client_connection.h"
#include "proxy/query_forwarder.h"

namespace binrelay::proxy {

struct SourceForwarderOptions {
  protocol::ConnectOptions connect;  // the source, as the forwarding user
  // Where the source is now ("host", port), asked for every new side
  // connection: after the upstream follows another server, forwarded reads
  // go there, not to `connect`'s host. Null: always `connect`'s.
  std::function<std::pair<std::string, uint16_t>()> source_address;
  int connections = 4;
  std::chrono::milliseconds statement_timeout{10000};
  size_t max_result_bytes = 16u << 20;
  size_t max_statements_per_connection = 64;
};

class SourceForwarder : public QueryForwarder {
 public:
  explicit SourceForwarder(SourceForwarderOptions options);
  ~SourceForwarder() override;

  absl::StatusOr<PacketList> Query(const ForwardSession& session, std::string_view sql) override;
  absl::StatusOr<PacketList> Prepare(const ForwardSession& session, std::string_view sql) override;
  absl::StatusOr<PacketList> Execute(const ForwardSession& session, std::string_view sql,
                                     std::string_view execute_tail) override;

 private:
  struct SourceStatement {
    uint32_t id = 0;
    uint16_t params = 0;
  };
  struct Side {
    std::unique_ptr<protocol::ClientConnection> conn;
    std::pair<std::string, uint16_t> address;  // the server it reached
    std::string database;
    uint8_t collation = 0;
    std::map<std::string, SourceStatement> statements;  // by text
  };
  // A side connection for `session` (database and collation set), waiting
  // for a free one if all are busy.
  absl::StatusOr<std::unique_ptr<Side>> Acquire(const ForwardSession& session);
  // Back to the idle list, or closed when it cannot be trusted any more.
  void Release(std::unique_ptr<Side> side, bool healthy);
  absl::StatusOr<std::unique_ptr<Side>> Connect();
  absl::Status Adopt(Side& side, const ForwardSession& session);
  absl::StatusOr<std::pair<std::string, std::string>> CollationName(Side& side, uint8_t id);
  // Sends `command` and reads one complete response (all results of it).
  absl::StatusOr<PacketList> Roundtrip(Side& side, std::string_view command, bool prepare);
  absl::StatusOr<PacketList> ReadResponse(Side& side, bool prepare);
  absl::StatusOr<SourceStatement> PrepareOn(Side& side, std::string_view sql);

  const SourceForwarderOptions options_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<Side>> idle_ ABSL_GUARDED_BY(mu_);
  int open_ ABSL_GUARDED_BY(mu_) = 0;  // idle and in use
  absl::flat_hash_map<uint8_t, std::pair<std::string, std::string>> collations_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace binrelay::proxy
