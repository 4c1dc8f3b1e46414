#include "protocol/gtid_events.h"

#include <bit>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "protocol/byte_cursor.h"
#include "protocol/event_type.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

std::string Where(const EventView& ev) {
  return absl::StrCat(AV(EventTypeName(ev.type())), " event at offset ", ev.offset);
}

absl::Status Truncated(const EventView& ev, const ByteCursor& c, std::string_view what) {
  return absl::DataLossError(absl::StrCat(Where(ev), ": ", AV(what), " truncated at body byte ",
                                          c.position(), " of ", ev.body.size()));
}

// mysql::serialization variable-length unsigned integer
// (libs/mysql/serialization/variable_length_integers.h).
uint64_t VarUint(ByteCursor& c) {
  const uint8_t first = c.PeekU8();
  if (!c.Need(1)) return 0;
  const int k = std::countr_one(first) + 1;  // total bytes, 1..9
  if (k == 9) {
    c.Skip(1);
    return c.U64();
  }
  return c.Fixed(k) >> k;
}

int64_t VarInt(ByteCursor& c) {  // zig-zag
  const uint64_t v = VarUint(c);
  return (v & 1) ? -static_cast<int64_t>(v >> 1) - 1 : static_cast<int64_t>(v >> 1);
}

// GTID_TAGGED: format version, message size, last non-ignorable field id,
// then (field id, value) pairs. Field ids (MySQL Gtid_event encoder):
// 0 flags, 1 uuid (16 var-uints), 2 gno, 3 tag, 4 last_committed,
// 5 sequence_number, 6 immediate ts, 7 original ts, 8 transaction length,
// 9 immediate server version, 10 original server version, 11 ticket.
absl::Status ParseTagged(const EventView& ev, MysqlGtid* g) {
  ByteCursor c(ev.body);
  (void)VarUint(c);  // format version
  const uint64_t size = VarUint(c);
  const uint64_t last_required = VarUint(c);
  if (!c.ok() || size > ev.body.size()) return Truncated(ev, c, "GTID_TAGGED header");
  ByteCursor f(ev.body.substr(0, size));
  f.Skip(c.position());
  bool orig_ts = false, orig_ver = false;
  while (f.ok() && !f.empty()) {
    const uint64_t id = VarUint(f);
    switch (id) {
      case 0: g->flags = static_cast<uint8_t>(VarUint(f)); break;
      case 1: for (auto& b : g->sid) b = static_cast<uint8_t>(VarUint(f)); break;
      case 2: g->gno = VarInt(f); break;
      case 3: g->tag = std::string(f.Bytes(VarUint(f))); break;
      case 4: g->last_committed = VarInt(f); g->has_logical_clock = true; break;
      case 5: g->sequence_number = VarInt(f); break;
      case 6: g->immediate_commit_timestamp = VarUint(f); g->has_commit_timestamps = true; break;
      case 7: g->original_commit_timestamp = VarUint(f); orig_ts = true; break;
      case 8: g->transaction_length = VarUint(f); g->has_transaction_length = true; break;
      case 9: g->immediate_server_version = static_cast<uint32_t>(VarUint(f)); g->has_server_versions = true; break;
      case 10: g->original_server_version = static_cast<uint32_t>(VarUint(f)); orig_ver = true; break;
      case 11: g->commit_group_ticket = VarUint(f); g->has_commit_group_ticket = true; break;
      default:
        if (id <= last_required) {
          return absl::UnimplementedError(absl::StrCat(Where(ev), ": unknown required field ", id));
        }
        f = ByteCursor();  // an ignorable newer field: its encoding is unknown, stop here
        break;
    }
  }
  if (!f.ok()) return Truncated(ev, f, "GTID_TAGGED fields");
  if (!orig_ts) g->original_commit_timestamp = g->immediate_commit_timestamp;
  if (!orig_ver) g->original_server_version = g->immediate_server_version;
  return absl::OkStatus();
}

}  // namespace

std::string UuidToString(const std::array<uint8_t, 16>& s) {
  return absl::StrFormat("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                         s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11],
                         s[12], s[13], s[14], s[15]);
}

std::string MysqlGtid::ToString() const {
  if (anonymous) return "ANONYMOUS";
  if (tag.empty()) return absl::StrCat(UuidToString(sid), ":", gno);
  return absl::StrCat(UuidToString(sid), ":", tag, ":", gno);
}

absl::StatusOr<MysqlGtid> ParseMysqlGtid(const EventView& ev) {
  MysqlGtid g;
  if (ev.type() == kGtidTaggedEvent) {
    BR_RETURN_IF_ERROR(ParseTagged(ev, &g));
    return g;
  }
  if (ev.type() != kGtidEvent && ev.type() != kAnonymousGtidEvent) {
    return absl::InvalidArgumentError(absl::StrCat(Where(ev), " is not a GTID event"));
  }
  g.anonymous = ev.type() == kAnonymousGtidEvent;
  ByteCursor c(ev.body);
  g.flags = c.U8();
  for (auto& b : g.sid) b = c.U8();
  g.gno = static_cast<int64_t>(c.U64());
  if (!c.ok()) return Truncated(ev, c, "GTID sid/gno");
  if (!c.empty()) {  // 5.7+: logical clock
    const uint8_t lt = c.U8();
    if (lt == 2) {
      g.has_logical_clock = true;
      g.last_committed = static_cast<int64_t>(c.U64());
      g.sequence_number = static_cast<int64_t>(c.U64());
    }
    if (!c.ok()) return Truncated(ev, c, "GTID logical clock");
  }
  if (c.remaining() >= 7) {  // 8.0.1+: commit timestamps
    constexpr uint64_t kHighBit = uint64_t{1} << 55;
    g.has_commit_timestamps = true;
    g.immediate_commit_timestamp = c.Fixed(7);
    g.original_commit_timestamp = g.immediate_commit_timestamp;
    if (g.immediate_commit_timestamp & kHighBit) {
      g.immediate_commit_timestamp &= ~kHighBit;
      g.original_commit_timestamp = c.Fixed(7);
    }
    if (!c.ok()) return Truncated(ev, c, "GTID commit timestamps");
  }
  if (!c.empty()) {  // 8.0.2+: transaction length
    g.has_transaction_length = true;
    g.transaction_length = c.Lenenc();
    if (!c.ok()) return Truncated(ev, c, "GTID transaction length");
  }
  if (c.remaining() >= 4) {  // 8.0.14+: server versions
    constexpr uint32_t kHighBit = uint32_t{1} << 31;
    g.has_server_versions = true;
    g.immediate_server_version = c.U32();
    g.original_server_version = g.immediate_server_version;
    if (g.immediate_server_version & kHighBit) {
      g.immediate_server_version &= ~kHighBit;
      g.original_server_version = c.U32();
    }
    if (!c.ok()) return Truncated(ev, c, "GTID server versions");
  }
  if (c.remaining() >= 8) {  // 8.0.33+: group replication ticket
    g.has_commit_group_ticket = true;
    g.commit_group_ticket = c.U64();
  }
  return g;
}

absl::StatusOr<std::string> DecodeGtidSetText(std::string_view encoded) {
  ByteCursor c(encoded);
  const uint64_t word = c.U64();
  const bool tagged = (word >> 56) == 1;
  const uint64_t n_sids = tagged ? (word >> 8) & 0xFFFFFFFFFFFFull : word;
  // Each entry needs >= 16 + 8 bytes: refuse hostile counts before looping.
  if (!c.ok() || n_sids > c.remaining() / 24) {
    return absl::DataLossError(absl::StrCat("GTID set declares ", n_sids, " UUIDs in ",
                                            encoded.size(), " bytes"));
  }
  std::string out;
  std::string prev_uuid;
  for (uint64_t i = 0; i < n_sids; ++i) {
    std::array<uint8_t, 16> sid;
    for (auto& b : sid) b = c.U8();
    std::string tag;
    if (tagged) tag = std::string(c.Bytes(VarUint(c)));
    const uint64_t n = c.U64();
    if (!c.ok() || n > c.remaining() / 16) {
      return absl::DataLossError(absl::StrCat("GTID set entry ", i, " declares ", n,
                                              " intervals; truncated at byte ", c.position()));
    }
    const std::string uuid = UuidToString(sid);
    if (uuid != prev_uuid) {
      if (!out.empty()) out += ",";
      out += uuid;
      prev_uuid = uuid;
    }
    if (!tag.empty()) absl::StrAppend(&out, ":", tag);
    for (uint64_t k = 0; k < n; ++k) {
      const uint64_t start = c.U64();
      const uint64_t end = c.U64();  // exclusive
      if (end <= start + 1) {
        absl::StrAppend(&out, ":", start);
      } else {
        absl::StrAppend(&out, ":", start, "-", end - 1);
      }
    }
  }
  if (!c.ok()) return c.status("GTID set");
  return out;
}

std::string MariaGtid::ToString() const { return absl::StrCat(domain_id, "-", server_id, "-", seq_no); }

absl::StatusOr<MariaGtid> ParseMariaGtid(const EventView& ev) {
  if (ev.type() != kMariaGtidEvent) {
    return absl::InvalidArgumentError(absl::StrCat(Where(ev), " is not a MariaDB GTID event"));
  }
  ByteCursor c(ev.body);
  MariaGtid g;
  g.server_id = ev.header.server_id;
  g.seq_no = c.U64();
  g.domain_id = c.U32();
  g.flags2 = c.U8();
  if (g.flags2 & kMariaGtidGroupCommitId) g.commit_id = c.U64();
  if (g.flags2 & (kMariaGtidPreparedXa | kMariaGtidCompletedXa)) {
    g.xa_format_id = c.U32();
    const uint8_t gtrid_len = c.U8();
    const uint8_t bqual_len = c.U8();
    g.xa_gtrid = std::string(c.Bytes(gtrid_len));
    g.xa_bqual = std::string(c.Bytes(bqual_len));
  }
  if (!c.ok()) return Truncated(ev, c, "MariaDB GTID");
  // flags_extra and its fields are optional; the rest is zero padding.
  if (!c.empty()) {
    g.flags_extra = c.U8();
    if (g.flags_extra & 0x01) g.extra_engines = c.U8();
    if (g.flags_extra & (0x04 | 0x08)) g.start_alter_seq_no = c.U64();
    if (!c.ok()) return Truncated(ev, c, "MariaDB GTID flags_extra");
  }
  return g;
}

std::string MariaGtidList::ToString() const {
  std::string out;
  for (const auto& e : gtids) {
    if (!out.empty()) out += ",";
    absl::StrAppend(&out, e.domain_id, "-", e.server_id, "-", e.seq_no);
  }
  return out;
}

absl::StatusOr<MariaGtidList> ParseMariaGtidList(const EventView& ev) {
  ByteCursor c(ev.body);
  const uint32_t word = c.U32();
  MariaGtidList list;
  const uint32_t count = word & ((1u << 28) - 1);
  list.flags = word >> 28;
  if (!c.ok() || count > c.remaining() / 16) {
    return absl::DataLossError(absl::StrCat(Where(ev), ": ", count, " GTIDs declared, ",
                                            c.remaining(), " bytes left"));
  }
  list.gtids.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    MariaGtidList::Entry e;
    e.domain_id = c.U32();
    e.server_id = c.U32();
    e.seq_no = c.U64();
    list.gtids.push_back(e);
  }
  return list;
}

absl::StatusOr<std::string> ParseBinlogCheckpoint(const EventView& ev) {
  ByteCursor c(ev.body);
  const uint32_t len = c.U32();
  std::string_view name = c.Bytes(len);
  if (!c.ok()) return Truncated(ev, c, "BINLOG_CHECKPOINT name");
  return std::string(name);
}

}  // namespace binrelay::protocol
