#include "protocol/mariadb_event_compression.h"

#include <zlib.h>

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"

namespace binrelay::protocol {

absl::Status UncompressMariadbEventField(std::string_view field, std::string* out,
                                         size_t max_len) {
  out->clear();
  ByteCursor c(field);
  const uint8_t h = c.U8();
  if (!c.ok() || (h & 0x80) == 0) {
    return absl::DataLossError(absl::StrCat("compressed event field header 0x", absl::Hex(h),
                                            " lacks the 0x80 compressed flag"));
  }
  const unsigned alg = (h >> 4) & 0x07;
  const size_t n = h & 0x07;
  if (alg != 0) {
    return absl::UnimplementedError(
        absl::StrCat("compressed event field uses algorithm ", alg, "; only zlib (0) is known"));
  }
  if (n < 1 || n > 4) {
    return absl::DataLossError(absl::StrCat("compressed event field length width ", n,
                                            " outside 1..4"));
  }
  const uint64_t want = c.FixedBE(n);
  if (!c.ok()) return c.status("compressed event field length");
  if (want > max_len) {
    return absl::DataLossError(absl::StrCat("compressed event field declares ", want,
                                            " bytes, above the ", max_len, "-byte limit"));
  }
  std::string_view src = c.Rest();
  // Deflate expands at most ~1032:1 (zlib's FAQ); a larger claim is corrupt
  // and must not make a few bytes allocate up to max_len.
  if (want > src.size() * 1032 + 64) {
    return absl::DataLossError(absl::StrCat("compressed event field declares ", want,
                                            " bytes from only ", src.size(),
                                            " compressed bytes"));
  }
  out->resize(want);
  uLongf got = static_cast<uLongf>(want);
  const int rc = uncompress(reinterpret_cast<Bytef*>(out->data()), &got,
                            reinterpret_cast<const Bytef*>(src.data()), static_cast<uLong>(src.size()));
  if (rc != Z_OK || got != want) {
    out->clear();
    return absl::DataLossError(absl::StrCat("compressed event field: zlib ", rc == Z_OK ? "ok" : zError(rc),
                                            ", inflated ", got, " of ", want, " declared bytes"));
  }
  return absl::OkStatus();
}

}  // namespace binrelay::protocol
