// MoveSession: the session settings every connection of a move runs with,
// on the source and on the target, set once per connection (and again on
// each reconnect, protocol::ConnectOptions::session_sql). MySQL has no
// per-statement form (MariaDB's SET STATEMENT ... FOR), so the copier,
// chunker, checksum and table creation rely on these instead:
//   time_zone = '+00:00'       TIMESTAMP text read and compared in UTC, as
//                              the target session writes it
//   sql_mode = 'NO_ENGINE_SUBSTITUTION'
//                              no PAD_CHAR_TO_FULL_LENGTH (CHAR bounds as
//                              the binlog has them), no ANSI_QUOTES
//   character_set_results = binary
//                              strings arrive as the bytes stored
//   foreign_key_checks = 0     a table created or written before the tables
//                              its foreign keys name
#pragma once

#include "protocol/client_connection.h"

namespace binrelay::apply {

// `options` with the move's session settings added.
protocol::ConnectOptions InMoveSession(protocol::ConnectOptions options);

}  // namespace binrelay::apply
