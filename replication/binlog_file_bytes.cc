#include "replication/binlog_file_bytes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "protocol/errno_status.h"
#include "protocol/status_macros.h"

namespace binrelay::replication {
namespace {

absl::Status Gunzip(const std::string& path, std::string_view in, uint64_t max_out,
                    std::string* out) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
    return absl::InternalError("zlib inflateInit2 failed");
  }
  constexpr size_t kStep = size_t{1} << 20;
  constexpr size_t kMaxIn = size_t{1} << 30;  // zlib's counters are 32-bit
  int rc = Z_OK;
  while (true) {
    if (zs.avail_in == 0 && !in.empty()) {
      const size_t n = std::min(in.size(), kMaxIn);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
      zs.avail_in = static_cast<uInt>(n);
      in.remove_prefix(n);
    }
    if (out->size() >= max_out) {
      inflateEnd(&zs);
      return absl::ResourceExhaustedError(absl::StrCat(
          "gzip file ", path, " inflates to more than ", max_out,
          " bytes; inflate it to disk first (gunzip -k) and read the plain file"));
    }
    const size_t old = out->size();
    const size_t step = static_cast<size_t>(std::min<uint64_t>(kStep, max_out - old));
    out->resize(old + step);
    zs.next_out = reinterpret_cast<Bytef*>(out->data() + old);
    zs.avail_out = static_cast<uInt>(step);
    rc = inflate(&zs, Z_NO_FLUSH);
    out->resize(old + step - zs.avail_out);
    if (rc == Z_OK) continue;
    // Z_BUF_ERROR with output space left means no input is left: the
    // stream is truncated. Anything else but the end is corrupt data.
    break;
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) {
    return absl::DataLossError(absl::StrCat("corrupt or truncated gzip data in ", path,
                                            " (zlib status ", rc, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BinlogFileBytes> BinlogFileBytes::Open(const std::string& path,
                                                      uint64_t max_inflated) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "cannot open binlog file", path);
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    absl::Status s = ErrnoStatus(errno, "cannot stat binlog file", path);
    ::close(fd);
    return s;
  }
  BinlogFileBytes f;
  if (!S_ISREG(st.st_mode)) {
    // A pipe (tail --file <(zcat ...)) or a device: no size to map, read it.
    std::string raw;
    char buf[1 << 16];
    while (true) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        absl::Status s = ErrnoStatus(errno, "cannot read binlog file", path);
        ::close(fd);
        return s;
      }
      if (n == 0) break;
      if (raw.size() + static_cast<size_t>(n) > max_inflated) {
        ::close(fd);
        return absl::ResourceExhaustedError(absl::StrCat(
            path, " holds more than ", max_inflated, " bytes; save it to a file first"));
      }
      raw.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    if (raw.size() >= 2 && static_cast<uint8_t>(raw[0]) == 0x1F &&
        static_cast<uint8_t>(raw[1]) == 0x8B) {
      BR_RETURN_IF_ERROR(Gunzip(path, raw, max_inflated, &f.inflated_));
    } else {
      f.inflated_ = std::move(raw);
    }
    f.owned_ = true;
    f.data_ = f.inflated_;
    return f;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      absl::Status s = ErrnoStatus(errno, "cannot map binlog file", path);
      ::close(fd);
      return s;
    }
    f.mapped_ = p;
    f.mapped_size_ = size;
    ::madvise(p, size, MADV_SEQUENTIAL);
  }
  ::close(fd);  // the mapping stays valid
  f.data_ = std::string_view(static_cast<const char*>(f.mapped_), f.mapped_size_);
  if (f.data_.size() >= 2 && static_cast<uint8_t>(f.data_[0]) == 0x1F &&
      static_cast<uint8_t>(f.data_[1]) == 0x8B) {
    absl::Status s = Gunzip(path, f.data_, max_inflated, &f.inflated_);
    f.Unmap();
    if (!s.ok()) return s;
    f.owned_ = true;
    f.data_ = f.inflated_;
  }
  return f;
}

BinlogFileBytes::BinlogFileBytes(BinlogFileBytes&& other) noexcept { *this = std::move(other); }

BinlogFileBytes& BinlogFileBytes::operator=(BinlogFileBytes&& other) noexcept {
  if (this == &other) return *this;
  Unmap();
  mapped_ = std::exchange(other.mapped_, nullptr);
  mapped_size_ = std::exchange(other.mapped_size_, 0);
  owned_ = std::exchange(other.owned_, false);
  inflated_ = std::move(other.inflated_);
  data_ = owned_ ? std::string_view(inflated_) : other.data_;
  other.data_ = {};
  return *this;
}

BinlogFileBytes::~BinlogFileBytes() { Unmap(); }

void BinlogFileBytes::Unmap() {
  if (mapped_ != nullptr) ::munmap(mapped_, mapped_size_);
  mapped_ = nullptr;
  mapped_size_ = 0;
}

}  // namespace binrelay::replication
