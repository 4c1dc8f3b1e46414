#include "tests/harness/sql_conn.h"

#include <mysql.h>

#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"

namespace binrelay::testing {

absl::StatusOr<std::unique_ptr<SqlConn>> SqlConn::Open(const ServerSandbox& sb) {
  std::unique_ptr<SqlConn> c(new SqlConn());
  c->m_ = mysql_init(nullptr);
  unsigned int timeout = 10;
  mysql_options(c->m_, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
  if (!mysql_real_connect(c->m_, nullptr, "root", "", nullptr, 0, sb.SocketPath().c_str(),
                          CLIENT_MULTI_STATEMENTS)) {
    return absl::UnavailableError(
        absl::StrCat("connecting to ", sb.SocketPath(), ": ", mysql_error(c->m_)));
  }
  return c;
}

SqlConn::~SqlConn() {
  if (m_) mysql_close(m_);
}

absl::Status SqlConn::Error(std::string_view what, std::string_view sql) {
  std::string text(sql.substr(0, 300));
  if (sql.size() > 300) absl::StrAppend(&text, "...");
  return absl::InternalError(absl::StrCat(AV(what), " (", mysql_errno(m_), "): ", mysql_error(m_),
                                          " in: ", text));
}

absl::Status SqlConn::Exec(std::string_view sql) {
  if (mysql_real_query(m_, sql.data(), sql.size()) != 0) return Error("query failed", sql);
  // Each statement of a multi-statement query reports its own error while
  // the results are walked.
  int more = 0;
  do {
    if (MYSQL_RES* res = mysql_store_result(m_)) mysql_free_result(res);
    if (mysql_errno(m_) != 0) return Error("statement failed", sql);
    more = mysql_next_result(m_);
    if (more > 0) return Error("statement failed", sql);
  } while (more == 0);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<NamedRow>> SqlConn::QueryNamed(std::string_view sql) {
  if (mysql_real_query(m_, sql.data(), sql.size()) != 0) return Error("query failed", sql);
  std::vector<NamedRow> rows;
  if (MYSQL_RES* res = mysql_store_result(m_)) {
    unsigned int n = mysql_num_fields(res);
    MYSQL_FIELD* fields = mysql_fetch_fields(res);
    while (MYSQL_ROW row = mysql_fetch_row(res)) {
      unsigned long* lengths = mysql_fetch_lengths(res);
      NamedRow& out = rows.emplace_back();
      for (unsigned int i = 0; i < n; ++i) {
        auto& v = out[fields[i].name];
        if (row[i]) v.emplace(row[i], lengths[i]);
      }
    }
    mysql_free_result(res);
  } else if (mysql_errno(m_) != 0) {
    return Error("reading the result failed", sql);
  }
  while (mysql_next_result(m_) == 0) {
    if (MYSQL_RES* extra = mysql_store_result(m_)) mysql_free_result(extra);
  }
  return rows;
}

}  // namespace binrelay::testing
