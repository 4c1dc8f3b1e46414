// MariaDB column compression (`COMPRESSED` columns, row-event types 140
// BLOB_COMPRESSED and 141 VARCHAR_COMPRESSED): the stored value is a one-byte
// header plus either the raw bytes or zlib data (MariaDB sql/field.cc
// compress_zlib / uncompress_zlib).
//
// Header byte h: h & 0x80 == 0 -> the rest is stored uncompressed. Otherwise
// h & 0x07 = n (1..4) bytes of big-endian original length follow, h & 0x08
// selects a raw deflate stream (no zlib wrapper), then the compressed data.
// An empty value has no header at all.
//
// Thread safety: stateless.
// Lifetime: *out is a view into `stored` (uncompressed case) or into *scratch.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace binrelay::protocol {

// Decodes a MariaDB compressed column value. DataLoss when the header or the
// zlib stream is corrupt or inflates to a length other than the one declared.
absl::Status DecompressMariadbColumn(std::string_view stored, std::string* scratch,
                                     std::string_view* out);

}  // namespace binrelay::protocol
