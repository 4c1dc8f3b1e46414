// RedactedStatement: SQL text as binrelay shows it to anyone but its author
// (SHOW PROCESSLIST's Info column, log lines, a pipeline's error quoting a
// binlog Query event).
//
// A statement that mentions PASSWORD or IDENTIFIED anywhere (SET PASSWORD,
// MASTER_PASSWORD, PASSWORD(), CREATE USER ... IDENTIFIED BY, also inside
// comments, version comments and the literal of PREPARE ... FROM) has every
// quoted literal replaced by '<secret>', as MySQL rewrites such statements for
// its logs (sql/sql_rewrite.cc), and every comment's body is dropped
// (version comments /*! */ are code and scanned as such). The scan needs no
// valid SQL and errs towards hiding: wherever the extent of a literal, an identifier or a comment
// is uncertain (a backslash, whose meaning depends on NO_BACKSLASH_ESCAPES;
// an unclosed quote, backtick or comment) the rest of the statement is
// hidden. Other statements are shown as sent.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace binrelay::protocol {

inline constexpr std::string_view kRedactedLiteral = "'<secret>'";

// True when `sql` contains PASSWORD or IDENTIFIED, in any case, anywhere.
bool NamesCredential(std::string_view sql);

// At most `max_bytes` of `sql`, redacted as above when NamesCredential(sql)
// (decided on the whole statement, not only the part shown).
std::string RedactedStatement(std::string_view sql, size_t max_bytes);

}  // namespace binrelay::protocol
