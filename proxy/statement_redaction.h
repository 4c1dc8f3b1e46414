// RedactedStatement: a client's statement text as binrelay shows it to
// anyone but that client (SHOW PROCESSLIST's Info column, the log).
//
// A statement that can carry a credential (a word containing PASSWORD, such as
// SET PASSWORD, MASTER_PASSWORD, PASSWORD(), or IDENTIFIED, as in
// CREATE USER ... IDENTIFIED BY) has every quoted literal replaced by
// '<secret>', as MySQL rewrites such statements for its logs
// (sql/sql_rewrite.cc). The scan needs no valid SQL: a backslash inside a
// literal (whose meaning depends on NO_BACKSLASH_ESCAPES), or a literal left
// open, hides everything after it. Other statements are shown as sent.
//
// Thread safety: a pure function.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace binrelay::proxy {

inline constexpr std::string_view kRedactedLiteral = "'<secret>'";

// True when a word outside quoted literals (comments included: /*! ... */
// runs on the server) contains PASSWORD or is IDENTIFIED.
bool NamesCredential(std::string_view sql);

// At most `max_bytes` of `sql`, redacted as above when NamesCredential(sql).
std::string RedactedStatement(std::string_view sql, size_t max_bytes);

}  // namespace binrelay::proxy
