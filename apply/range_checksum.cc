#include "apply/range_checksum.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "apply/range_copier.h"
#include "apply/sql_literal.h"
#include "protocol/status_macros.h"

namespace binrelay::apply {

RangeChecksum::RangeChecksum(const TableShape& shape) {
  // Each row's hash is MD5 over its columns' own MD5s and NULL flags, cut to
  // 64 bits; the range's is their BIT_XOR. Not CRC32: CRC is affine, so the
  // same change made to two rows (one lost UPDATE of two rows) cancels out
  // in a XOR of CRCs. Hashing column by column keeps every input small (one
  // CONCAT of whole rows passes max_allowed_packet for large BLOBs and turns
  // NULL, which BIT_XOR skips). Character and binary data are hashed as
  // their bytes, the rest as the copier's exact text; CONCAT_WS skips NULLs,
  // so the NULL flags go in as one more field.
  std::string fields, nulls;
  for (const ShapeColumn& c : shape.columns) {
    if (c.generated) continue;
    std::string name;
    AppendIdentifier(c.name, &name);
    const std::string text = CopyTextExpression(c);
    const bool raw = text.rfind("HEX(", 0) == 0;
    absl::StrAppend(&fields, ",MD5(", raw ? name : text, ")");
    absl::StrAppend(&nulls, nulls.empty() ? "" : ",", "ISNULL(", name, ")");
  }
  std::string table;
  AppendIdentifier(shape.db, &table);
  table.push_back('.');
  AppendIdentifier(shape.table, &table);
  select_ = absl::StrCat(
      "SET STATEMENT time_zone = '+00:00', sql_mode = 'NO_ENGINE_SUBSTITUTION' FOR "
      "SELECT COUNT(*), COALESCE(BIT_XOR(CAST(CONV(LEFT(MD5(CONCAT_WS('|', CONCAT(",
      nulls, ")", fields, ")), 16), 16, 10) AS UNSIGNED)), 0) FROM ", table, " WHERE ");
}

absl::StatusOr<RangeSum> RangeChecksum::Sum(replication::SqlSource& server,
                                            const std::string& where) const {
  BR_ASSIGN_OR_RETURN(std::vector<replication::SqlRow> rows,
                      server.Query(absl::StrCat(select_, where)));
  RangeSum s;
  if (rows.size() != 1 || rows[0].size() != 2 || !rows[0][0] || !rows[0][1] ||
      !absl::SimpleAtoi(*rows[0][0], &s.rows) || !absl::SimpleAtoi(*rows[0][1], &s.hash)) {
    return absl::InternalError(absl::StrCat("checksum query on ", server.Peer(),
                                            " returned an unexpected result"));
  }
  return s;
}

}  // namespace binrelay::apply
