#include "apply/image_arena.h"

#include <utility>

namespace binrelay::apply {

std::unique_ptr<char[]> ImageArena::Pool::Get() {
  {
    absl::MutexLock l(&mu_);
    if (!free_.empty()) {
      std::unique_ptr<char[]> chunk = std::move(free_.back());
      free_.pop_back();
      return chunk;
    }
  }
  return std::make_unique_for_overwrite<char[]>(kChunkBytes);
}

void ImageArena::Pool::Put(std::unique_ptr<char[]> chunk) {
  absl::MutexLock l(&mu_);
  if (free_.size() < max_chunks_) free_.push_back(std::move(chunk));
}

size_t ImageArena::Pool::free_chunks() const {
  absl::MutexLock l(&mu_);
  return free_.size();
}

ImageArena::ImageArena(ImageArena&& other) noexcept
    : pool_(other.pool_),
      chunks_(std::move(other.chunks_)),
      next_(std::exchange(other.next_, nullptr)),
      left_(std::exchange(other.left_, 0)),
      used_(std::exchange(other.used_, 0)),
      next_chunk_(std::exchange(other.next_chunk_, kFirstChunkBytes)) {
  other.chunks_.clear();
}

ImageArena& ImageArena::operator=(ImageArena&& other) noexcept {
  if (this != &other) {
    Release();
    pool_ = other.pool_;
    chunks_ = std::move(other.chunks_);
    other.chunks_.clear();
    next_ = std::exchange(other.next_, nullptr);
    left_ = std::exchange(other.left_, 0);
    used_ = std::exchange(other.used_, 0);
    next_chunk_ = std::exchange(other.next_chunk_, kFirstChunkBytes);
  }
  return *this;
}

ImageArena::~ImageArena() { Release(); }

void ImageArena::Release() {
  for (Chunk& c : chunks_) {
    if (c.standard && pool_ != nullptr) pool_->Put(std::move(c.bytes));
  }
  chunks_.clear();
  next_ = nullptr;
  left_ = 0;
  used_ = 0;
  next_chunk_ = kFirstChunkBytes;
}

char* ImageArena::Allocate(size_t n) {
  used_ += n;
  if (n > kChunkBytes / 4) {
    // Its own chunk, so a large image never strands the rest of a
    // standard one (next_ keeps pointing into that).
    auto bytes = std::make_unique_for_overwrite<char[]>(n);
    char* p = bytes.get();
    chunks_.push_back(Chunk{std::move(bytes), false});
    return p;
  }
  if (n > left_) {
    // Small chunks first, doubling while they fill; then standard ones.
    while (next_chunk_ < kChunkBytes && next_chunk_ < n) next_chunk_ *= 2;
    if (next_chunk_ < kChunkBytes) {
      auto bytes = std::make_unique_for_overwrite<char[]>(next_chunk_);
      next_ = bytes.get();
      left_ = next_chunk_;
      chunks_.push_back(Chunk{std::move(bytes), false});
      next_chunk_ *= 2;
    } else {
      std::unique_ptr<char[]> bytes =
          pool_ != nullptr ? pool_->Get() : std::make_unique_for_overwrite<char[]>(kChunkBytes);
      next_ = bytes.get();
      left_ = kChunkBytes;
      chunks_.push_back(Chunk{std::move(bytes), true});
    }
  }
  char* p = next_;
  next_ += n;
  left_ -= n;
  return p;
}

}  // namespace binrelay::apply
