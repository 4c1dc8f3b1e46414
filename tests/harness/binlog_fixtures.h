// Recorded binlogs the store, sender and admin tests build stores from
// (paths under the fixtures directory; see fixtures.h).
//
// Thread safety / lifetime: constants.
#pragma once

namespace binrelay::testing {

// MySQL 8.0.45, CRC32: binlog.000001 (1516 bytes, empty PREVIOUS_GTIDS,
// GTIDs 1-4, ends with ROTATE to binlog.000002) and binlog.000002 (847
// bytes, PREVIOUS_GTIDS uuid:1-4, GTIDs 5-6, ends with STOP). Both closed
// (BINLOG_IN_USE clear).
inline constexpr char kMysqlBinlog1[] = "percona-binlog-server/data_80045_gtid__binlog.000001";
inline constexpr char kMysqlBinlog2[] = "percona-binlog-server/data_80045_gtid__binlog.000002";
inline constexpr char kMysqlBinlogUuid[] = "396e294c-1ca4-11f1-9ae7-00155da79c6b";
// MariaDB 10.5, CRC32, 1074 bytes, the source's open file (BINLOG_IN_USE
// set): FDE 4, GTID_LIST (empty) 256, BINLOG_CHECKPOINT 285, GTID 0-1-1 330,
// ANNOTATE 372, TABLE_MAP 476, WRITE_ROWS 612, XID 671, GTID 0-1-2 702,
// ANNOTATE 744, TABLE_MAP 848, WRITE_ROWS 984, XID 1043; end 1074.
inline constexpr char kMariaBinlog[] = "rust_mysql_common/mariadb-bin.000001";
// MariaDB 10.0, checksum NONE, 884 bytes: FDE 4 (244 bytes), GTID_LIST
// [0-3704-2814] 248, BINLOG_CHECKPOINT 287, GTID 0-3704-2815 (standalone) 326
// (ends 364), QUERY ends 627, GTID 0-3704-2816 627 (ends 665), XID ends 884.
inline constexpr char kMaria10Binlog[] = "binlog-parser/mysql-bin.07";

}  // namespace binrelay::testing
