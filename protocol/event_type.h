// Binlog event type codes (MySQL libs/mysql/binlog/event/binlog_event.h
// Log_event_type; MariaDB sql/log_event.h) and their names for messages.
//
// Thread safety: constants and a pure function.
// Lifetime: EventTypeName returns a view of a static string.
#pragma once

#include <cstdint>
#include <string_view>

namespace binrelay::protocol {

enum EventType : uint8_t {
  kUnknownEvent = 0,
  kStartEventV3 = 1,
  kQueryEvent = 2,
  kStopEvent = 3,
  kRotateEvent = 4,
  kIntvarEvent = 5,
  kLoadEvent = 6,  // obsolete
  kSlaveEvent = 7,  // never written
  kCreateFileEvent = 8,  // obsolete
  kAppendBlockEvent = 9,
  kExecLoadEvent = 10,  // obsolete
  kDeleteFileEvent = 11,
  kNewLoadEvent = 12,  // obsolete
  kRandEvent = 13,
  kUserVarEvent = 14,
  kFormatDescriptionEvent = 15,
  kXidEvent = 16,
  kBeginLoadQueryEvent = 17,
  kExecuteLoadQueryEvent = 18,
  kTableMapEvent = 19,
  kPreGaWriteRowsEvent = 20,
  kPreGaUpdateRowsEvent = 21,
  kPreGaDeleteRowsEvent = 22,
  kWriteRowsEventV1 = 23,
  kUpdateRowsEventV1 = 24,
  kDeleteRowsEventV1 = 25,
  kIncidentEvent = 26,
  kHeartbeatEvent = 27,
  kIgnorableEvent = 28,
  kRowsQueryEvent = 29,
  kWriteRowsEvent = 30,
  kUpdateRowsEvent = 31,
  kDeleteRowsEvent = 32,
  kGtidEvent = 33,
  kAnonymousGtidEvent = 34,
  kPreviousGtidsEvent = 35,
  kTransactionContextEvent = 36,
  kViewChangeEvent = 37,
  kXaPrepareEvent = 38,
  kPartialUpdateRowsEvent = 39,
  kTransactionPayloadEvent = 40,
  kHeartbeatEventV2 = 41,
  kGtidTaggedEvent = 42,
  kMysqlEventTypeEnd = 43,  // first code MySQL does not define

  kAnnotateRowsEvent = 160,
  kBinlogCheckpointEvent = 161,
  kMariaGtidEvent = 162,
  kGtidListEvent = 163,
  kStartEncryptionEvent = 164,
  kQueryCompressedEvent = 165,
  kWriteRowsCompressedEventV1 = 166,
  kUpdateRowsCompressedEventV1 = 167,
  kDeleteRowsCompressedEventV1 = 168,
  kWriteRowsCompressedEvent = 169,
  kUpdateRowsCompressedEvent = 170,
  kDeleteRowsCompressedEvent = 171,
  kPartialRowDataEvent = 172,
  kMariaEventTypeEnd = 173,
};

// "QUERY", "TABLE_MAP", "MARIA_GTID", ...; "UNKNOWN_<n>" for codes neither
// server defines (the string then lives in a static table of all 256 names).
std::string_view EventTypeName(uint8_t type);

// True for codes MySQL or MariaDB define (0 and 7 excluded: never written).
bool IsKnownEventType(uint8_t type);

// True for every rows event (pre-GA, v1, v2, partial, MariaDB compressed).
bool IsRowsEventType(uint8_t type);

}  // namespace binrelay::protocol
