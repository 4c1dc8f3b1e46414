// ImageArena: the bytes of one table buffer's row images, copied into large
// chunks instead of one heap allocation per image.
//
// An insert-heavy drain buffers a million small images; one malloc and one
// free each was about 8% of the pipeline's instructions (callgrind,
// bench/apply_bench.sh insert-heavy). Chunks never move, so a view into
// them stays valid until the arena is destroyed; the drained table carries
// its arena to the flushers and drops it after the flush.
//
// Chunks of the standard size go back to a Pool shared by the pipeline's
// reader (which fills arenas) and flusher (which drops them), up to a
// bound: a drain's worth of reused chunks is memory the kernel does not
// have to fault in again (wide rows spent a third of binrelay's time
// filling fresh pages, bench/README.md).
//
// Thread safety: an ImageArena is used by one thread at a time; a Pool is
// thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace binrelay::apply {

class ImageArena {
 public:
  // Standard chunk; an image over a quarter of it gets a chunk of its own.
  // An arena's first chunks are smaller (kFirstChunkBytes, doubling up to
  // the standard size), so a buffer holding a few rows of each of many
  // tables does not hold a megabyte per table.
  static constexpr size_t kChunkBytes = size_t{1} << 20;
  static constexpr size_t kFirstChunkBytes = size_t{16} << 10;

  class Pool {
   public:
    // Keeps at most `max_bytes` of free chunks.
    explicit Pool(size_t max_bytes) : max_chunks_(max_bytes / kChunkBytes) {}
    std::unique_ptr<char[]> Get();
    void Put(std::unique_ptr<char[]> chunk);
    size_t free_chunks() const;

   private:
    const size_t max_chunks_;
    mutable absl::Mutex mu_;
    std::vector<std::unique_ptr<char[]>> free_ ABSL_GUARDED_BY(mu_);
  };

  explicit ImageArena(Pool* pool = nullptr) : pool_(pool) {}
  ImageArena(ImageArena&& other) noexcept;
  ImageArena& operator=(ImageArena&& other) noexcept;
  ~ImageArena();

  // `n` uninitialised bytes that stay put for the arena's life.
  char* Allocate(size_t n);
  // Bytes handed out by Allocate (what the buffer's memory limit counts).
  size_t used() const { return used_; }

 private:
  void Release();

  struct Chunk {
    std::unique_ptr<char[]> bytes;
    bool standard;  // kChunkBytes long: may go back to the pool (others are freed)
  };
  Pool* pool_;
  std::vector<Chunk> chunks_;
  char* next_ = nullptr;  // free space in the chunk being filled
  size_t left_ = 0;
  size_t used_ = 0;
  size_t next_chunk_ = kFirstChunkBytes;  // size of the next small chunk
};

}  // namespace binrelay::apply
