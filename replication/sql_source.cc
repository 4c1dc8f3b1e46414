#include "replication/sql_source.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"

namespace binrelay::replication {

absl::StatusOr<protocol::TextRows> SqlSource::QueryRows(std::string_view sql) {
  protocol::TextRows out;
  BR_RETURN_IF_ERROR(QueryRowsInto(sql, &out));
  return out;
}

absl::Status SqlSource::QueryRowsInto(std::string_view sql, protocol::TextRows* into) {
  into->Reset(0);
  BR_ASSIGN_OR_RETURN(std::vector<SqlRow> rows, Query(sql));
  into->Reset(rows.empty() ? 0 : rows[0].size());
  for (const SqlRow& row : rows) {
    absl::Status s = into->AppendValues(row);
    if (!s.ok()) return Annotate(s, absl::StrCat("result from ", Peer()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::string>> QueryValue(SqlSource& source, std::string_view sql) {
  BR_ASSIGN_OR_RETURN(std::vector<SqlRow> rows, source.Query(sql));
  if (rows.empty() || rows[0].empty()) return std::optional<std::string>();
  return rows[0][0];
}

absl::StatusOr<std::optional<std::string>> QueryOptionalVariable(SqlSource& source,
                                                                  std::string_view name) {
  auto value = QueryValue(source, absl::StrCat("SELECT @@GLOBAL.", AV(name)));
  if (!value.ok() && absl::StrContains(value.status().message(), "1193")) {
    return std::optional<std::string>();
  }
  return value;
}

}  // namespace binrelay::replication
