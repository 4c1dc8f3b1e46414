// Capability flags, command bytes and status flags of the client/server
// protocol (include/mysql_com.h). MariaDB's extended capabilities (bits
// 32-63) are carried in the same 64-bit word.
//
// Thread safety: constants only.
// Lifetime: nothing is returned.
#pragma once

#include <cstdint>

namespace binrelay::protocol {

namespace cap {
inline constexpr uint64_t kLongPassword = 0x1;  // MariaDB: CLIENT_MYSQL
inline constexpr uint64_t kFoundRows = 0x2;
inline constexpr uint64_t kLongFlag = 0x4;
inline constexpr uint64_t kConnectWithDb = 0x8;
inline constexpr uint64_t kCompress = 0x20;
inline constexpr uint64_t kLocalFiles = 0x80;
inline constexpr uint64_t kProtocol41 = 0x200;
inline constexpr uint64_t kSsl = 0x800;
inline constexpr uint64_t kTransactions = 0x2000;
inline constexpr uint64_t kSecureConnection = 0x8000;
inline constexpr uint64_t kMultiStatements = 0x10000;
inline constexpr uint64_t kMultiResults = 0x20000;
inline constexpr uint64_t kPsMultiResults = 0x40000;
inline constexpr uint64_t kPluginAuth = 0x80000;
inline constexpr uint64_t kConnectAttrs = 0x100000;
inline constexpr uint64_t kPluginAuthLenencClientData = 0x200000;
inline constexpr uint64_t kCanHandleExpiredPasswords = 0x400000;
inline constexpr uint64_t kSessionTrack = 0x800000;
inline constexpr uint64_t kDeprecateEof = 0x1000000;
inline constexpr uint64_t kOptionalResultsetMetadata = 0x2000000;
inline constexpr uint64_t kZstdCompression = 0x4000000;
inline constexpr uint64_t kQueryAttributes = 0x8000000;
inline constexpr uint64_t kMultiFactorAuth = 0x10000000;
inline constexpr uint64_t kCapabilityExtension = 0x20000000;
inline constexpr uint64_t kSslVerifyServerCert = 0x40000000;
inline constexpr uint64_t kRememberOptions = 0x80000000;
// MariaDB extended capabilities, exchanged only when the server clears bit 0.
inline constexpr uint64_t kMariaDbProgress = uint64_t{1} << 32;
inline constexpr uint64_t kMariaDbComMulti = uint64_t{1} << 33;
inline constexpr uint64_t kMariaDbStmtBulk = uint64_t{1} << 34;
inline constexpr uint64_t kMariaDbExtendedMetadata = uint64_t{1} << 35;
inline constexpr uint64_t kMariaDbCacheMetadata = uint64_t{1} << 36;

// What binrelay's client asks for (ANDed with the server's set). No
// DEPRECATE_EOF, SESSION_TRACK, compression or query attributes: each changes
// packet layouts we would then have to parse, for no benefit to a replica.
inline constexpr uint64_t kClientDefault = kLongPassword | kLongFlag | kProtocol41 | kTransactions |
                                           kSecureConnection | kMultiResults | kPluginAuth |
                                           kPluginAuthLenencClientData;
}  // namespace cap

namespace command {
inline constexpr uint8_t kQuit = 0x01;
inline constexpr uint8_t kInitDb = 0x02;
inline constexpr uint8_t kQuery = 0x03;
inline constexpr uint8_t kFieldList = 0x04;
inline constexpr uint8_t kStatistics = 0x09;
inline constexpr uint8_t kProcessKill = 0x0C;
inline constexpr uint8_t kPing = 0x0E;
inline constexpr uint8_t kBinlogDump = 0x12;
inline constexpr uint8_t kRegisterSlave = 0x15;
inline constexpr uint8_t kStmtPrepare = 0x16;
inline constexpr uint8_t kStmtExecute = 0x17;
inline constexpr uint8_t kStmtSendLongData = 0x18;
inline constexpr uint8_t kStmtClose = 0x19;
inline constexpr uint8_t kStmtReset = 0x1A;
inline constexpr uint8_t kSetOption = 0x1B;
inline constexpr uint8_t kStmtFetch = 0x1C;
inline constexpr uint8_t kBinlogDumpGtid = 0x1E;
inline constexpr uint8_t kResetConnection = 0x1F;
// MariaDB: sql/sql_parse.cc, include/mysql_com.h COM_STMT_BULK_EXECUTE.
inline constexpr uint8_t kStmtBulkExecute = 0xFA;
}  // namespace command

namespace server_status {
inline constexpr uint16_t kInTrans = 0x0001;
inline constexpr uint16_t kAutocommit = 0x0002;
inline constexpr uint16_t kMoreResultsExist = 0x0008;
inline constexpr uint16_t kSessionStateChanged = 0x4000;
}  // namespace server_status

// Collation sent in the handshake response: utf8mb4_general_ci exists on every
// MySQL >= 5.5.3 and MariaDB server.
inline constexpr uint8_t kDefaultCollation = 45;
// Largest logical packet the client accepts; servers raise the dump session's
// max_allowed_packet to 1 GiB and an event may be that large plus its 0x00
// status byte (Binlog_sender::init in sql/rpl_binlog_sender.cc).
inline constexpr uint32_t kClientMaxPacket = 0x40000000;

}  // namespace binrelay::protocol
