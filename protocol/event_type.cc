#include "protocol/event_type.h"

#include <array>
#include <string>

namespace binrelay::protocol {
namespace {

const char* KnownName(uint8_t type) {
  switch (type) {
    case kUnknownEvent: return "UNKNOWN";
    case kStartEventV3: return "START_V3";
    case kQueryEvent: return "QUERY";
    case kStopEvent: return "STOP";
    case kRotateEvent: return "ROTATE";
    case kIntvarEvent: return "INTVAR";
    case kLoadEvent: return "LOAD";
    case kSlaveEvent: return "SLAVE";
    case kCreateFileEvent: return "CREATE_FILE";
    case kAppendBlockEvent: return "APPEND_BLOCK";
    case kExecLoadEvent: return "EXEC_LOAD";
    case kDeleteFileEvent: return "DELETE_FILE";
    case kNewLoadEvent: return "NEW_LOAD";
    case kRandEvent: return "RAND";
    case kUserVarEvent: return "USER_VAR";
    case kFormatDescriptionEvent: return "FORMAT_DESCRIPTION";
    case kXidEvent: return "XID";
    case kBeginLoadQueryEvent: return "BEGIN_LOAD_QUERY";
    case kExecuteLoadQueryEvent: return "EXECUTE_LOAD_QUERY";
    case kTableMapEvent: return "TABLE_MAP";
    case kPreGaWriteRowsEvent: return "PRE_GA_WRITE_ROWS";
    case kPreGaUpdateRowsEvent: return "PRE_GA_UPDATE_ROWS";
    case kPreGaDeleteRowsEvent: return "PRE_GA_DELETE_ROWS";
    case kWriteRowsEventV1: return "WRITE_ROWS_V1";
    case kUpdateRowsEventV1: return "UPDATE_ROWS_V1";
    case kDeleteRowsEventV1: return "DELETE_ROWS_V1";
    case kIncidentEvent: return "INCIDENT";
    case kHeartbeatEvent: return "HEARTBEAT";
    case kIgnorableEvent: return "IGNORABLE";
    case kRowsQueryEvent: return "ROWS_QUERY";
    case kWriteRowsEvent: return "WRITE_ROWS";
    case kUpdateRowsEvent: return "UPDATE_ROWS";
    case kDeleteRowsEvent: return "DELETE_ROWS";
    case kGtidEvent: return "GTID";
    case kAnonymousGtidEvent: return "ANONYMOUS_GTID";
    case kPreviousGtidsEvent: return "PREVIOUS_GTIDS";
    case kTransactionContextEvent: return "TRANSACTION_CONTEXT";
    case kViewChangeEvent: return "VIEW_CHANGE";
    case kXaPrepareEvent: return "XA_PREPARE";
    case kPartialUpdateRowsEvent: return "PARTIAL_UPDATE_ROWS";
    case kTransactionPayloadEvent: return "TRANSACTION_PAYLOAD";
    case kHeartbeatEventV2: return "HEARTBEAT_V2";
    case kGtidTaggedEvent: return "GTID_TAGGED";
    case kAnnotateRowsEvent: return "ANNOTATE_ROWS";
    case kBinlogCheckpointEvent: return "BINLOG_CHECKPOINT";
    case kMariaGtidEvent: return "MARIA_GTID";
    case kGtidListEvent: return "GTID_LIST";
    case kStartEncryptionEvent: return "START_ENCRYPTION";
    case kQueryCompressedEvent: return "QUERY_COMPRESSED";
    case kWriteRowsCompressedEventV1: return "WRITE_ROWS_COMPRESSED_V1";
    case kUpdateRowsCompressedEventV1: return "UPDATE_ROWS_COMPRESSED_V1";
    case kDeleteRowsCompressedEventV1: return "DELETE_ROWS_COMPRESSED_V1";
    case kWriteRowsCompressedEvent: return "WRITE_ROWS_COMPRESSED";
    case kUpdateRowsCompressedEvent: return "UPDATE_ROWS_COMPRESSED";
    case kDeleteRowsCompressedEvent: return "DELETE_ROWS_COMPRESSED";
    case kPartialRowDataEvent: return "PARTIAL_ROW_DATA";
    default: return nullptr;
  }
}

// Built once; names are needed in error paths only, but a static table keeps
// the returned view valid forever without allocation per call.
const std::array<std::string, 256>& NameTable() {
  static const auto* table = [] {
    auto* t = new std::array<std::string, 256>();
    for (int i = 0; i < 256; ++i) {
      const char* n = KnownName(static_cast<uint8_t>(i));
      (*t)[i] = n ? n : "UNKNOWN_" + std::to_string(i);
    }
    return t;
  }();
  return *table;
}

}  // namespace

std::string_view EventTypeName(uint8_t type) { return NameTable()[type]; }

bool IsKnownEventType(uint8_t type) {
  if (type == kUnknownEvent || type == kSlaveEvent) return false;
  return type < kMysqlEventTypeEnd || (type >= kAnnotateRowsEvent && type < kMariaEventTypeEnd);
}

bool IsRowsEventType(uint8_t type) {
  return (type >= kPreGaWriteRowsEvent && type <= kDeleteRowsEventV1) ||
         (type >= kWriteRowsEvent && type <= kDeleteRowsEvent) ||
         type == kPartialUpdateRowsEvent ||
         (type >= kWriteRowsCompressedEventV1 && type <= kDeleteRowsCompressedEvent);
}

}  // namespace binrelay::protocol
