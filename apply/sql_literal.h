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
// - character data: a hex literal with the target column's charset
//   introducer (_utf8mb4 X'..'), so no byte passes through a conversion;
//   the schema check makes source and target charsets equal.
// - binary strings, BIT, GEOMETRY, VECTOR: a hex literal (X'..'). BINARY(n)
//   values arrive re-padded to n bytes.
// - JSON: its text as a utf8mb4 hex literal.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "protocol/value.h"

namespace binrelay::apply {

// `charset` is the target column's CHARACTER_SET_NAME ("" for columns
// without one: numbers, binary strings, BIT, GEOMETRY). v == nullptr: NULL.
// `exact_number`: the column is DECIMAL, whose text is written unquoted so
// that comparisons (DELETE by key) are exact decimal, not double.
void AppendSqlLiteral(const protocol::ValueView* v, std::string_view charset, std::string* out,
                      bool exact_number = false);

// `name` quoted as an identifier (backticks doubled).
void AppendIdentifier(std::string_view name, std::string* out);

// 'text' with quotes and backslashes escaped, for the checkpoint table and
// information_schema lookups.
void AppendQuotedString(std::string_view text, std::string* out);

}  // namespace binrelay::apply
