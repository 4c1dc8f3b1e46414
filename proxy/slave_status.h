// SHOW SLAVE STATUS / SHOW REPLICA STATUS for binrelay: it is a replica of
// its source, so monitoring tools that ask a server for its replication
// state get binrelay's upstream state in the standard columns, named and
// ordered as the source's flavour names them (clients index columns by
// name): MariaDB 10.11's SHOW SLAVE STATUS (and SHOW ALL SLAVES STATUS with
// its extra columns), MySQL 8's SHOW SLAVE STATUS or, for SHOW REPLICA
// STATUS, its Source/Replica names.
//
// How binrelay fills them: the IO thread is the upstream session (Yes while
// streaming, Connecting while (re)connecting, No when stopped); the SQL
// thread is the store writer (Yes while it stores, No with the store's error
// after a failed write, e.g. a full disk); Read_Master_Log_Pos is what was
// received, Exec_Master_Log_Pos what is durable; the relay log is the store.
//
// Thread safety: pure function.
// Lifetime: the result owns its strings.
#pragma once

#include "proxy/admin_handler.h"
#include "proxy/relay_status.h"

namespace binrelay::proxy {

ResultSet SlaveStatusResultSet(const RelayStatus& s, bool replica_keyword, bool all);

}  // namespace binrelay::proxy
