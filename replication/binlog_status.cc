#include "replication/binlog_status.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace binrelay::replication {

absl::StatusOr<BinlogPosition> ReadBinlogStatus(SqlSource& sql) {
  // MySQL 8.4 replaced SHOW MASTER STATUS with SHOW BINARY LOG STATUS.
  auto rows = sql.Query("SHOW MASTER STATUS");
  if (!rows.ok()) rows = sql.Query("SHOW BINARY LOG STATUS");
  if (!rows.ok()) return rows.status();
  if (rows->empty() || (*rows)[0].size() < 2 || !(*rows)[0][0] || !(*rows)[0][1]) {
    return absl::FailedPreconditionError(absl::StrCat(
        "SHOW MASTER STATUS on ", sql.Peer(),
        " returned no binlog: binary logging is off or the user lacks BINLOG MONITOR / "
        "REPLICATION CLIENT"));
  }
  BinlogPosition pos;
  pos.file = *(*rows)[0][0];
  if (!absl::SimpleAtoi(*(*rows)[0][1], &pos.offset)) {
    return absl::DataLossError(absl::StrCat("SHOW MASTER STATUS on ", sql.Peer(),
                                            " returned a non-numeric position '",
                                            *(*rows)[0][1], "'"));
  }
  return pos;
}

}  // namespace binrelay::replication
