// MariaDB compressed binlog events (`log_bin_compress`): the SQL text
// of QUERY_COMPRESSED (165) and the rows section of *_ROWS_COMPRESSED
// (166..171). Layout (MariaDB log_event.cc binlog_buf_uncompress /
// binlog_get_uncompress_len): header byte h with h & 0x80 set, algorithm
// (h >> 4) & 7 (0 = zlib, the only one defined), n = h & 7 (1..4) bytes of
// big-endian original length, then a zlib stream (with zlib header).
// (Not to be confused with per-column compression, mariadb_compressed.h.)
//
// Thread safety: pure function.
// Lifetime: the result lives in *out, which the caller owns and may reuse.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace binrelay::protocol {

// Inflates `field` into *out (cleared first). DataLoss on a bad header,
// corrupt stream or a length other than declared. Refuses, before
// allocating, declared lengths above `max_len` (default 1 GiB, MySQL/MariaDB's
// max event size) or above 1032 times the compressed bytes (deflate's limit).
absl::Status UncompressMariadbEventField(std::string_view field, std::string* out,
                                         size_t max_len = size_t{1} << 30);

}  // namespace binrelay::protocol
