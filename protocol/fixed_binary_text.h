// Text forms of MariaDB's fixed-size binary data types (the type_uuid and
// type_inet plugins: UUID, INET4, INET6). The binlog logs them as BINARY(16)
// or BINARY(4) in network order; only the schema says which they are, and
// SELECT prints them as text, which these functions reproduce:
// - UUID: 8-4-4-4-12 lowercase hex (plugin/type_uuid/sql_type_uuid.h);
// - INET4: dotted decimal (plugin/type_inet/sql_type_inet.cc, Inet4::to_string);
// - INET6: lowercase hex words without leading zeros, the first longest run
//   of zero words (even a single one) as "::", and the last 32 bits as dotted
//   decimal for IPv4-compatible (::a.b.c.d) and IPv4-mapped (::ffff:a.b.c.d)
//   addresses (Inet6::to_string there; not quite RFC 5952, which would not
//   shorten a single zero word).
//
// Thread safety: stateless functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/column_def.h"

namespace binrelay::protocol {

// Appends the text of `bytes` as `type`. Returns false, appending nothing,
// when `bytes` is not the type's size (16, 4 or 16 bytes) or type is kNone.
bool AppendFixedBinaryText(FixedBinaryType type, std::string_view bytes, std::string* out);

// The type named by information_schema.COLUMNS.DATA_TYPE ("uuid", "inet4",
// "inet6", any letter case); kNone for every other name.
FixedBinaryType FixedBinaryTypeFromName(std::string_view data_type);

}  // namespace binrelay::protocol
