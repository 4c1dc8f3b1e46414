#include "replication/connection_sql_source.h"

#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"

namespace binrelay::replication {

absl::StatusOr<std::vector<SqlRow>> ConnectionSqlSource::QueryOnce(
    protocol::ClientConnection* conn, std::string_view sql) {
  BR_ASSIGN_OR_RETURN(protocol::QueryResult result, conn->Query(sql));
  return std::move(result.rows);
}

absl::StatusOr<std::vector<SqlRow>> ConnectionSqlSource::Query(std::string_view sql) {
  if (borrowed_ != nullptr) return QueryOnce(borrowed_, sql);
  for (int attempt = 0;; ++attempt) {
    if (owned_ == nullptr) {
      BR_ASSIGN_OR_RETURN(owned_, protocol::ClientConnection::Connect(options_));
    }
    auto rows = QueryOnce(owned_.get(), sql);
    if (rows.ok() || attempt > 0 || !absl::IsUnavailable(rows.status())) return rows;
    owned_.reset();  // the connection died (idle timeout, restart): reopen once
  }
}

absl::StatusOr<protocol::TextRows> ConnectionSqlSource::QueryRows(std::string_view sql) {
  if (borrowed_ != nullptr) return borrowed_->QueryRows(sql);
  for (int attempt = 0;; ++attempt) {
    if (owned_ == nullptr) {
      BR_ASSIGN_OR_RETURN(owned_, protocol::ClientConnection::Connect(options_));
    }
    auto rows = owned_->QueryRows(sql);
    if (rows.ok() || attempt > 0 || !absl::IsUnavailable(rows.status())) return rows;
    owned_.reset();  // the connection died (idle timeout, restart): reopen once
  }
}

std::string ConnectionSqlSource::Peer() const {
  if (borrowed_ != nullptr) return borrowed_->peer();
  return absl::StrCat(options_.host, ":", options_.port);
}

}  // namespace binrelay::replication
