#include "protocol/query_event.h"

#include <array>
#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/event_type.h"
#include "protocol/mariadb_event_compression.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

// Walks the status-variable block (as Query_event::Query_event in
// libbinlogevents/src/statement_events.cpp). Codes carry no lengths, so an
// unknown code ends the walk; the raw block stays available.
void ParseStatusVars(std::string_view block, QueryEvent* q) {
  ByteCursor c(block);
  while (c.ok() && !c.empty()) {
    const uint8_t code = c.U8();
    switch (code) {
      case 0: q->flags2 = c.U32(); break;
      case 1: q->sql_mode = c.U64(); break;
      case 2: c.Skip(c.U8() + 1); break;  // old CATALOG: len, bytes, NUL
      case 3: c.Skip(4); break;
      case 4:
        q->charset_client = c.U16();
        q->collation_connection = c.U16();
        q->collation_server = c.U16();
        break;
      case 5: q->time_zone = c.Bytes(c.U8()); break;
      case 6: c.Skip(c.U8()); break;
      case 7: c.Skip(2); break;
      case 8: c.Skip(2); break;
      case 9: c.Skip(8); break;
      case 10: c.Skip(4); break;
      case 11: c.Skip(c.U8()); c.Skip(c.U8()); break;
      case 12: {
        const uint8_t n = c.U8();
        if (n != 254) {
          for (uint8_t i = 0; i < n && c.ok(); ++i) c.NulString();
        }
        break;
      }
      case 13: c.Skip(3); break;
      case 16: c.Skip(1); break;
      case 17: q->ddl_xid = c.U64(); break;
      case 18: c.Skip(2); break;
      case 19: c.Skip(1); break;
      case 20: c.Skip(1); break;
      case 128: c.Skip(3); break;  // MariaDB HRNOW
      case 129: q->ddl_xid = c.U64(); break;  // MariaDB XID
      case 130: {  // MariaDB GTID_FLAGS3 (+ seq_no for COMMIT/ROLLBACK_ALTER)
        const uint8_t f = c.U8();
        if (f & (4 | 8)) c.Skip(8);
        break;
      }
      case 131: c.Skip(uint64_t{c.U8()} * 4); break;  // MariaDB charset collations
      default:
        q->status_vars_truncated = true;
        return;
    }
  }
  if (!c.ok()) q->status_vars_truncated = true;
}

std::string_view SkipSpaceAndComments(std::string_view s) {
  while (true) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    if (s.substr(0, 2) == "/*" && s.substr(0, 3) != "/*!") {
      const size_t end = s.find("*/", 2);
      if (end == std::string_view::npos) return {};
      s.remove_prefix(end + 2);
      continue;
    }
    if (s.substr(0, 3) == "/*!") {  // versioned comment: its content is executed
      s.remove_prefix(3);
      while (!s.empty() && std::isdigit(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
      continue;
    }
    return s;
  }
}

// Next keyword, upper-cased; advances `s`.
std::string NextWord(std::string_view& s) {
  s = SkipSpaceAndComments(s);
  size_t n = 0;
  while (n < s.size() && (std::isalnum(static_cast<unsigned char>(s[n])) || s[n] == '_')) ++n;
  std::string w(s.substr(0, n));
  s.remove_prefix(n);
  return absl::AsciiStrToUpper(w);
}

}  // namespace

absl::StatusOr<QueryEvent> ParseQueryEvent(const EventView& ev, const FormatDescription& fd,
                                           std::string* scratch) {
  const bool compressed = ev.type() == kQueryCompressedEvent;
  if (ev.type() != kQueryEvent && !compressed) {
    return absl::InvalidArgumentError(absl::StrCat(AV(EventTypeName(ev.type())), " at offset ",
                                                   ev.offset, " is not a QUERY event"));
  }
  const std::string where = absl::StrCat(AV(EventTypeName(ev.type())), " event at offset ", ev.offset);
  size_t post = fd.PostHeaderLen(ev.type());
  if (post == 0) post = 13;
  ByteCursor c(ev.body);
  QueryEvent q;
  q.thread_id = c.U32();
  q.exec_time = c.U32();
  const uint8_t db_len = c.U8();
  q.error_code = c.U16();
  const uint16_t vars_len = post >= 13 ? c.U16() : 0;  // binlog v3: no status vars
  if (post > 13) c.Skip(post - 13);
  q.status_vars = c.Bytes(vars_len);
  q.db = c.Bytes(db_len);
  c.Skip(1);  // NUL after db
  if (!c.ok()) {
    return absl::DataLossError(absl::StrCat(where, ": status vars (", vars_len, " bytes) or db (",
                                            db_len, " bytes) exceed the event"));
  }
  ParseStatusVars(q.status_vars, &q);
  q.query = c.Rest();
  if (compressed) {
    if (scratch == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": a scratch buffer is required"));
    }
    BR_RETURN_IF_ERROR(Annotate(UncompressMariadbEventField(q.query, scratch), where));
    q.query = *scratch;
  }
  return q;
}

StatementKind ClassifyStatement(std::string_view sql) {
  std::string_view s = sql;
  const std::string w1 = NextWord(s);
  if (w1 == "BEGIN") return StatementKind::kBegin;
  if (w1 == "COMMIT") return StatementKind::kCommit;
  if (w1 == "SAVEPOINT" || w1 == "RELEASE") return StatementKind::kSavepoint;
  if (w1 == "ROLLBACK") {
    std::string_view rest = s;
    std::string w2 = NextWord(rest);
    if (w2 == "WORK") w2 = NextWord(rest);
    return w2 == "TO" ? StatementKind::kSavepoint : StatementKind::kRollback;
  }
  if (w1 == "START") {
    return NextWord(s) == "TRANSACTION" ? StatementKind::kBegin : StatementKind::kOther;
  }
  if (w1 == "XA") {
    const std::string w2 = NextWord(s);
    if (w2 == "START" || w2 == "BEGIN") return StatementKind::kBegin;
    if (w2 == "COMMIT") return StatementKind::kCommit;
    if (w2 == "ROLLBACK") return StatementKind::kRollback;
    return StatementKind::kXa;
  }
  // Statements that change schema or privileges (and commit implicitly).
  static constexpr std::array<std::string_view, 7> kDdl = {
      "CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE", "GRANT", "REVOKE"};
  for (std::string_view k : kDdl) {
    if (w1 == k) return StatementKind::kDdl;
  }
  return StatementKind::kOther;
}

}  // namespace binrelay::protocol
