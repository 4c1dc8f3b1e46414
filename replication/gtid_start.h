// Where a consumer that already has every transaction of a GTID position
// must start reading the store: at the GTID event of the first stored
// transaction the position does not contain (or the committed end, if it
// contains them all). The scan starts in the file FileForGtid names (the
// newest whose opening GTID state the position has passed), as a MariaDB
// primary picks the file for a GTID dump (sql/sql_repl.cc,
// gtid_find_binlog_file).
//
// MariaDB "d-s-n,...": a transaction is contained when its domain is in the
// position with a seq_no at or past its own (the position is per domain).
// MySQL "uuid:1-5,...": when the set holds its GTID. Transactions of domains
// the position does not name, and anonymous ones, are not contained.
//
// The first transaction not contained may be followed by contained ones of
// another domain: a consumer starting there sees them again, so this is
// for consumers whose replay is idempotent (apply pipelines: full row
// images written with REPLACE/DELETE).
//
// Bounded: one pass over stored events, no allocation per event.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "replication/binlog_position.h"
#include "replication/store_read_side.h"

namespace binrelay::replication {

absl::StatusOr<BinlogPosition> FirstTransactionNotIn(const StoreReadSide& store,
                                                     std::string_view gtid_position);

}  // namespace binrelay::replication
