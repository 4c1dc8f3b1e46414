// BinlogFileBytes: the bytes of a binlog or relay-log file on disk, for the
// readers that walk a whole file (`tail --file`, the store's recovery scan).
//
// A plain file is mapped read-only, not copied: a 1 GiB binlog costs address
// space and page cache, not heap. A gzip-compressed file (`.gz` from an
// archive) is inflated into memory, at most `max_inflated` bytes: a small
// hostile file must not inflate without bound. Inputs of any size are fed to
// zlib in pieces (its counters are 32-bit).
//
// A pipe or other non-regular file is read into memory (at most
// `max_inflated` bytes). A mapped file must not be truncated while mapped (reading the lost pages
// would raise SIGBUS); binlog files are only appended to and deleted.
//
// Thread safety: immutable after Open. Lifetime: data() lives as long as
// the object.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace binrelay::replication {

class BinlogFileBytes {
 public:
  // Inflated gzip input larger than this is refused (a binlog file rarely
  // exceeds max_binlog_size, at most 1 GiB, by more than one transaction).
  static constexpr uint64_t kDefaultMaxInflated = uint64_t{4} << 30;

  // Errors name the path: NotFound for a missing file, DataLoss for corrupt
  // gzip data, ResourceExhausted past `max_inflated`.
  static absl::StatusOr<BinlogFileBytes> Open(const std::string& path,
                                              uint64_t max_inflated = kDefaultMaxInflated);

  BinlogFileBytes(BinlogFileBytes&& other) noexcept;
  BinlogFileBytes& operator=(BinlogFileBytes&& other) noexcept;
  BinlogFileBytes(const BinlogFileBytes&) = delete;
  BinlogFileBytes& operator=(const BinlogFileBytes&) = delete;
  ~BinlogFileBytes();

  std::string_view data() const { return data_; }

 private:
  BinlogFileBytes() = default;
  void Unmap();

  void* mapped_ = nullptr;
  size_t mapped_size_ = 0;
  bool owned_ = false;  // data_ is inflated_
  std::string inflated_;
  std::string_view data_;
};

}  // namespace binrelay::replication
