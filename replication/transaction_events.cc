#include "replication/transaction_events.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "protocol/byte_cursor.h"
#include "protocol/event_type.h"
#include "protocol/status_macros.h"

namespace binrelay::replication {

absl::StatusOr<QueryText> ReadQueryText(const protocol::EventView& event,
                                        const protocol::FormatDescription& fde) {
  // Post-header: thread_id(4) exec_time(4) db_len(1) error_code(2)
  // [status_vars_len(2) when the post-header is >= 13 bytes].
  uint8_t post = fde.PostHeaderLen(protocol::kQueryEvent);
  if (post == 0) post = 13;
  protocol::ByteCursor c(event.body);
  c.Skip(8);
  uint8_t db_len = c.U8();
  c.Skip(2);
  uint16_t status_len = post >= 13 ? c.U16() : 0;
  c.Skip(post > 13 ? post - 13 : 0);
  c.Skip(status_len);
  QueryText out;
  out.db = c.Bytes(db_len);
  c.Skip(1);  // NUL after the schema name
  if (!c.ok()) return c.status(absl::StrCat("QUERY event at offset ", event.offset));
  if (event.type() != protocol::kQueryCompressedEvent) out.query = c.Rest();
  return out;
}

absl::StatusOr<GtidInfo> ReadGtid(const protocol::EventView& event) {
  protocol::ByteCursor c(event.body);
  GtidInfo g;
  if (event.type() == protocol::kMariaGtidEvent) {
    uint64_t seq = c.U64();
    uint32_t domain = c.U32();
    uint8_t flags = c.U8();
    if (!c.ok()) return c.status("MariaDB GTID event");
    g.text = absl::StrCat(domain, "-", event.header.server_id, "-", seq);
    g.standalone = (flags & 0x01) != 0;  // FL_STANDALONE
    return g;
  }
  // MySQL GTID / ANONYMOUS_GTID / GTID_TAGGED: flags(1) uuid(16) gno(8).
  if (event.type() == protocol::kAnonymousGtidEvent) return g;
  if (event.type() == protocol::kGtidTaggedEvent) {
    // Tagged GTIDs use mysql::serialization; the text is rebuilt by the
    // event decoder. Transaction tracking only needs "a GTID is present".
    g.text = "tagged";
    return g;
  }
  c.Skip(1);
  std::string_view sid = c.Bytes(16);
  uint64_t gno = c.U64();
  if (!c.ok()) return c.status("GTID event");
  const auto* u = reinterpret_cast<const uint8_t*>(sid.data());
  g.text = absl::StrFormat(
      "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x:%d", u[0], u[1], u[2],
      u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15], gno);
  return g;
}

StatementKind ClassifyStatement(std::string_view query) {
  absl::string_view q = absl::StripLeadingAsciiWhitespace(AV(query));
  auto starts = [&](absl::string_view word) {
    return absl::StartsWithIgnoreCase(q, word) &&
           (q.size() == word.size() || !absl::ascii_isalnum(q[word.size()]));
  };
  if (starts("BEGIN") || starts("START TRANSACTION") || starts("XA START") ||
      starts("XA BEGIN")) {
    return StatementKind::kBegin;
  }
  if (starts("COMMIT") || starts("XA COMMIT")) return StatementKind::kCommit;
  if (starts("ROLLBACK") && !absl::StrContains(absl::AsciiStrToUpper(q), " TO ")) {
    return StatementKind::kRollback;
  }
  if (starts("XA ROLLBACK")) return StatementKind::kRollback;
  if (starts("XA END")) return StatementKind::kXaEnd;
  return StatementKind::kOther;
}

}  // namespace binrelay::replication
