#include "replication/connection_sql_source.h"

#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"

namespace binrelay::replication {

absl::StatusOr<std::vector<SqlRow>> ConnectionSqlSource::QueryOnce(
    protocol::ClientConnection* conn, std::string_view sql) {
  BR_ASSIGN_OR_RETURN(protocol::QueryResult result, conn->Query(sql));
  return std::move(result.rows);
}

void ConnectionSqlSource::FollowLogin() {
  if (!login_) return;
  protocol::ConnectOptions now = login_();
  // Another server, account or TLS setting: what a CHANGE MASTER TO can
  // change (the rest, timeouts and session settings, is the caller's own).
  if (now.host != options_.host || now.port != options_.port || now.user != options_.user ||
      now.password != options_.password || now.tls != options_.tls ||
      now.tls_ca_file != options_.tls_ca_file ||
      now.tls_verify_identity != options_.tls_verify_identity) {
    owned_.reset();
  }
  options_ = std::move(now);
}

absl::StatusOr<std::vector<SqlRow>> ConnectionSqlSource::Query(std::string_view sql) {
  if (borrowed_ != nullptr) return QueryOnce(borrowed_, sql);
  FollowLogin();
  for (int attempt = 0;; ++attempt) {
    if (owned_ == nullptr) {
      if (attempt > 0) FollowLogin();  // the server may have changed since
      BR_ASSIGN_OR_RETURN(owned_, protocol::ClientConnection::Connect(options_));
    }
    auto rows = QueryOnce(owned_.get(), sql);
    if (rows.ok() || attempt > 0 || !absl::IsUnavailable(rows.status())) return rows;
    owned_.reset();  // the connection died (idle timeout, restart): reopen once
  }
}

absl::Status ConnectionSqlSource::QueryRowsInto(std::string_view sql, protocol::TextRows* into) {
  if (borrowed_ != nullptr) return borrowed_->QueryRows(sql, into);
  FollowLogin();
  for (int attempt = 0;; ++attempt) {
    if (owned_ == nullptr) {
      if (attempt > 0) FollowLogin();  // the server may have changed since
      BR_ASSIGN_OR_RETURN(owned_, protocol::ClientConnection::Connect(options_));
    }
    absl::Status s = owned_->QueryRows(sql, into);
    if (s.ok() || attempt > 0 || !absl::IsUnavailable(s)) return s;
    owned_.reset();  // the connection died (idle timeout, restart): reopen once
  }
}

std::string ConnectionSqlSource::Peer() const {
  if (borrowed_ != nullptr) return borrowed_->peer();
  return absl::StrCat(options_.host, ":", options_.port);
}

}  // namespace binrelay::replication
