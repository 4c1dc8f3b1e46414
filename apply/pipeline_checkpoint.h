// A pipeline's checkpoint, kept in two places:
//  - on the target, the row of table `<checkpoint_schema>`.`apply_checkpoint`
//    named after the pipeline: the truth, written by the flusher after each
//    drain, on the same server as the rows it vouches for;
//  - in <store>/.apply/NAME: read at start, before the target can be asked,
//    so the store is pinned where the pipeline will resume (retention runs
//    before the target answers).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "replication/binlog_position.h"

namespace binrelay::apply {

// The target table (created if absent at every start).
std::string CreateCheckpointTableSql(std::string_view schema);
// Its row for `pipeline`: (binlog_file, binlog_pos), or no row.
std::string SelectCheckpointSql(std::string_view schema, std::string_view pipeline);
// One REPLACE of that row; `tables` is recorded for people reading it.
std::string WriteCheckpointSql(std::string_view schema, std::string_view pipeline,
                               std::string_view tables, const replication::BinlogPosition& at);

class LocalCheckpoint {
 public:
  LocalCheckpoint(std::string store_dir, std::string pipeline)
      : dir_(store_dir + "/.apply"), path_(dir_ + "/" + pipeline) {}

  const std::string& path() const { return path_; }
  // nullopt when there is no file; DataLoss naming the file when it does
  // not hold FILE:POS.
  absl::StatusOr<std::optional<replication::BinlogPosition>> Read() const;
  // Replaces the file whole and durably (file and directory fsync'd).
  absl::Status Write(const replication::BinlogPosition& at) const;
  // Removes it (a move starting afresh); absent is fine.
  absl::Status Forget() const;

 private:
  std::string dir_;
  std::string path_;
};

}  // namespace binrelay::apply
