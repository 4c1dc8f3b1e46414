// Every event parser of protocol/, for the fuzz targets: each event goes to
// the parser of its type (inner events of a TRANSACTION_PAYLOAD too), as
// tests/protocol/all_fixtures_test.cc does with the recorded fixtures. Only
// crashes, hangs and unbounded growth matter here: errors are expected.
#pragma once

#include <string>

#include "protocol/control_events.h"
#include "protocol/event_header.h"
#include "protocol/event_type.h"
#include "protocol/format_description.h"
#include "protocol/gtid_events.h"
#include "protocol/query_event.h"
#include "protocol/transaction_payload.h"

namespace binrelay::fuzz {

inline void ParseEvent(const protocol::EventView& ev, const protocol::FormatDescription& fd,
                       std::string* scratch, int depth = 0) {
  using namespace protocol;
  switch (ev.type()) {
    case kQueryEvent:
    case kQueryCompressedEvent: (void)ParseQueryEvent(ev, fd, scratch); break;
    case kRotateEvent: (void)ParseRotate(ev); break;
    case kXidEvent: (void)ParseXid(ev); break;
    case kIntvarEvent: (void)ParseIntvar(ev); break;
    case kRandEvent: (void)ParseRand(ev); break;
    case kUserVarEvent: (void)ParseUserVar(ev); break;
    case kIncidentEvent: (void)ParseIncident(ev); break;
    case kXaPrepareEvent: (void)ParseXaPrepare(ev); break;
    case kRowsQueryEvent:
    case kAnnotateRowsEvent: (void)ParseRowsQuery(ev); break;
    case kHeartbeatEvent:
    case kHeartbeatEventV2: (void)ParseHeartbeat(ev, fd.is_mariadb); break;
    case kAppendBlockEvent:
    case kBeginLoadQueryEvent:
    case kDeleteFileEvent: (void)ParseLoadBlock(ev); break;
    case kExecuteLoadQueryEvent: (void)ParseExecuteLoadQuery(ev, fd); break;
    case kGtidEvent:
    case kAnonymousGtidEvent:
    case kGtidTaggedEvent: (void)ParseMysqlGtid(ev); break;
    case kPreviousGtidsEvent: (void)DecodeGtidSetText(ev.body); break;
    case kMariaGtidEvent: (void)ParseMariaGtid(ev); break;
    case kGtidListEvent: (void)ParseMariaGtidList(ev); break;
    case kBinlogCheckpointEvent: (void)ParseBinlogCheckpoint(ev); break;
    case kTransactionPayloadEvent: {
      if (depth > 0) break;  // a payload inside a payload is refused upstream
      auto tp = ParseTransactionPayload(ev);
      if (!tp.ok()) break;
      std::string inflated;
      if (!DecompressTransactionPayload(*tp, &inflated).ok()) break;
      PayloadEventIterator it(inflated, ev.offset);
      EventView inner;
      while (true) {
        auto more = it.Next(&inner);
        if (!more.ok() || !*more) break;
        ParseEvent(inner, fd, scratch, depth + 1);
      }
      break;
    }
    default: break;
  }
}

}  // namespace binrelay::fuzz
