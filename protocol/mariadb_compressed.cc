#include "protocol/mariadb_compressed.h"

#include <zlib.h>

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace binrelay::protocol {

absl::Status DecompressMariadbColumn(std::string_view stored, std::string* scratch,
                                     std::string_view* out) {
  if (stored.empty()) {
    *out = {};
    return absl::OkStatus();
  }
  const auto* p = reinterpret_cast<const uint8_t*>(stored.data());
  const uint8_t header = p[0];
  if ((header & 0x80) == 0) {
    *out = stored.substr(1);
    return absl::OkStatus();
  }
  const size_t len_bytes = header & 0x07;
  if (len_bytes < 1 || len_bytes > 4 || stored.size() < 1 + len_bytes) {
    return absl::DataLossError(absl::StrCat("compressed column header 0x", absl::Hex(header),
                                            " invalid for a ", stored.size(), "-byte value"));
  }
  uint64_t original = 0;
  for (size_t i = 0; i < len_bytes; ++i) original = (original << 8) | p[1 + i];
  const bool raw_deflate = (header & 0x08) != 0;

  // Deflate cannot expand data more than ~1032:1; a larger claim is corrupt
  // and must not make us allocate gigabytes.
  const uint64_t compressed = stored.size() - 1 - len_bytes;
  if (original > compressed * 1032 + 64) {
    return absl::DataLossError(absl::StrCat("compressed column claims ", original,
                                            " bytes from only ", compressed, " compressed bytes"));
  }
  scratch->resize(original);
  z_stream zs{};
  if (inflateInit2(&zs, raw_deflate ? -MAX_WBITS : MAX_WBITS) != Z_OK) {
    return absl::InternalError("inflateInit2 failed");
  }
  zs.next_in = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(p + 1 + len_bytes));
  zs.avail_in = static_cast<uInt>(stored.size() - 1 - len_bytes);
  zs.next_out = reinterpret_cast<Bytef*>(scratch->data());
  zs.avail_out = static_cast<uInt>(original);
  int rc = inflate(&zs, Z_FINISH);
  const uint64_t produced = zs.total_out;
  inflateEnd(&zs);
  if (rc != Z_STREAM_END || produced != original) {
    return absl::DataLossError(absl::StrCat("compressed column value does not inflate to its declared ",
                                            original, " bytes (zlib rc ", rc, ", got ", produced, ")"));
  }
  *out = std::string_view(*scratch);
  return absl::OkStatus();
}

}  // namespace binrelay::protocol
