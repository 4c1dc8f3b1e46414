// COM_STMT_BULK_EXECUTE (MariaDB >= 10.2): one prepared statement run over
// many rows of parameters in a single command. An INSERT or REPLACE runs as
// one statement over every row, without the parse of a multi-row VALUES list
// (sql/sql_prepare.cc mysqld_stmt_bulk_execute and insert_bulk_params;
// libmariadb's mysql_stmt_execute_generate_bulk_request builds the same
// layout):
//
//   0xFA, statement id (4), flags (2) = STMT_BULK_FLAG_CLIENT_SEND_TYPES,
//   per parameter: type (1), flags (1: 0x80 unsigned),
//   per row, per parameter: indicator (1: 0 value, 1 NULL), then the value
//   in the binary protocol's form (8-byte integers and doubles; lengths
//   first for strings).
//
// The server accepts it only from a client that announced
// MARIADB_CLIENT_STMT_BULK_OPERATIONS (cap::kMariaDbStmtBulk).
//
// Parameter types are not declared up front: the first non-NULL value of
// each parameter sets its type in the header, and later rows must agree (a
// parameter that is NULL in every row keeps MYSQL_TYPE_NULL).
//
// Thread safety: one thread at a time.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "protocol/temporal.h"

namespace binrelay::protocol {

// Binary protocol type codes (include/mysql_com.h enum_field_types).
enum class ParamType : uint8_t {
  kLongLong = 8,
  kDouble = 5,
  kNull = 6,
  kDate = 10,
  kTime = 11,
  kDatetime = 12,
  kNewDecimal = 246,
  kBlob = 252,
  kString = 254,
};

class BulkExecuteBuilder {
 public:
  // Starts a command for statement `id` with `params` parameters; keeps the
  // buffer's capacity from earlier commands.
  void Start(uint32_t id, uint16_t params);

  // One value of the current row, in parameter order. Each returns
  // Internal if the parameter had another type in an earlier row.
  void AddNull();
  absl::Status AddInt(int64_t v) { return AddInteger(static_cast<uint64_t>(v), false); }
  absl::Status AddUnsigned(uint64_t v) { return AddInteger(v, true); }
  absl::Status AddDouble(double d);
  // DECIMAL text: the server reads it as an exact decimal.
  absl::Status AddDecimalText(std::string_view digits);
  // Text in the connection's character_set_client (ASCII temporal text).
  absl::Status AddString(std::string_view text);
  // Bytes taken as a binary string: never converted from
  // character_set_client (Item_param::setup_conversion_blob), so a
  // latin1 or sjis column receives exactly these bytes.
  absl::Status AddBlob(std::string_view bytes);
  // Temporal values in the binary protocol's MYSQL_TIME layouts
  // (sql_prepare.cc set_param_date, set_param_datetime, set_param_time):
  // no text for the server to parse. A DATETIME parameter stored into a
  // TIMESTAMP column is read in the session's time zone.
  absl::Status AddDate(const TemporalParts& t);
  absl::Status AddDatetime(const TemporalParts& t);
  absl::Status AddTime(const TemporalParts& t);  // hours past 23 become days
  // Ends a row; Internal if it did not hold exactly `params` values.
  absl::Status EndRow();

  // A point between rows, and going back to it (a batch is cut before a
  // row that made it too large).
  struct Mark {
    size_t bytes = 0;
    size_t rows = 0;
  };
  Mark mark() const { return {len_, rows_}; }
  void TruncateTo(Mark mark);

  // The statement the command runs (a reconnect prepares it anew).
  void SetStatementId(uint32_t id);
  uint16_t params() const { return params_; }
  size_t rows() const { return rows_; }
  // Row i's values (each an indicator byte, then the value unless NULL),
  // and parameter p's type and flags bytes: what stmt_execute.h re-lays as
  // COM_STMT_EXECUTE.
  std::string_view row(size_t i) const {
    const size_t begin = i == 0 ? values_begin() : row_ends_[i - 1];
    return {buf_.data() + begin, row_ends_[i] - begin};
  }
  std::string_view param_slot(uint16_t p) const { return {buf_.data() + 7 + 2 * size_t{p}, 2}; }
  size_t size() const { return len_; }
  std::string_view payload() const { return {buf_.data(), len_}; }

 private:
  absl::Status AddInteger(uint64_t v, bool is_unsigned);
  // Checks (or sets) the current parameter's type, then makes room for its
  // indicator and `value_bytes` more: returns where the value goes, or
  // nullptr with *error set. Runs for every value, so the error text is
  // built only on failure.
  char* Claim(ParamType type, bool is_unsigned, size_t value_bytes, absl::Status* error);
  absl::Status ClaimError(ParamType type) const;
  absl::Status AddLengthPrefixed(ParamType type, std::string_view bytes);
  // Makes buf_ hold at least `n` bytes; len_ is unchanged. Grows
  // geometrically, so the zero fill of std::string::resize is paid once per
  // byte of capacity, not once per value.
  void Reserve(size_t n) {
    if (n > buf_.size()) buf_.resize(std::max(n, 2 * buf_.size()));
  }

  size_t values_begin() const { return 7 + 2 * size_t{params_}; }

  // The command is buf_[0, len_); bytes past len_ are spare capacity.
  std::string buf_;
  std::vector<size_t> row_ends_;  // where each ended row's values end
  size_t len_ = 0;
  uint16_t params_ = 0;
  uint16_t next_ = 0;  // parameter index within the current row
  size_t rows_ = 0;
};

}  // namespace binrelay::protocol
