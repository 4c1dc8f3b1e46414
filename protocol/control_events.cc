#include "protocol/control_events.h"

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/event_type.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

std::string Where(const EventView& ev) {
  return absl::StrCat(AV(EventTypeName(ev.type())), " event at offset ", ev.offset);
}

absl::Status Check(const EventView& ev, const ByteCursor& c, std::string_view what) {
  if (c.ok()) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(Where(ev), ": ", AV(what), " truncated (body is ",
                                          ev.body.size(), " bytes)"));
}

absl::Status Expect(const EventView& ev, uint8_t type) {
  if (ev.type() == type) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(Where(ev), ": expected ", AV(EventTypeName(type))));
}

}  // namespace

absl::StatusOr<RotateEvent> ParseRotate(const EventView& ev) {
  BR_RETURN_IF_ERROR(Expect(ev, kRotateEvent));
  ByteCursor c(ev.body);
  RotateEvent r;
  r.position = c.U64();
  r.next_file = c.Rest();
  BR_RETURN_IF_ERROR(Check(ev, c, "ROTATE position"));
  if (r.next_file.empty()) {
    return absl::DataLossError(absl::StrCat("ROTATE event at offset ", ev.offset,
                                            " names no next binlog file"));
  }
  return r;
}

absl::StatusOr<uint64_t> ParseXid(const EventView& ev) {
  BR_RETURN_IF_ERROR(Expect(ev, kXidEvent));
  ByteCursor c(ev.body);
  const uint64_t xid = c.U64();
  BR_RETURN_IF_ERROR(Check(ev, c, "XID"));
  return xid;
}

absl::StatusOr<HeartbeatEvent> ParseHeartbeat(const EventView& ev, bool mariadb) {
  HeartbeatEvent h;
  ByteCursor c(ev.body);
  if (ev.type() == kHeartbeatEvent) {
    h.position = ev.header.log_pos;
    if (mariadb && ev.header.log_pos == 0 && ev.body.size() >= 8) h.position = c.U64();
    h.file = c.Rest();
    return h;
  }
  BR_RETURN_IF_ERROR(Expect(ev, kHeartbeatEventV2));
  while (c.ok() && !c.empty()) {
    const uint64_t type = c.Lenenc();
    if (type == 0) break;  // end mark, no length
    std::string_view value = c.Bytes(c.Lenenc());
    if (type == 1) h.file = value;
    if (type == 2) {
      ByteCursor v(value);
      h.position = v.Lenenc();
      if (!v.ok()) c.Fail();
    }
  }
  BR_RETURN_IF_ERROR(Check(ev, c, "HEARTBEAT_V2 fields"));
  return h;
}

absl::StatusOr<std::string_view> ParseRowsQuery(const EventView& ev) {
  if (ev.type() == kAnnotateRowsEvent) return ev.body;
  BR_RETURN_IF_ERROR(Expect(ev, kRowsQueryEvent));
  ByteCursor c(ev.body);
  c.Skip(1);  // length byte, truncated to 255: ignore it
  BR_RETURN_IF_ERROR(Check(ev, c, "ROWS_QUERY length byte"));
  return c.Rest();
}

absl::StatusOr<IntvarEvent> ParseIntvar(const EventView& ev) {
  BR_RETURN_IF_ERROR(Expect(ev, kIntvarEvent));
  ByteCursor c(ev.body);
  IntvarEvent i;
  i.type = c.U8();
  i.value = c.U64();
  BR_RETURN_IF_ERROR(Check(ev, c, "INTVAR"));
  return i;
}

absl::StatusOr<RandEvent> ParseRand(const EventView& ev) {
  BR_RETURN_IF_ERROR(Expect(ev, kRandEvent));
  ByteCursor c(ev.body);
  RandEvent r;
  r.seed1 = c.U64();
  r.seed2 = c.U64();
  BR_RETURN_IF_ERROR(Check(ev, c, "RAND"));
  return r;
}

absl::StatusOr<UserVarEvent> ParseUserVar(const EventView& ev) {
  BR_RETURN_IF_ERROR(Expect(ev, kUserVarEvent));
  ByteCursor c(ev.body);
  UserVarEvent u;
  u.name = c.Bytes(c.U32());
  u.is_null = c.U8() != 0;
  if (!u.is_null) {
    u.value_type = c.U8();
    u.collation = c.U32();
    u.value = c.Bytes(c.U32());
    if (c.ok() && !c.empty()) u.flags = c.U8();
  }
  BR_RETURN_IF_ERROR(Check(ev, c, "USER_VAR"));
  return u;
}

absl::StatusOr<IncidentEvent> ParseIncident(const EventView& ev) {
  BR_RETURN_IF_ERROR(Expect(ev, kIncidentEvent));
  ByteCursor c(ev.body);
  IncidentEvent i;
  i.type = c.U16();
  if (c.ok() && !c.empty()) i.message = c.Bytes(c.U8());
  BR_RETURN_IF_ERROR(Check(ev, c, "INCIDENT"));
  return i;
}

absl::StatusOr<XaPrepareEvent> ParseXaPrepare(const EventView& ev) {
  BR_RETURN_IF_ERROR(Expect(ev, kXaPrepareEvent));
  ByteCursor c(ev.body);
  XaPrepareEvent x;
  x.one_phase = c.U8() != 0;
  x.format_id = static_cast<int32_t>(c.U32());
  const uint32_t gtrid_len = c.U32();
  const uint32_t bqual_len = c.U32();
  // XID data is at most 128 bytes (64 + 64) in MySQL.
  if (c.ok() && (gtrid_len > 64 || bqual_len > 64)) {
    return absl::DataLossError(absl::StrCat(Where(ev), ": gtrid/bqual lengths ", gtrid_len, "/",
                                            bqual_len, " exceed 64"));
  }
  x.gtrid = c.Bytes(gtrid_len);
  x.bqual = c.Bytes(bqual_len);
  BR_RETURN_IF_ERROR(Check(ev, c, "XA_PREPARE"));
  return x;
}

absl::StatusOr<LoadBlockEvent> ParseLoadBlock(const EventView& ev) {
  if (ev.type() != kBeginLoadQueryEvent && ev.type() != kAppendBlockEvent &&
      ev.type() != kDeleteFileEvent) {
    return absl::InvalidArgumentError(absl::StrCat(Where(ev), ": not a LOAD DATA block event"));
  }
  ByteCursor c(ev.body);
  LoadBlockEvent l;
  l.file_id = c.U32();
  l.data = c.Rest();
  BR_RETURN_IF_ERROR(Check(ev, c, "file_id"));
  return l;
}

absl::StatusOr<ExecuteLoadQueryEvent> ParseExecuteLoadQuery(const EventView& ev,
                                                           const FormatDescription& fd) {
  BR_RETURN_IF_ERROR(Expect(ev, kExecuteLoadQueryEvent));
  ByteCursor c(ev.body);
  ExecuteLoadQueryEvent e;
  c.Skip(8);  // thread_id, exec_time
  const uint8_t db_len = c.U8();
  c.Skip(2);  // error_code
  const uint16_t vars_len = c.U16();
  e.file_id = c.U32();
  e.start_pos = c.U32();
  e.end_pos = c.U32();
  e.dup_handling = c.U8();
  const size_t post = fd.PostHeaderLen(kExecuteLoadQueryEvent);
  if (post > 26) c.Skip(post - 26);
  c.Skip(vars_len);
  e.db = c.Bytes(db_len);
  c.Skip(1);
  e.query = c.Rest();
  BR_RETURN_IF_ERROR(Check(ev, c, "EXECUTE_LOAD_QUERY"));
  return e;
}

absl::StatusOr<std::string_view> ParseGroupReplicationId(const EventView& ev) {
  ByteCursor c(ev.body);
  if (ev.type() == kTransactionContextEvent) {
    // Post-header (18): server_uuid_len(1), thread_id(4), gtid_specified(1),
    // snapshot-version length(4), write-set length(4), read-set length(4);
    // then server_uuid. Only the uuid is returned.
    const uint8_t uuid_len = c.U8();
    c.Skip(17);
    std::string_view uuid = c.Bytes(uuid_len);
    BR_RETURN_IF_ERROR(Check(ev, c, "TRANSACTION_CONTEXT server_uuid"));
    return uuid;
  }
  if (ev.type() == kViewChangeEvent) {
    std::string_view id = c.Bytes(40);  // view_id, NUL padded; then seq(8), cert size(4)
    BR_RETURN_IF_ERROR(Check(ev, c, "VIEW_CHANGE view_id"));
    return id.substr(0, id.find('\0'));
  }
  return absl::InvalidArgumentError(absl::StrCat(Where(ev), ": not a group replication event"));
}

}  // namespace binrelay::protocol
