// CopyGate: a move's copier as its apply pipeline sees it. While a table is
// being copied, the pipeline asks its TableCopyGate, for every change it
// reads, whether the change is kept (Admit) and, for every change it is
// about to write, whether it must wait for the chunk being copied
// (MustDefer): copy_watermarks.h explains both. The copier threads hand out
// and complete chunks on the same object.
//
// Thread safety: TableCopyGate is safe from any thread (one mutex; every
// call is short). CopyGate::ForTable is called while the pipeline prepares.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "apply/copy_watermarks.h"

namespace binrelay::apply {

class TableCopyGate {
 public:
  explicit TableCopyGate(CopyWatermarks watermarks) : w_(std::move(watermarks)) {}

  // The copier side (copy_watermarks.h).
  absl::StatusOr<uint64_t> Dispatch(std::optional<std::string> upper);
  void Complete(uint64_t id);
  void Disable();

  // The pipeline side.
  bool Admit(std::string_view ordered_key);
  bool MustDefer(std::string_view ordered_key) const;
  // Byte order is the key's order (CopyWatermarks' exact_order): the
  // pipeline keys deferred changes by ordered key only then.
  bool exact_order() const { return exact_order_; }

  // Changes of this table the pipeline holds back (reported after every
  // drain). A copier of a table whose key order is inexact waits for this
  // to reach zero between chunks, so held changes cannot pile up.
  void SetDeferred(size_t rows);
  size_t deferred() const { return deferred_.load(std::memory_order_relaxed); }
  // Waits until no change is held back, at most `timeout`; false if some
  // still are.
  bool WaitNoneDeferred(absl::Duration timeout);

  struct Snapshot {
    std::optional<std::string> low_watermark;
    std::optional<std::string> checkpoint_guard;
    bool copy_done = false;
    bool enabled = true;
    uint64_t dropped = 0;
    size_t chunks_in_flight = 0;
  };
  Snapshot snapshot() const;

 private:
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  CopyWatermarks w_ ABSL_GUARDED_BY(mu_);
  const bool exact_order_ = w_.exact_order();
  std::atomic<size_t> deferred_{0};
};

class CopyGate {
 public:
  virtual ~CopyGate() = default;
  // The gate of source table db.table, or null if it is not being copied.
  virtual TableCopyGate* ForTable(std::string_view db, std::string_view table) = 0;
};

}  // namespace binrelay::apply
