#include "replication/binlog_rotation.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "replication/binlog_status.h"

namespace binrelay::replication {

BinlogRotation RotateBinlog(SqlSource& sql) {
  BinlogRotation r;
  auto before = ReadBinlogStatus(sql);
  if (!before.ok()) {
    r.error = before.status();
    return r;
  }
  r.before = *before;
  r.first = BinlogPosition{before->file, 4};
  if (auto flushed = sql.Query("FLUSH NO_WRITE_TO_BINLOG BINARY LOGS"); !flushed.ok()) {
    // 1227: ER_SPECIFIC_ACCESS_DENIED_ERROR.
    const bool denied = absl::StrContains(flushed.status().message(), "1227");
    r.error = absl::Status(
        flushed.status().code(),
        absl::StrCat("FLUSH BINARY LOGS on ", sql.Peer(), ": ", flushed.status().message(),
                     denied ? " (GRANT RELOAD ON *.* to the [source] user, or set "
                              "[source] start = current)"
                            : ""));
    return r;
  }
  auto after = ReadBinlogStatus(sql);
  if (!after.ok()) {
    r.error = after.status();
    return r;
  }
  if (after->file == before->file) {
    r.error = absl::FailedPreconditionError(absl::StrCat(
        "FLUSH BINARY LOGS on ", sql.Peer(), " left the binlog in ", after->file));
    return r;
  }
  r.first = BinlogPosition{after->file, 4};
  return r;
}

}  // namespace binrelay::replication
