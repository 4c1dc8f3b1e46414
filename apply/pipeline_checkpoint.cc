#include "apply/pipeline_checkpoint.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "apply/sql_literal.h"
#include "protocol/errno_status.h"
#include "replication/atomic_file.h"
#include "replication/binlog_position.h"

namespace binrelay::apply {

std::string CreateCheckpointTableSql(std::string_view schema) {
  std::string sql = "CREATE TABLE IF NOT EXISTS ";
  AppendIdentifier(schema, &sql);
  sql.append(
      ".`apply_checkpoint` ("
      "pipeline VARCHAR(64) NOT NULL PRIMARY KEY, "
      "binlog_file VARCHAR(255) NOT NULL, "
      "binlog_pos BIGINT UNSIGNED NOT NULL, "
      "tables TEXT NOT NULL, "
      "updated_at TIMESTAMP(6) NOT NULL) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4");
  return sql;
}

std::string SelectCheckpointSql(std::string_view schema, std::string_view pipeline) {
  std::string sql = "SELECT binlog_file, binlog_pos FROM ";
  AppendIdentifier(schema, &sql);
  sql.append(".`apply_checkpoint` WHERE pipeline = ");
  AppendQuotedString(pipeline, &sql);
  return sql;
}

std::string WriteCheckpointSql(std::string_view schema, std::string_view pipeline,
                               std::string_view tables, const replication::BinlogPosition& at) {
  std::string sql = "REPLACE INTO ";
  AppendIdentifier(schema, &sql);
  sql.append(".`apply_checkpoint` (pipeline, binlog_file, binlog_pos, tables, updated_at) VALUES (");
  AppendQuotedString(pipeline, &sql);
  sql.push_back(',');
  AppendQuotedString(at.file, &sql);
  absl::StrAppend(&sql, ",", at.offset, ",");
  AppendQuotedString(tables, &sql);
  sql.append(", UTC_TIMESTAMP(6))");
  return sql;
}

absl::StatusOr<std::optional<replication::BinlogPosition>> LocalCheckpoint::Read() const {
  std::ifstream in(path_);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  auto spec = replication::ParseStartSpec(line);
  if (!spec.ok() || spec->kind != replication::StartSpec::Kind::kPosition) {
    return absl::DataLossError(
        absl::StrCat(path_, " holds '", line, "', not FILE:POS; remove it to start over"));
  }
  return spec->position;
}

absl::Status LocalCheckpoint::Write(const replication::BinlogPosition& at) const {
  if (::mkdir(dir_.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, "cannot create", dir_);
  }
  return replication::WriteFileAtomically(path_, absl::StrCat(at.file, ":", at.offset, "\n"),
                                          0644);
}

absl::Status LocalCheckpoint::Forget() const {
  if (::unlink(path_.c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus(errno, "cannot remove", path_);
  }
  return absl::OkStatus();
}

}  // namespace binrelay::apply
