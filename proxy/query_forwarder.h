// QueryForwarder: how a session forwards the read-only metadata statements
// it does not answer itself (forward_policy.h) to binrelay's source, text
// and prepared (binary) protocol. Declared here, where sessions use it;
// source_forwarder.h implements it over side connections to the source.
//
// Results are the source's response packets, payload by payload, exactly as
// it sent them (column definitions, rows, OK/ERR/EOF); the session frames
// them with its own sequence ids. Both sides use the classic EOF framing
// (neither binrelay's server nor its client negotiates DEPRECATE_EOF), so
// forwarding needs no re-encoding.
//
// Thread safety: implementations are thread-safe; calls block (they run on
// binrelay's blocking pool, never on an io thread).
// Lifetime: results are owned by the caller.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace binrelay::proxy {

// What a forwarded command needs of the client's connection.
struct ForwardSession {
  std::string database;   // "" : none
  uint8_t collation = 0;  // the client's connection collation (0: leave as is)
};

using PacketList = std::vector<std::string>;

class QueryForwarder {
 public:
  virtual ~QueryForwarder() = default;
  // COM_QUERY: the response (OK, ERR, or a whole text result set).
  virtual absl::StatusOr<PacketList> Query(const ForwardSession& session,
                                           std::string_view sql) = 0;
  // COM_STMT_PREPARE: the response (ERR, or PREPARE_OK with its parameter
  // and column definitions); the statement id in it is the source's.
  virtual absl::StatusOr<PacketList> Prepare(const ForwardSession& session,
                                             std::string_view sql) = 0;
  // COM_STMT_EXECUTE of `sql`: `execute_tail` is the command after its
  // statement id (flags 0, iteration count, NULL bitmap, new-params-bound 1,
  // types, values). The response: OK, ERR, or a binary result set.
  virtual absl::StatusOr<PacketList> Execute(const ForwardSession& session, std::string_view sql,
                                             std::string_view execute_tail) = 0;
};

}  // namespace binrelay::proxy
