#include "apply/range_checksum.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "apply/range_copier.h"
#include "apply/sql_literal.h"
#include "protocol/status_macros.h"

namespace binrelay::apply {

RangeChecksum::RangeChecksum(const TableShape& shape) {
  // CONCAT_WS skips NULLs, so the NULL flags go in as one more field; the
  // separator cannot occur in any column's text (digits, signs, points,
  // dates, hex).
  std::string fields, nulls;
  for (const ShapeColumn& c : shape.columns) {
    if (c.generated) continue;
    std::string name;
    AppendIdentifier(c.name, &name);
    absl::StrAppend(&fields, ",", CopyTextExpression(c));
    absl::StrAppend(&nulls, nulls.empty() ? "" : ",", "ISNULL(", name, ")");
  }
  std::string table;
  AppendIdentifier(shape.db, &table);
  table.push_back('.');
  AppendIdentifier(shape.table, &table);
  select_ = absl::StrCat(
      "SET STATEMENT time_zone = '+00:00' FOR SELECT COUNT(*), "
      "COALESCE(BIT_XOR(CRC32(CONCAT_WS('|', CONCAT(",
      nulls, ")", fields, "))), 0) FROM ", table, " WHERE ");
}

absl::StatusOr<RangeSum> RangeChecksum::Sum(replication::SqlSource& server,
                                            const std::string& where) const {
  BR_ASSIGN_OR_RETURN(std::vector<replication::SqlRow> rows,
                      server.Query(absl::StrCat(select_, where)));
  RangeSum s;
  if (rows.size() != 1 || rows[0].size() != 2 || !rows[0][0] || !rows[0][1] ||
      !absl::SimpleAtoi(*rows[0][0], &s.rows) || !absl::SimpleAtoi(*rows[0][1], &s.crc)) {
    return absl::InternalError(absl::StrCat("checksum query on ", server.Peer(),
                                            " returned an unexpected result"));
  }
  return s;
}

}  // namespace binrelay::apply
