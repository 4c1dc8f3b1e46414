#include "replication/binlog_rotation.h"

#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"
#include "replication/binlog_status.h"

namespace binrelay::replication {

absl::StatusOr<BinlogRotation> RotateBinlog(SqlSource& sql) {
  BinlogRotation r;
  BR_ASSIGN_OR_RETURN(r.before, ReadBinlogStatus(sql));
  if (auto flushed = sql.Query("FLUSH NO_WRITE_TO_BINLOG BINARY LOGS"); !flushed.ok()) {
    return absl::Status(flushed.status().code(),
                        absl::StrCat("FLUSH BINARY LOGS on ", sql.Peer(), " (needs RELOAD): ",
                                     flushed.status().message()));
  }
  BR_ASSIGN_OR_RETURN(BinlogPosition after, ReadBinlogStatus(sql));
  if (after.file == r.before.file) {
    return absl::FailedPreconditionError(absl::StrCat(
        "FLUSH BINARY LOGS on ", sql.Peer(), " left the binlog in ", after.file));
  }
  r.first = BinlogPosition{after.file, 4};
  return r;
}

}  // namespace binrelay::replication
