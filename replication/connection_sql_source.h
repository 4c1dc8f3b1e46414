// ConnectionSqlSource: SqlSource over a protocol::ClientConnection, lazily
// (re)connected. Used for the upstream session's SQL (preflight, status) and
// as the side channel for schema lookups, so those never interleave with the
// dump stream.
//
// Thread safety: one thread at a time.
#pragma once

#include <functional>
#include <memory>

#include "protocol/client_connection.h"
#include "replication/sql_source.h"

namespace binrelay::replication {

class ConnectionSqlSource : public SqlSource {
 public:
  // Borrows an open connection (not reconnected).
  explicit ConnectionSqlSource(protocol::ClientConnection* conn) : borrowed_(conn) {}
  // Owns its connection, opened on first use and re-opened once after a
  // connection-level failure.
  explicit ConnectionSqlSource(protocol::ConnectOptions options)
      : options_(std::move(options)) {}
  // Owns its connection to the server `login` names, asked again before
  // every statement: once it names another server (the relay followed a
  // failover) the connection is closed and the statement goes there. For
  // statements that hold no session state between them (a snapshot or
  // LOCK TABLES needs a borrowed connection).
  explicit ConnectionSqlSource(std::function<protocol::ConnectOptions()> login)
      : options_(login()), login_(std::move(login)) {}

  absl::StatusOr<std::vector<SqlRow>> Query(std::string_view sql) override;
  absl::Status QueryRowsInto(std::string_view sql, protocol::TextRows* into) override;
  std::string Peer() const override;

 private:
  absl::StatusOr<std::vector<SqlRow>> QueryOnce(protocol::ClientConnection* conn,
                                                std::string_view sql);

  protocol::ClientConnection* borrowed_ = nullptr;
  // Re-reads login_ (if any); drops the connection if it names another
  // server or account.
  void FollowLogin();

  protocol::ConnectOptions options_;
  std::function<protocol::ConnectOptions()> login_;
  std::unique_ptr<protocol::ClientConnection> owned_;
};

}  // namespace binrelay::replication
