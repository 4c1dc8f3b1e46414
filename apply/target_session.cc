#include "apply/target_session.h"

#include "absl/strings/str_cat.h"
#include "protocol/server_error.h"
#include "protocol/status_macros.h"

namespace binrelay::apply {

int ServerErrorCode(const absl::Status& status) {
  std::optional<protocol::ServerError> e = protocol::GetServerError(status);
  return e ? e->code : 0;
}

ErrorClass Classify(const absl::Status& status) {
  if (status.ok()) return ErrorClass::kNone;
  switch (ServerErrorCode(status)) {
    case 1213:  // ER_LOCK_DEADLOCK
    case 1205:  // ER_LOCK_WAIT_TIMEOUT
      return ErrorClass::kContention;
    case 1040:  // ER_CON_COUNT_ERROR
    case 1053:  // ER_SERVER_SHUTDOWN
    case 1927:  // ER_CONNECTION_KILLED
    case 2006:  // CR_SERVER_GONE_ERROR
    case 2013:  // CR_SERVER_LOST
      return ErrorClass::kConnection;
    case 0:
      break;
    default:
      return ErrorClass::kHard;
  }
  // No server error: the network (refused, reset, timed out) or TLS.
  if (absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status) ||
      absl::IsAborted(status)) {
    return ErrorClass::kConnection;
  }
  return ErrorClass::kHard;
}

std::string TargetSession::peer() const { return absl::StrCat(options_.host, ":", options_.port); }

absl::Status TargetSession::EnsureOpen() {
  if (conn_) return absl::OkStatus();
  BR_ASSIGN_OR_RETURN(std::unique_ptr<protocol::ClientConnection> c,
                      protocol::ClientConnection::Connect(options_));
  // SET TRANSACTION cannot share a statement with other assignments.
  for (std::string sql :
       {std::string("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"),
        absl::StrCat("SET SESSION innodb_lock_wait_timeout = ", lock_wait_timeout_,
                     ", SESSION time_zone = '+00:00', "
                     "SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION', "
                     "SESSION foreign_key_checks = 0, NAMES utf8mb4")}) {
    auto q = c->Query(sql);
    if (!q.ok()) return q.status();
  }
  conn_ = std::move(c);
  return absl::OkStatus();
}

absl::StatusOr<protocol::QueryResult> TargetSession::Query(std::string_view sql) {
  BR_RETURN_IF_ERROR(EnsureOpen());
  auto r = conn_->Query(sql);
  if (!r.ok() && Classify(r.status()) == ErrorClass::kConnection) conn_.reset();
  return r;
}

absl::Status TargetSession::Execute(std::string_view sql) { return Query(sql).status(); }

}  // namespace binrelay::apply
