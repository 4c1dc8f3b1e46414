#include "apply/target_session.h"

#include <algorithm>
#include <bit>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "protocol/capabilities.h"
#include "protocol/server_error.h"
#include "protocol/status_macros.h"
#include "protocol/stmt_execute.h"

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

absl::Duration RetryWait(ErrorClass c, int attempt) {
  if (c == ErrorClass::kContention) {
    return absl::Milliseconds(std::min(1000, 10 << std::min(attempt, 7)));
  }
  return absl::Milliseconds(std::min(5000, 100 << std::min(attempt, 6)));
}

RetryPolicy TargetWritePolicy() {
  RetryPolicy p;
  p.retryable = [](const absl::Status& s) { return Classify(s) != ErrorClass::kHard; };
  p.wait = [](int attempt, const absl::Status& s) { return RetryWait(Classify(s), attempt - 1); };
  return p;
}

size_t ExecuteRowsPerStatement(size_t params, size_t max_rows) {
  return std::bit_floor(
      std::max<size_t>(1, std::min(max_rows, kMaxExecuteMarkers / std::max<size_t>(1, params))));
}

size_t NextExecutePiece(size_t remaining, size_t full) {
  return remaining >= full ? full : std::bit_floor(remaining);
}

std::string MultiRowStatement(std::string_view one_row, size_t rows) {
  // The markers' tuple is the last parenthesis: names before it are quoted.
  const std::string_view tuple = one_row.substr(std::min(one_row.rfind('('), one_row.size()));
  std::string sql;
  sql.reserve(one_row.size() + (rows > 0 ? rows - 1 : 0) * (tuple.size() + 1));
  sql.append(one_row);
  for (size_t i = 1; i < rows; ++i) {
    sql.push_back(',');
    sql.append(tuple);
  }
  return sql;
}

namespace {

const char* SqlMode(bool string_literals) {
  return string_literals ? "NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION"
                         : "NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION,NO_BACKSLASH_ESCAPES";
}

}  // namespace

absl::Status TargetSession::SetStringLiterals(bool allowed) {
  if (allowed == string_literals_) return absl::OkStatus();
  string_literals_ = allowed;
  if (!conn_) return absl::OkStatus();  // EnsureOpen sets it
  auto r = conn_->Query(absl::StrCat("SET SESSION sql_mode = '", SqlMode(allowed), "'"));
  if (!r.ok()) {
    // The mode on the server is unknown now: the next use reconnects, and
    // sets it.
    Reset();
    return r.status();
  }
  return absl::OkStatus();
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
                     ", SESSION lock_wait_timeout = ", lock_wait_timeout_,
                     ", SESSION time_zone = '+00:00', "
                     "SESSION sql_mode = '", SqlMode(string_literals_), "', "
                     "SESSION foreign_key_checks = 0, SESSION max_error_count = 65535, "
                     "NAMES utf8mb4")}) {
    auto q = c->Query(sql);
    if (!q.ok()) return q.status();
  }
  // A statement the server still runs after the client gave up on it could
  // commit after a later one: MariaDB's max_statement_time ends it first
  // (MySQL has no equivalent for writes; there the KILL below does it).
  const int64_t limit_s = std::max<int64_t>(
      1, std::chrono::duration_cast<std::chrono::seconds>(options_.io_timeout).count() / 2);
  auto q = c->Query(absl::StrCat("SET SESSION max_statement_time = ", limit_s));
  if (!q.ok() && ServerErrorCode(q.status()) != 1193) return q.status();
  // A target writing a STATEMENT-format binlog cannot log this session's
  // writes as statements (READ COMMITTED: InnoDB refuses, error 1665; and a
  // bulk command would be logged with its ? markers). Its rows are logged as
  // rows where the applier may say so (BINLOG ADMIN or SUPER); MIXED would
  // log them as rows too.
  max_statement_ = 16u << 20;
  auto packet = c->Query("SELECT @@max_allowed_packet");
  if (!packet.ok()) return packet.status();
  uint64_t max_packet = 0;
  if (!packet->rows.empty() && !packet->rows[0].empty() && packet->rows[0][0] &&
      absl::SimpleAtoi(*packet->rows[0][0], &max_packet) && max_packet > 4096) {
    max_statement_ = max_packet - 1024;
  }
  logs_statements_ = false;
  auto fmt = c->Query("SELECT @@log_bin, @@session.binlog_format");
  if (fmt.ok() && !fmt->rows.empty() && fmt->rows[0].size() == 2 && fmt->rows[0][0] &&
      fmt->rows[0][1] && *fmt->rows[0][0] == "1" &&
      absl::EqualsIgnoreCase(*fmt->rows[0][1], "STATEMENT")) {
    logs_statements_ = !c->Query("SET SESSION binlog_format = 'ROW'").ok();
  }
  connection_id_ = c->server_info().connection_id;
  prepared_.clear();
  conn_ = std::move(c);
  return absl::OkStatus();
}

absl::Status TargetSession::AfterFailure(absl::Status status) {
  if (Classify(status) != ErrorClass::kConnection) return status;
  Reset();
  if (absl::IsDeadlineExceeded(status)) {
    // The server may still be running it: end it before anything is
    // retried, so it cannot commit after a later statement.
    absl::Status killed = KillConnection(connection_id_);
    if (!killed.ok()) {
      return absl::UnavailableError(absl::StrCat(
          "a statement timed out on ", peer(), " and its connection ", connection_id_,
          " could not be killed (", killed.message(), "); retrying once it can be"));
    }
  }
  return status;
}

absl::StatusOr<protocol::QueryResult> TargetSession::Query(std::string_view sql) {
  BR_RETURN_IF_ERROR(EnsureOpen());
  auto r = conn_->Query(sql);
  if (!r.ok()) return AfterFailure(r.status());
  return r;
}

absl::StatusOr<size_t> TargetSession::MaxStatementBytes() {
  BR_RETURN_IF_ERROR(EnsureOpen());
  return max_statement_;
}

absl::StatusOr<bool> TargetSession::SupportsBulk() {
  BR_RETURN_IF_ERROR(EnsureOpen());
  return (conn_->server_info().capabilities & protocol::cap::kMariaDbStmtBulk) != 0;
}

absl::Status TargetSession::ExecuteBulk(std::string_view sql, protocol::BulkExecuteBuilder& bulk,
                                        uint16_t* warnings) {
  for (int attempt = 0;; ++attempt) {
    BR_RETURN_IF_ERROR(SendBulk(sql, bulk));
    absl::Status s = FinishBulk(warnings);
    // ER_UNKNOWN_STMT_HANDLER: the server no longer knows the handle
    // (FinishBulk dropped it); prepare it again, once.
    if (!s.ok() && ServerErrorCode(s) == 1243 && attempt == 0) continue;
    return s;
  }
}

absl::StatusOr<uint32_t> TargetSession::PreparedId(std::string_view sql, size_t params) {
  // Statements stay prepared for the connection's life; a session writing
  // more tables (or batch sizes) than this starts again rather than holding
  // handles against the server-wide max_prepared_stmt_count.
  constexpr size_t kMaxPrepared = 64;
  auto it = prepared_.find(AV(sql));
  if (it != prepared_.end()) return it->second.id;
  if (prepared_.size() >= kMaxPrepared) CloseAllPrepared();
  auto p = conn_->Prepare(sql);
  if (!p.ok()) return AfterFailure(p.status());
  if (p->params != params) {
    (void)conn_->CloseStatement(p->id);
    return absl::FailedPreconditionError(absl::StrCat("target ", peer(), " prepared ",
                                                      AV(sql.substr(0, 200)), " with ", p->params,
                                                      " parameters, not ", params));
  }
  prepared_.emplace(std::string(sql), *p);
  return p->id;
}

absl::Status TargetSession::SendBulk(std::string_view sql, protocol::BulkExecuteBuilder& bulk) {
  BR_ASSIGN_OR_RETURN(bool bulk_ok, SupportsBulk());
  if (!bulk_ok) {
    return absl::FailedPreconditionError(
        absl::StrCat("target ", peer(), " (", conn_->server_info().version,
                     ") does not take COM_STMT_BULK_EXECUTE"));
  }
  BR_ASSIGN_OR_RETURN(uint32_t id, PreparedId(sql, bulk.params()));
  bulk.SetStatementId(id);
  if (absl::Status s = conn_->WriteCommand(bulk.payload()); !s.ok()) return AfterFailure(s);
  sent_sql_ = sql;
  sent_command_ = protocol::command::kStmtBulkExecute;
  return absl::OkStatus();
}

absl::Status TargetSession::SendExecute(std::string_view sql,
                                        const protocol::BulkExecuteBuilder& rows, size_t first,
                                        size_t count) {
  BR_RETURN_IF_ERROR(EnsureOpen());
  BR_ASSIGN_OR_RETURN(uint32_t id, PreparedId(sql, size_t{rows.params()} * count));
  BR_RETURN_IF_ERROR(protocol::BuildStmtExecute(rows, first, count, id, &execute_payload_));
  absl::Status written = conn_->WriteCommand(execute_payload_);
  // One large row would otherwise keep its buffer for the session's life.
  if (execute_payload_.capacity() > (size_t{16} << 20)) std::string().swap(execute_payload_);
  if (!written.ok()) return AfterFailure(written);
  sent_sql_ = sql;
  sent_command_ = protocol::command::kStmtExecute;
  return absl::OkStatus();
}

absl::Status TargetSession::ExecuteRows(std::string_view sql,
                                        const protocol::BulkExecuteBuilder& rows, size_t first,
                                        size_t count, uint16_t* warnings) {
  for (int attempt = 0;; ++attempt) {
    BR_RETURN_IF_ERROR(SendExecute(sql, rows, first, count));
    absl::Status s = FinishBulk(warnings);
    // ER_UNKNOWN_STMT_HANDLER: prepare it again, once (as ExecuteBulk).
    if (!s.ok() && ServerErrorCode(s) == 1243 && attempt == 0) continue;
    return s;
  }
}

absl::Status TargetSession::FinishBulk(uint16_t* warnings) {
  if (!conn_) return absl::UnavailableError(absl::StrCat("connection to ", peer(), " lost"));
  auto r = conn_->ReadCommandReply(sent_command_);
  if (!r.ok()) {
    if (ServerErrorCode(r.status()) == 1243) prepared_.erase(AV(sent_sql_));
    return AfterFailure(r.status());
  }
  if (warnings != nullptr) *warnings = r->warnings;
  return absl::OkStatus();
}

void TargetSession::CloseAllPrepared() {
  for (const auto& [sql, p] : prepared_) (void)conn_->CloseStatement(p.id);
  prepared_.clear();
}

absl::Status TargetSession::KillConnection(uint32_t id) {
  if (id == 0) return absl::OkStatus();
  BR_ASSIGN_OR_RETURN(std::unique_ptr<protocol::ClientConnection> c,
                      protocol::ClientConnection::Connect(options_));
  auto r = c->Query(absl::StrCat("KILL ", id));
  if (!r.ok() && ServerErrorCode(r.status()) != 1094) return r.status();  // 1094: already gone
  return absl::OkStatus();
}

absl::Status TargetSession::Execute(std::string_view sql, uint16_t* warnings) {
  auto r = Query(sql);
  if (!r.ok()) return r.status();
  if (warnings != nullptr) *warnings = r->warnings;
  return absl::OkStatus();
}

}  // namespace binrelay::apply
