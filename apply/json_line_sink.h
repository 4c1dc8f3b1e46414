// JsonLineSink: the `binrelay tail` output. One JSON object per changed row:
//   {"op":"insert"|"update"|"delete","db":..,"table":..,"file":..,"pos":N,
//    "gtid":"..."|null,"ts":N,"before":{..}|null,"after":{..}|null}
// plus "image":"partial" when a row image lacks columns.
// Lines are buffered per transaction and written only when it commits, so a
// reader never sees rows of a transaction that is later re-sent, and never
// a partial line.
//
// Thread safety: single-threaded.
#pragma once

#include <chrono>
#include <string>

#include "apply/change_sink.h"

namespace binrelay::apply {

class JsonLineSink : public ChangeSink {
 public:
  // Writes to file descriptor `fd`. With `flush_each_commit`, every commit is
  // written at once (following a live source); otherwise output is batched
  // into large writes (reading to a known end).
  JsonLineSink(int fd, bool flush_each_commit) : fd_(fd), flush_each_commit_(flush_each_commit) {}

  absl::Status OnRow(const RowChange& row) override;
  absl::Status OnCommit() override;
  void OnRestart() override {
    pending_.resize(committed_);
    rows_open_ = 0;
  }
  // Writes everything committed so far.
  absl::Status Flush();
  uint64_t rows_written() const { return rows_committed_; }

 private:
  int fd_;
  bool flush_each_commit_;
  // Escaped JSON of the fields that repeat row after row, made again only
  // when the raw value changes (a transaction's rows share them all).
  struct CachedField {
    std::string raw;
    std::string json;
    bool valid = false;
  };
  const std::string& Cached(CachedField& f, std::string_view raw);
  CachedField db_, table_, file_, gtid_;
  uint64_t generation_ = 0;  // +1 whenever a cached field is rebuilt
  // Everything up to "before": for the rows of one event (same op, table,
  // file, position, GTID and timestamp), made once.
  std::string prefix_;
  bool prefix_valid_ = false;
  uint64_t prefix_generation_ = 0;
  RowOp prefix_op_ = RowOp::kInsert;
  uint64_t prefix_pos_ = 0;
  uint32_t prefix_ts_ = 0;
  bool prefix_has_gtid_ = false;
  std::string pending_;    // committed lines, then the open transaction's
  size_t committed_ = 0;   // bytes of pending_ that are committed
  uint64_t rows_open_ = 0;
  uint64_t rows_committed_ = 0;
};

}  // namespace binrelay::apply
