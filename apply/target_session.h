// TargetSession: one connection to an apply target, (re)opened on demand
// with the session settings every flush relies on:
//   READ COMMITTED (no gap locks on the ranges a REPLACE touches),
//   innodb_lock_wait_timeout (short: a waiting batch is retried),
//   time_zone '+00:00' (TIMESTAMP text is UTC, apply/sql_literal.h),
//   sql_mode 'NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION' (not strict, no
//   NO_ZERO_DATE: every value the source stored is accepted as it is, and an
//   AUTO_INCREMENT column keeps an explicit 0; NO_BACKSLASH_ESCAPES added
//   where SetStringLiterals(false)),
//   lock_wait_timeout the same (metadata locks: an ALTER on the target),
//   max_statement_time (MariaDB) half the client's io_timeout, so a
//   statement never outlives the client's wait for it; on a client timeout
//   the connection is also KILLed before anything is retried,
//   foreign_key_checks 0 (drains reorder rows across tables),
//   max_error_count 65535 (every warning of a batch can be read),
//   NAMES utf8mb4 (identifiers).
//
// Errors are classified for the flusher: contention (1213 deadlock, 1205
// lock wait timeout) and a lost or refused connection are retried; anything
// else is a hard error that stops the pipeline.
//
// Thread safety: one thread at a time.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "apply/retry_policy.h"
#include "protocol/bulk_execute.h"
#include "protocol/capabilities.h"
#include "protocol/client_connection.h"

namespace binrelay::apply {

enum class ErrorClass { kNone, kContention, kConnection, kHard };

// What the flusher should do about `status` from Execute.
ErrorClass Classify(const absl::Status& status);
// The one retry policy of writes to a target (the pipeline's flushes, the
// move's chunk copies): kContention and kConnection are retried for as long
// as they last, waiting this long before attempt `attempt` + 1 (from 0):
// contention 10 ms doubling to 1 s, a lost connection 100 ms doubling to
// 5 s. A target's row locks and restarts are not errors of the data.
absl::Duration RetryWait(ErrorClass c, int attempt);
// That policy as a RetryPolicy: anything but kHard passes, for as long as
// it lasts.
RetryPolicy TargetWritePolicy();
// The server error code in `status` (0 if none).
int ServerErrorCode(const absl::Status& status);

// Statements of many rows for COM_STMT_EXECUTE (targets without bulk
// commands, MySQL). The server keeps an Item_param per marker for as long
// as a statement stays prepared (up to 64 per connection, see
// PreparedId), so statements hold at most kMaxExecuteMarkers markers: about
// a megabyte of the target's memory each, while 512 rows of four columns
// still share one round trip.
inline constexpr size_t kMaxExecuteMarkers = 2048;
// Rows per full statement for `params` markers per row, at most `max_rows`:
// a power of two, so that whatever the batch size (which AIMD moves) every
// statement is one of log2(kMaxExecuteMarkers / params) + 1 per table.
size_t ExecuteRowsPerStatement(size_t params, size_t max_rows);
// Rows of the next statement when `remaining` rows are left: `full`, or the
// largest power of two not above `remaining`.
size_t NextExecutePiece(size_t remaining, size_t full);
// `one_row` ("... VALUES (?,?)") with `rows` rows of markers.
std::string MultiRowStatement(std::string_view one_row, size_t rows);

class TargetSession {
 public:
  TargetSession(protocol::ConnectOptions options, int lock_wait_timeout_seconds)
      : options_(std::move(options)), lock_wait_timeout_(lock_wait_timeout_seconds) {
    options_.bulk_operations = true;
  }

  // Runs one statement, connecting first if needed. A connection-level
  // failure closes the session; the next call reconnects.
  absl::Status Execute(std::string_view sql, uint16_t* warnings = nullptr);
  absl::StatusOr<protocol::QueryResult> Query(std::string_view sql);
  // Runs `bulk` as COM_STMT_BULK_EXECUTE of `sql` (one row's statement with
  // `?` markers), prepared on first use on each connection; the command's
  // statement id is filled in here. FailedPrecondition if the target does
  // not take bulk commands.
  // `*warnings` (if given) receives the OK packet's warning count.
  absl::Status ExecuteBulk(std::string_view sql, protocol::BulkExecuteBuilder& bulk,
                           uint16_t* warnings = nullptr);
  // ExecuteBulk in two halves, so that the next command can be built while
  // the target runs this one: SendBulk prepares `sql` if needed and sends;
  // FinishBulk reads the reply. Nothing else may use the session between
  // them. `sql` must outlive the FinishBulk.
  absl::Status SendBulk(std::string_view sql, protocol::BulkExecuteBuilder& bulk);
  // Reads the reply to SendBulk's or SendExecute's command.
  absl::Status FinishBulk(uint16_t* warnings = nullptr);
  // For targets without bulk commands (MySQL): rows [first, first + count)
  // of `rows` as one COM_STMT_EXECUTE of `sql`, a statement whose VALUES
  // list has `count` rows of markers (protocol/stmt_execute.h), prepared on
  // first use on each connection. FinishBulk reads the reply; ExecuteRows
  // does both.
  absl::Status SendExecute(std::string_view sql, const protocol::BulkExecuteBuilder& rows,
                           size_t first, size_t count);
  absl::Status ExecuteRows(std::string_view sql, const protocol::BulkExecuteBuilder& rows,
                           size_t first, size_t count, uint16_t* warnings = nullptr);
  // Connects if needed; the largest statement or command the target
  // accepts: its max_allowed_packet less 1 KiB (16 MiB if unreadable).
  absl::StatusOr<size_t> MaxStatementBytes();
  // Connects if needed; whether the target takes COM_STMT_BULK_EXECUTE
  // (MariaDB >= 10.2).
  absl::StatusOr<bool> SupportsBulk();
  // Whether statement text sent on this session may hold string literals
  // written with backslash escapes (sql_literal.h): yes unless told. A
  // session that binds every value says no, and its sql_mode gains
  // NO_BACKSLASH_ESCAPES. MySQL writes each bound value into a text of the
  // statement for its logs even with every log off (sql/sql_prepare.cc,
  // setup_stmt_logging: the default caching_sha2_password plugin sets the
  // audit mask); a string it escapes character by character in
  // character_set_client, but with NO_BACKSLASH_ESCAPES it copies the
  // bytes, doubling quotes (sql/log_event.cc, append_query_string). In a
  // move's copy to MySQL 9.7 the escaping was 10% of the target's CPU.
  // Takes effect at once (one SET when it changes) and on every reconnect.
  absl::Status SetStringLiterals(bool allowed);
  // After a connect: the target logs this session's writes as statements
  // (binlog_format STATEMENT, and the applier may not change it).
  bool logs_statements() const { return logs_statements_; }
  void Close() { Reset(); }
  // KILL CONNECTION `id` over a new connection (a statement of a session
  // that timed out, or of an earlier binrelay process).
  absl::Status KillConnection(uint32_t id);
  std::string peer() const;

 private:
  absl::Status EnsureOpen();
  // The id of `sql` prepared on conn_ (which must be open), preparing it if
  // needed; FailedPrecondition if the server counts other than `params`
  // markers.
  absl::StatusOr<uint32_t> PreparedId(std::string_view sql, size_t params);
  void CloseAllPrepared();  // COM_STMT_CLOSE for each (no replies to read)
  void Reset() {
    conn_.reset();
    prepared_.clear();
    sent_sql_ = {};
  }
  // After a failed command: a lost connection is dropped, and one that
  // timed out is also killed (see Query).
  absl::Status AfterFailure(absl::Status status);

  protocol::ConnectOptions options_;
  int lock_wait_timeout_;
  std::unique_ptr<protocol::ClientConnection> conn_;
  uint32_t connection_id_ = 0;
  bool logs_statements_ = false;
  bool string_literals_ = true;  // SetStringLiterals
  size_t max_statement_ = 16u << 20;  // read at connect
  std::string_view sent_sql_;  // of the bulk command whose reply is unread
  uint8_t sent_command_ = protocol::command::kStmtBulkExecute;
  std::string execute_payload_;  // SendExecute's command (capacity kept)
  // Statements prepared on conn_, by SQL text.
  absl::flat_hash_map<std::string, protocol::ClientConnection::Prepared> prepared_;
};

}  // namespace binrelay::apply
