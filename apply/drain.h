// Drain: one hand-off from a pipeline's reader to its flusher: every row
// buffered since the last hand-off, per table, and the checkpoint the
// target may record once they are all applied.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "apply/apply_table.h"
#include "apply/table_buffer.h"
#include "replication/binlog_position.h"

namespace binrelay::apply {

struct Drain {
  std::vector<std::pair<const ApplyTable*, DrainedTable>> tables;
  // No change in the drain lies before `since` (the checkpoint the drain
  // before carried); everything before `checkpoint` is in this drain or an
  // earlier one.
  replication::BinlogPosition since;
  replication::BinlogPosition checkpoint;
  uint32_t checkpoint_ts = 0;  // the source's commit time at `checkpoint`
  size_t bytes = 0;
};

}  // namespace binrelay::apply
