// SQL literals for the apply path: each column value of a row image written
// so that the target stores exactly the bytes or number the source stored.
//
// - integers, YEAR: decimal digits; ENUM and SET: their stored number (the
//   member index or bit mask, which MariaDB and MySQL accept as-is).
// - DOUBLE: the shortest text that parses back to the same binary value;
//   FLOAT: the shortest text of its exact value widened to double, which
//   rounds back to the same float on insert and compares equal to the
//   stored value in a WHERE (the FLOAT's own shortest text would not);
//   negative zero as -0e0 (a double, not the integer 0).
// - DECIMAL: its digits, unquoted (an exact decimal literal).
// - temporal values: their text as SELECT prints it with time_zone
//   '+00:00' (the apply session's zone), quoted.
// - character data: a quoted string with the target column's charset
//   introducer (_latin1'..'), so no byte passes through a conversion (an
//   introduced literal is taken in that charset as it stands); the schema
//   check makes source and target charsets equal. Only ', \ and NUL are
//   escaped, byte by byte: the session's character_set_client is utf8mb4,
//   whose multi-byte characters never contain those bytes, so the server's
//   lexer (sql/sql_lex.cc, Lex_input_stream::get_text) unescapes exactly
//   what was escaped, even for charsets such as sjis or gbk whose
//   characters may end in 0x5C. Quoted is half the size of hex and cheaper
//   for the server to read (about 20% for 64 KiB values, measured).
// - binary strings (BINARY, VARBINARY, BLOBs): the same as _binary'..'.
//   BINARY(n) values arrive re-padded to n bytes.
// - BIT, GEOMETRY, VECTOR: a hex literal (X'..').
// - JSON: its text as a _utf8mb4 quoted string.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/value.h"

namespace binrelay::apply {

// How a column's values are written, from its type (ColumnStyle).
enum class LiteralStyle : uint8_t {
  kDefault,
  // DECIMAL: its text unquoted, so that comparisons (DELETE by key) are
  // exact decimal, not double.
  kExactNumber,
  // BINARY, VARBINARY, BLOBs: _binary'..' (other binary values: hex).
  kBinaryString,
};
// The style for a column of information_schema DATA_TYPE `data_type`.
LiteralStyle ColumnStyle(std::string_view data_type);

// `charset` is the target column's CHARACTER_SET_NAME ("" for columns
// without one: numbers, binary strings, BIT, GEOMETRY). v == nullptr: NULL.
void AppendSqlLiteral(const protocol::ValueView* v, std::string_view charset, std::string* out,
                      LiteralStyle style = LiteralStyle::kDefault);

// `bytes` as an introduced string literal: _<charset>'..' ("binary" for
// binary strings), escaped byte by byte as above.
void AppendIntroducedString(std::string_view bytes, std::string_view charset, std::string* out);

// `name` quoted as an identifier (backticks doubled).
void AppendIdentifier(std::string_view name, std::string* out);

// 'text' with quotes and backslashes escaped, for the checkpoint table and
// information_schema lookups.
void AppendQuotedString(std::string_view text, std::string* out);

}  // namespace binrelay::apply
