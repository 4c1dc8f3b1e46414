// COM_STMT_EXECUTE of many rows at once, for servers without
// COM_STMT_BULK_EXECUTE (MySQL): the rows of a BulkExecuteBuilder re-laid
// for a statement prepared with one VALUES list of `count` rows, each the
// builder's row of markers ("REPLACE INTO t (a,b) VALUES (?,?),(?,?),...").
// The server then binds every value in binary form: no literal to lex or
// validate (a 64 KiB string literal costs the MySQL 9.7 parser more than
// InnoDB's write of it), and a binary-string parameter is stored without
// conversion from character_set_client.
//
// Layout without CLIENT_QUERY_ATTRIBUTES (sql/sql_prepare.cc,
// mysqld_stmt_execute and Prepared_statement::insert_params; the manual's
// "COM_STMT_EXECUTE" page):
//
//   0x17, statement id (4), flags (1) = CURSOR_TYPE_NO_CURSOR,
//   iteration count (4) = 1,
//   NULL bitmap ((n + 7) / 8 bytes, bit i for parameter i),
//   new-params-bound flag (1) = 1, per parameter: type (1), flags (1),
//   then each non-NULL value in the same binary form as the bulk command's.
//
// Thread safety: pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "protocol/bulk_execute.h"

namespace binrelay::protocol {

// Rows [first, first + count) of `rows` as a COM_STMT_EXECUTE of statement
// `id`, into `out` (replaced; its capacity is kept). Internal if a row's
// values do not parse (a builder bug, never the peer's input).
absl::Status BuildStmtExecute(const BulkExecuteBuilder& rows, size_t first, size_t count,
                              uint32_t id, std::string* out);

}  // namespace binrelay::protocol
