// Compares binrelay's decoding of every packet in the msmp fixtures
// (binlog-event.terms, binlog-gtid-log.terms, write-rows-world-cup-teams-
// 2022.terms; MySQL 8.0.34/8.1 and MariaDB 11.1.2 captures) with the
// expectation map stored beside each packet. The maps are read with the
// Erlang term reader, not copied by hand, and every field a map states must
// be compared: an unhandled field fails the test, so a new term cannot pass
// unchecked.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/checksum.h"
#include "protocol/column_type.h"
#include "protocol/control_events.h"
#include "protocol/event_type.h"
#include "protocol/format_description.h"
#include "protocol/gtid_events.h"
#include "protocol/query_event.h"
#include "protocol/row_decoder.h"
#include "protocol/rows_event.h"
#include "protocol/status_macros.h"
#include "protocol/table_map.h"
#include "tests/harness/erlang_term.h"
#include "tests/harness/fixtures.h"
#include "tests/harness/json_lite.h"

namespace binrelay::protocol {
namespace {

using testing::ErlTerm;
using Kind = ErlTerm::Kind;

// Field access that records which keys of a map were compared; the
// destructor fails the test for every key left unchecked.
class Fields {
 public:
  Fields(const ErlTerm& m, std::string ctx) : m_(m), ctx_(std::move(ctx)) {
    EXPECT_EQ(m.kind, Kind::kMap) << ctx_;
  }
  ~Fields() {
    for (const auto& [k, v] : m_.map) {
      if (!used_.count(k.text)) ADD_FAILURE() << ctx_ << ": field '" << k.text << "' not compared";
    }
  }
  bool Has(std::string_view key) const { return m_.Find(key) != nullptr; }
  const ErlTerm& operator[](std::string_view key) {
    used_.insert(std::string(key));
    if (const ErlTerm* t = m_.Find(key)) return *t;
    ADD_FAILURE() << ctx_ << ": no field '" << key << "'";
    static const ErlTerm kNone;
    return kNone;
  }
  int64_t Int(std::string_view key) {
    const ErlTerm& t = (*this)[key];
    EXPECT_EQ(t.kind, Kind::kInt) << ctx_ << "." << key << " = " << t.DebugString();
    return t.i;
  }
  std::string Bin(std::string_view key) {
    const ErlTerm& t = (*this)[key];
    EXPECT_EQ(t.kind, Kind::kBinary) << ctx_ << "." << key << " = " << t.DebugString();
    return t.text;
  }
  std::string Atom(std::string_view key) {
    const ErlTerm& t = (*this)[key];
    EXPECT_EQ(t.kind, Kind::kAtom) << ctx_ << "." << key;
    return t.text;
  }
  const std::string& ctx() const { return ctx_; }

 private:
  const ErlTerm& m_;
  std::string ctx_;
  std::set<std::string> used_;
};

uint64_t LeBytes(std::string_view b) {
  uint64_t v = 0;
  for (size_t i = b.size(); i-- > 0;) v = v << 8 | static_cast<uint8_t>(b[i]);
  return v;
}

// msmp's event_type atoms -> codes.
uint8_t TypeCode(const std::string& atom) {
  static const std::map<std::string, uint8_t> kCodes = {
      {"rotate", kRotateEvent},       {"format_description", kFormatDescriptionEvent},
      {"table_map", kTableMapEvent},  {"query", kQueryEvent},
      {"intvar", kIntvarEvent},       {"gtid_list", kGtidListEvent},
      {"binlog_checkpoint", kBinlogCheckpointEvent},
      {"gtid", kMariaGtidEvent},      {"xid", kXidEvent},
      {"heartbeat_log", kHeartbeatEvent},
      {"query_compressed", kQueryCompressedEvent},
      {"stop", kStopEvent},           {"user_var", kUserVarEvent},
      {"previous_gtids_log", kPreviousGtidsEvent},
      {"gtid_log", kGtidEvent},       {"write_rows", kWriteRowsEvent}};
  auto it = kCodes.find(atom);
  if (it == kCodes.end()) {
    ADD_FAILURE() << "unknown msmp event_type " << atom;
    return 0;
  }
  return it->second;
}

// TABLE_MAP column-type atoms -> wire codes.
uint8_t ColumnCode(const std::string& atom) {
  static const std::map<std::string, uint8_t> kCodes = {
      {"long", kTypeLong},   {"varchar", kTypeVarchar}, {"date", kTypeDate},
      {"time2", kTypeTime2}, {"datetime2", kTypeDatetime2}, {"string", kTypeString},
      {"longlong", kTypeLongLong}, {"blob", kTypeBlob},  {"float", kTypeFloat}};
  auto it = kCodes.find(atom);
  if (it == kCodes.end()) {
    ADD_FAILURE() << "unknown msmp column type " << atom;
    return 0;
  }
  return it->second;
}

struct Term {
  const ErlTerm* expect = nullptr;  // #{packet => ..., sequence => ...}
  std::string packet;               // 4-byte header, 0x00, event
};

std::vector<ErlTerm> LoadTerms(const std::string& rel) {
  auto terms = testing::ParseErlangTerms(testing::ReadFileOrDie(testing::FixturePath(rel)));
  EXPECT_TRUE(terms.ok()) << rel << ": " << terms.status();
  return terms.ok() ? *terms : std::vector<ErlTerm>{};
}

// {Expect, Packet} or {{<<>>, Expect}, Packet} (a term with leftover bytes).
Term Split(const ErlTerm& t) {
  Term out;
  if (t.kind != Kind::kTuple || t.items.size() != 2 || t.items[1].kind != Kind::kBinary) {
    ADD_FAILURE() << "unexpected term shape " << t.DebugString().substr(0, 200);
    return out;
  }
  out.expect = &t.items[0];
  if (out.expect->kind == Kind::kTuple) {
    EXPECT_EQ(out.expect->items.size(), 2u);
    EXPECT_EQ(out.expect->items[0].text, "");  // no bytes left over
    out.expect = &out.expect->items.back();
  }
  out.packet = t.items[1].text;
  return out;
}

// Integers of a list ([255]), a string ("ÿ") or, for a binary, the packed
// integers it holds (msmp keeps some TLV values raw, e.g. <<"-">> = 45).
std::vector<uint64_t> Ints(const ErlTerm& t) {
  std::vector<uint64_t> out;
  if (t.kind == Kind::kList) {
    for (const auto& x : t.items) out.push_back(static_cast<uint64_t>(x.i));
  } else if (t.kind == Kind::kString) {
    for (char c : t.text) out.push_back(static_cast<uint8_t>(c));
  } else if (t.kind == Kind::kBinary) {
    ByteCursor c(t.text);
    while (c.ok() && !c.empty()) out.push_back(c.Lenenc());
    EXPECT_TRUE(c.ok());
  } else {
    ADD_FAILURE() << "not a list of integers: " << t.DebugString();
  }
  return out;
}

// -------------------------------------------------------------- per event

void CheckFormatDescription(const EventView& ev, Fields& e) {
  auto fd = ParseFormatDescription(ev.bytes);
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_EQ(fd->binlog_version, e.Int("binlog_version"));
  EXPECT_EQ(fd->server_version, e.Bin("mysql_server_version"));
  EXPECT_EQ(fd->create_timestamp, e.Int("create_timestamp"));
  EXPECT_EQ(fd->common_header_len, e.Int("header_length"));
  // `stuff` = the post-header length array followed by the checksum byte.
  std::string stuff = e.Bin("stuff");
  ASSERT_FALSE(stuff.empty());
  EXPECT_EQ(std::string(fd->post_header_len.begin(), fd->post_header_len.end()),
            stuff.substr(0, stuff.size() - 1));
  EXPECT_EQ(static_cast<int>(fd->checksum_alg), static_cast<uint8_t>(stuff.back()));
}

void CheckTableMap(const EventView& ev, Fields& e) {
  auto tm = ParseTableMap(ev, Mysql8FormatDescription());
  ASSERT_TRUE(tm.ok()) << tm.status();
  const TableDef& def = tm->def;
  EXPECT_EQ(tm->flags, e.Int("flags"));
  EXPECT_EQ(def.table, e.Bin("table"));
  EXPECT_EQ(def.db, e.Bin("database"));
  EXPECT_EQ(def.table_id, static_cast<uint64_t>(e.Int("table_id")));
  const ErlTerm& types = e["coltypes"];
  ASSERT_EQ(def.columns.size(), types.items.size());
  for (size_t i = 0; i < types.items.size(); ++i) {
    const uint8_t want = ColumnCode(types.items[i].text);
    const uint8_t got = def.columns[i].type;
    // ENUM/SET travel as STRING; binrelay resolves them (checked below).
    if (want == kTypeString) {
      EXPECT_TRUE(got == kTypeString || got == kTypeEnum || got == kTypeSet) << i;
    } else {
      EXPECT_EQ(got, want) << "column " << i;
    }
  }
  for (const auto& [k, v] : e["field_metadata"].map) {
    const ColumnDef& col = def.columns.at(static_cast<size_t>(k.i - 1));
    SCOPED_TRACE(absl::StrCat("field_metadata ", k.i));
    if (v.is_atom("undefined")) {
      EXPECT_EQ(col.meta, 0);
    } else if (v.kind == Kind::kInt) {
      EXPECT_EQ(col.meta, v.i);
    } else {
      Fields m(v, "field_metadata");
      EXPECT_EQ(col.meta, m.Int("length"));
      const std::string ft = m.Atom("field_type");
      EXPECT_EQ(col.type, ft == "enum" ? kTypeEnum : ft == "set" ? kTypeSet : kTypeString) << ft;
    }
  }
  const std::string nulls = e.Bin("null_bitmap");
  for (size_t i = 0; i < def.columns.size(); ++i) {
    EXPECT_EQ(def.columns[i].nullable, ((static_cast<uint8_t>(nulls.at(i / 8)) >> (i % 8)) & 1) != 0)
        << "nullable " << i;
  }
  Fields md(e["metadata"], e.ctx() + ".metadata");
  if (md.Has("unsignedness")) {
    for (const auto& [k, v] : md["unsignedness"].map) {
      const ColumnDef& col = def.columns.at(static_cast<size_t>(k.i - 1));
      EXPECT_TRUE(col.unsigned_known) << k.i;
      EXPECT_EQ(col.is_unsigned, v.is_atom("true")) << "unsigned " << k.i;
    }
  }
  if (md.Has("default_charset")) {
    auto ints = Ints(md["default_charset"]);
    ASSERT_EQ(ints.size(), 1u);  // no per-column exceptions in these maps
    for (const ColumnDef& col : def.columns) {
      if (IsCharacterColumn(col.type, false)) { EXPECT_EQ(col.collation, ints[0]); }
    }
  }
  if (md.Has("enum_and_set_default_charset")) {
    auto ints = Ints(md["enum_and_set_default_charset"]);
    ASSERT_EQ(ints.size(), 1u);
    for (const ColumnDef& col : def.columns) {
      if (col.type == kTypeEnum || col.type == kTypeSet) { EXPECT_EQ(col.collation, ints[0]); }
    }
  }
  if (md.Has("column_name")) {
    const ErlTerm& names = md["column_name"];
    ASSERT_EQ(names.items.size(), def.columns.size());
    for (size_t i = 0; i < def.columns.size(); ++i) EXPECT_EQ(def.columns[i].name, names.items[i].text);
  }
  if (md.Has("simple_primary_key")) {
    std::vector<uint32_t> want;
    for (uint64_t v : Ints(md["simple_primary_key"])) want.push_back(static_cast<uint32_t>(v));
    EXPECT_EQ(def.primary_key, want);
  }
  if (md.Has("column_visibility")) {
    const std::string bits = md.Bin("column_visibility");
    ASSERT_EQ(tm->visible.size(), def.columns.size());
    for (size_t i = 0; i < def.columns.size(); ++i) {
      EXPECT_EQ(tm->visible[i], ((static_cast<uint8_t>(bits.at(i / 8)) << (i % 8)) & 0x80) != 0) << i;
    }
  }
  if (md.Has("enum_str_value")) {
    const ErlTerm& enums = md["enum_str_value"];
    size_t n = 0;
    for (const ColumnDef& col : def.columns) {
      if (col.type != kTypeEnum) continue;
      ASSERT_LT(n, enums.items.size());
      std::vector<std::string> want;
      for (const auto& m : enums.items[n].items) want.push_back(m.text);
      EXPECT_EQ(col.members, want);
      ++n;
    }
    EXPECT_EQ(n, enums.items.size());
  }
}

// True when `block` holds status variable `code` followed by `value`.
bool HasStatusVar(std::string_view block, uint8_t code, std::string_view value) {
  return block.find(std::string(1, static_cast<char>(code)) + std::string(value)) !=
         std::string_view::npos;
}

std::string Le(uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
  return s;
}

void CheckQuery(const EventView& ev, Fields& e) {
  std::string scratch;
  auto q = ParseQueryEvent(ev, Mysql8FormatDescription(), &scratch);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->thread_id, e.Int("slave_proxy_id"));
  EXPECT_EQ(q->exec_time, e.Int("execution_time"));
  EXPECT_EQ(q->db.size(), static_cast<size_t>(e.Int("schema_length")));
  EXPECT_EQ(q->error_code, e.Int("error_code"));
  EXPECT_EQ(q->db, e.Bin("schema"));
  EXPECT_EQ(q->query, e.Bin("sql"));
  EXPECT_FALSE(q->status_vars_truncated);
  Fields sv(e["status_vars"], e.ctx() + ".status_vars");
  if (!sv.Has("flags2") && !sv.Has("sql_mode")) { EXPECT_TRUE(q->status_vars.empty()); }
  if (sv.Has("flags2")) { EXPECT_EQ(q->flags2, LeBytes(sv.Bin("flags2"))); }
  if (sv.Has("sql_mode")) { EXPECT_EQ(q->sql_mode, LeBytes(sv.Bin("sql_mode"))); }
  if (sv.Has("catalog_nz")) {
    const std::string cat = sv.Bin("catalog_nz");
    EXPECT_TRUE(HasStatusVar(q->status_vars, 6, std::string(1, static_cast<char>(cat.size())) + cat));
  }
  if (sv.Has("charset")) {
    Fields cs(sv["charset"], "charset");
    EXPECT_EQ(q->charset_client, cs.Int("character_set_client"));
    EXPECT_EQ(q->collation_connection, cs.Int("collation_connection"));
    EXPECT_EQ(q->collation_server, cs.Int("collation_server"));
  }
  if (sv.Has("ddl_xid")) { EXPECT_EQ(q->ddl_xid, static_cast<uint64_t>(sv.Int("ddl_xid"))); }
  if (sv.Has("xid")) { EXPECT_EQ(q->ddl_xid, static_cast<uint64_t>(sv.Int("xid"))); }  // MariaDB 129
  if (sv.Has("default_collation_for_utf8mb4")) {
    EXPECT_TRUE(HasStatusVar(q->status_vars, 18, Le(sv.Int("default_collation_for_utf8mb4"), 2)));
  }
  if (sv.Has("table_map_for_update")) {
    EXPECT_TRUE(HasStatusVar(q->status_vars, 9, Le(sv.Int("table_map_for_update"), 8)));
  }
}

void CheckEvent(uint8_t type, const EventView& ev, Fields& e) {
  switch (type) {
    case kRotateEvent: {
      auto r = ParseRotate(ev);
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->position, static_cast<uint64_t>(e.Int("position")));
      EXPECT_EQ(r->next_file, e.Bin("new_log_ident"));
      return;
    }
    case kFormatDescriptionEvent: return CheckFormatDescription(ev, e);
    case kTableMapEvent: return CheckTableMap(ev, e);
    case kQueryEvent:
    case kQueryCompressedEvent: return CheckQuery(ev, e);
    case kIntvarEvent: {
      auto i = ParseIntvar(ev);
      ASSERT_TRUE(i.ok()) << i.status();
      const std::string t = e.Atom("type");
      EXPECT_EQ(i->type, t == "insert_id" ? 2 : t == "last_insert_id" ? 1 : 0) << t;
      EXPECT_EQ(i->value, static_cast<uint64_t>(e.Int("value")));
      return;
    }
    case kGtidListEvent: {
      auto l = ParseMariaGtidList(ev);
      ASSERT_TRUE(l.ok()) << l.status();
      EXPECT_EQ(l->flags, e.Int("flags"));
      EXPECT_EQ(l->gtids.size(), static_cast<size_t>(e.Int("count")));
      const ErlTerm& gtids = e["gtids"];
      ASSERT_EQ(l->gtids.size(), gtids.items.size());
      for (size_t i = 0; i < gtids.items.size(); ++i) {
        Fields g(gtids.items[i], "gtid");
        EXPECT_EQ(l->gtids[i].domain_id, g.Int("domain"));
        EXPECT_EQ(l->gtids[i].server_id, g.Int("server"));
        EXPECT_EQ(l->gtids[i].seq_no, static_cast<uint64_t>(g.Int("sequence")));
      }
      return;
    }
    case kBinlogCheckpointEvent: {
      auto f = ParseBinlogCheckpoint(ev);
      ASSERT_TRUE(f.ok()) << f.status();
      EXPECT_EQ(*f, e.Bin("filename"));
      return;
    }
    case kMariaGtidEvent: {
      auto g = ParseMariaGtid(ev);
      ASSERT_TRUE(g.ok()) << g.status();
      EXPECT_EQ(g->domain_id, e.Int("domain"));
      EXPECT_EQ(g->seq_no, static_cast<uint64_t>(e.Int("sequence")));
      EXPECT_EQ(g->flags2, e.Int("flags2"));
      EXPECT_EQ(g->server_id, ev.header.server_id);
      // `data` is what follows flags2: here only padding, so no commit id,
      // XA or extra flags may be read from it.
      EXPECT_EQ(ev.body.substr(13), e.Bin("data"));
      EXPECT_EQ(g->commit_id, 0u);
      EXPECT_EQ(g->flags_extra, 0);
      return;
    }
    case kXidEvent: {
      auto x = ParseXid(ev);
      ASSERT_TRUE(x.ok()) << x.status();
      EXPECT_EQ(*x, LeBytes(e.Bin("xid")));
      return;
    }
    case kHeartbeatEvent: {
      auto h = ParseHeartbeat(ev, /*mariadb=*/true);
      ASSERT_TRUE(h.ok()) << h.status();
      EXPECT_EQ(h->file, e.Bin("log_ident"));
      EXPECT_EQ(h->position, ev.header.log_pos);
      return;
    }
    case kStopEvent: EXPECT_TRUE(ev.body.empty()); return;
    case kUserVarEvent: {
      auto u = ParseUserVar(ev);
      ASSERT_TRUE(u.ok()) << u.status();
      EXPECT_EQ(u->name, e.Bin("name"));
      ASSERT_TRUE(e["value"].is_atom("null")) << "only NULL user variables are captured";
      EXPECT_TRUE(u->is_null);
      return;
    }
    case kPreviousGtidsEvent: {
      auto text = DecodeGtidSetText(ev.body);
      ASSERT_TRUE(text.ok()) << text.status();
      std::string want;
      for (const auto& set : e["gtids"].items) {
        Fields s(set, "gtid set");
        std::array<uint8_t, 16> sid{};
        const std::string raw = s.Bin("sid");
        ASSERT_EQ(raw.size(), 16u);
        std::copy(raw.begin(), raw.end(), sid.begin());
        absl::StrAppend(&want, want.empty() ? "" : ",", UuidToString(sid));
        for (const auto& iv : s["intervals"].items) {
          Fields f(iv, "interval");
          // msmp shows the encoded bounds; the encoded end is exclusive.
          const int64_t start = f.Int("start"), end = f.Int("finish") - 1;
          absl::StrAppend(&want, ":", start);
          if (end != start) absl::StrAppend(&want, "-", end);
        }
      }
      EXPECT_EQ(*text, want);
      return;
    }
    case kGtidEvent: {
      auto g = ParseMysqlGtid(ev);
      ASSERT_TRUE(g.ok()) << g.status();
      EXPECT_EQ(g->flags, e.Int("flags"));
      const std::string sid = e.Bin("sid");
      EXPECT_EQ(std::string(g->sid.begin(), g->sid.end()), sid);
      EXPECT_EQ(g->gno, e.Int("gno"));
      EXPECT_EQ(e.Int("logical_timestamp_typecode"), 2);
      EXPECT_TRUE(g->has_logical_clock);
      EXPECT_EQ(g->last_committed, e.Int("last_committed"));
      EXPECT_EQ(g->sequence_number, e.Int("sequence_number"));
      EXPECT_EQ(g->transaction_length, static_cast<uint64_t>(e.Int("transaction_length")));
      EXPECT_EQ(g->immediate_commit_timestamp,
                static_cast<uint64_t>(e.Int("immediate_commit_timestamp")));
      EXPECT_EQ(g->original_commit_timestamp, g->immediate_commit_timestamp);
      EXPECT_EQ(g->immediate_server_version, e.Int("server_version"));
      EXPECT_EQ(g->original_server_version, g->immediate_server_version);
      return;
    }
    default: ADD_FAILURE() << "no comparison for event type " << int{type};
  }
}

// Header, sequence, footer and body of one term; returns the event type.
void CheckTerm(const Term& t, const std::string& ctx, std::vector<uint8_t>* types) {
  ASSERT_NE(t.expect, nullptr);
  ASSERT_GE(t.packet.size(), 5 + kEventHeaderLen + kChecksumLen);
  const size_t len = LeBytes(std::string_view(t.packet).substr(0, 3));
  EXPECT_EQ(len + 4, t.packet.size()) << "packet length";
  EXPECT_EQ(t.packet[4], '\0') << "OK byte";
  const std::string_view event = std::string_view(t.packet).substr(5);

  Fields top(*t.expect, ctx);
  EXPECT_EQ(static_cast<uint8_t>(t.packet[3]), top.Int("sequence"));
  Fields packet(top["packet"], ctx + ".packet");
  EXPECT_EQ(packet.Atom("action"), "log_event");
  Fields h(packet["header"], ctx + ".header");
  const uint8_t type = TypeCode(h.Atom("event_type"));
  types->push_back(type);
  SCOPED_TRACE(absl::StrCat(ctx, " ", AV(EventTypeName(type))));
  auto ev = MakeEventView(event, /*has_checksum=*/true);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(ev->type(), type);
  EXPECT_EQ(ev->header.flags, h.Int("flags"));
  EXPECT_EQ(ev->header.timestamp, h.Int("timestamp"));
  EXPECT_EQ(ev->header.server_id, h.Int("server_id"));
  EXPECT_EQ(ev->header.event_size, h.Int("event_size"));
  EXPECT_EQ(ev->header.log_pos, h.Int("log_pos"));
  EXPECT_EQ(event.substr(event.size() - 4), packet.Bin("footer"));
  EXPECT_TRUE(EventCrcMatches(event)) << "CRC32";
  Fields body(packet["event"], ctx + ".event");
  CheckEvent(type, *ev, body);
}

// Every term of binlog-event.terms (28 packets: MySQL 8.0.34 and MariaDB
// 11.1.2) decodes to the values its map states.
TEST(MsmpTermsTest, BinlogEventTerms) {
  BINRELAY_REQUIRE_FIXTURE("msmp/binlog-event.terms");
  std::vector<ErlTerm> terms = LoadTerms("msmp/binlog-event.terms");
  std::vector<uint8_t> types;
  for (size_t i = 0; i < terms.size(); ++i) {
    CheckTerm(Split(terms[i]), absl::StrCat("binlog-event.terms #", i), &types);
  }
  // Guards against the reader silently dropping terms.
  EXPECT_EQ(terms.size(), 28u);
  for (uint8_t want : {kRotateEvent, kFormatDescriptionEvent, kTableMapEvent, kQueryEvent,
                       kIntvarEvent, kGtidListEvent, kBinlogCheckpointEvent, kMariaGtidEvent,
                       kXidEvent, kHeartbeatEvent, kQueryCompressedEvent, kStopEvent,
                       kUserVarEvent, kPreviousGtidsEvent}) {
    EXPECT_NE(std::find(types.begin(), types.end(), want), types.end()) << int{want};
  }
}

// binlog-gtid-log.terms: one MySQL 8.1 GTID_LOG_EVENT with every 8.0 field.
TEST(MsmpTermsTest, GtidLogTerm) {
  BINRELAY_REQUIRE_FIXTURE("msmp/binlog-gtid-log.terms");
  std::vector<ErlTerm> terms = LoadTerms("msmp/binlog-gtid-log.terms");
  ASSERT_EQ(terms.size(), 1u);
  std::vector<uint8_t> types;
  CheckTerm(Split(terms[0]), "binlog-gtid-log.terms", &types);
  EXPECT_EQ(types, std::vector<uint8_t>{kGtidEvent});
}

// write-rows-world-cup-teams-2022.terms: an 8190-byte WRITE_ROWS_V2 of 6
// text columns (MySQL 8.0.34). The file has no TABLE_MAP and the map gives
// no column types, so the TableDef is built by hand: six VARCHAR utf8mb4
// columns, the first with a 1-byte length prefix (max <= 255 bytes) and the
// rest with 2-byte prefixes, as the row bytes show. Every row value is
// compared with the map, including non-ASCII names and the trailing "\r".
TEST(MsmpTermsTest, WorldCupWriteRows) {
  BINRELAY_REQUIRE_FIXTURE("msmp/write-rows-world-cup-teams-2022.terms");
  std::vector<ErlTerm> terms = LoadTerms("msmp/write-rows-world-cup-teams-2022.terms");
  ASSERT_EQ(terms.size(), 1u);
  Term t = Split(terms[0]);
  ASSERT_NE(t.expect, nullptr);
  const std::string_view event = std::string_view(t.packet).substr(5);
  Fields top(*t.expect, "world-cup");
  EXPECT_EQ(static_cast<uint8_t>(t.packet[3]), top.Int("sequence"));
  Fields packet(top["packet"], "world-cup.packet");
  EXPECT_EQ(packet.Atom("action"), "log_event");
  EXPECT_EQ(event.substr(event.size() - 4), packet.Bin("footer"));
  ASSERT_TRUE(EventCrcMatches(event));
  auto ev = MakeEventView(event, true);
  ASSERT_TRUE(ev.ok()) << ev.status();
  {
    Fields h(packet["header"], "world-cup.header");
    EXPECT_EQ(ev->type(), TypeCode(h.Atom("event_type")));
    EXPECT_EQ(ev->header.flags, h.Int("flags"));
    EXPECT_EQ(ev->header.timestamp, h.Int("timestamp"));
    EXPECT_EQ(ev->header.server_id, h.Int("server_id"));
    EXPECT_EQ(ev->header.event_size, h.Int("event_size"));
    EXPECT_EQ(ev->header.log_pos, h.Int("log_pos"));
  }
  auto rows = ParseRowsEvent(*ev, Mysql8FormatDescription());
  ASSERT_TRUE(rows.ok()) << rows.status();
  Fields e(packet["event"], "world-cup.event");
  EXPECT_EQ(rows->flags, e.Int("flags"));
  EXPECT_EQ(rows->table_id, static_cast<uint64_t>(e.Int("table_id")));
  EXPECT_EQ(rows->column_count, static_cast<uint64_t>(e.Int("columns")));
  EXPECT_EQ(rows->extra_data, e.Bin("extra_row_info"));
  ASSERT_EQ(rows->columns_after.size(), 1u);
  EXPECT_EQ(static_cast<uint8_t>(rows->columns_after[0]), e.Int("bitmap"));

  TableDef def;
  def.table_id = rows->table_id;
  for (int i = 0; i < 6; ++i) {
    ColumnDef c;
    c.type = kTypeVarchar;
    c.meta = i == 0 ? 255 : 1020;
    c.collation = 255;
    def.columns.push_back(c);
  }
  const ErlTerm& want = e["rows"];
  size_t n = 0;
  RowDecoder decoder;
  absl::Status s = decoder.Decode(*rows, def, [&](const DecodedRow& row) -> absl::Status {
    if (n >= want.items.size()) return absl::InternalError("more rows than the term lists");
    auto json = testing::ParseJson(row.after_json);
    if (!json.ok()) return json.status();
    const ErlTerm& w = want.items[n];
    EXPECT_EQ(w.items.size(), 6u);
    for (size_t c = 0; c < w.items.size(); ++c) {
      const testing::JsonValue* v = json->Find(absl::StrCat("@", c + 1));
      if (v == nullptr || !v->is_string()) {
        ADD_FAILURE() << "row " << n << " column " << c + 1 << ": " << row.after_json;
        continue;
      }
      EXPECT_EQ(v->text, w.items[c].text) << "row " << n << " column " << c + 1;
    }
    EXPECT_FALSE(row.after_partial);
    ++n;
    return absl::OkStatus();
  });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(n, want.items.size());
  EXPECT_GT(n, 100u);  // the term lists every team up to "Mayotte"
}

// The term reader itself: code points in plain strings become single bytes,
// /utf8 strings UTF-8, and a broken term is an error with a line number.
TEST(ErlangTermReaderTest, StringsBinariesAndErrors) {
  auto t = testing::ParseErlangTerms(
      "%% c\n{#{a => <<\"x\\t\xc2\xa2\">>, b => <<\"\xc3\x85\"/utf8, 1>>, c => \"\xc3\xbf\"}, [1, -2, 16#ff]}.");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->size(), 1u);
  const ErlTerm& m = (*t)[0].items[0];
  EXPECT_EQ(m.Find("a")->text, std::string("x\t\xa2"));
  EXPECT_EQ(m.Find("b")->text, std::string("\xc3\x85\x01"));
  EXPECT_EQ(m.Find("c")->text, std::string("\xff"));
  EXPECT_EQ((*t)[0].items[1].items[1].i, -2);
  EXPECT_EQ((*t)[0].items[1].items[2].i, 255);
  auto bad = testing::ParseErlangTerms("{a,\n<<1,2>}.");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 2"), std::string::npos) << bad.status();
  EXPECT_FALSE(testing::ParseErlangTerms("<<256>>.").ok());
}

}  // namespace
}  // namespace binrelay::protocol
