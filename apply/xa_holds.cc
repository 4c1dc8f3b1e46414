#include "apply/xa_holds.h"

#include <cctype>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "protocol/status_macros.h"
#include "replication/store_index.h"

namespace binrelay::apply {
namespace {

size_t RowBytes(const HeldRow& r) { return r.before_image.size() + r.after_image.size(); }

void AppendLowerHex(std::string_view bytes, std::string* out) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (unsigned char b : bytes) {
    out->push_back(kDigits[b >> 4]);
    out->push_back(kDigits[b & 15]);
  }
}

// Reads X'hex' (or 'text', which some servers print for plain xids) at the
// front of *s into lower-case hex; false if neither.
bool TakeXidPart(absl::string_view* s, std::string* out) {
  *s = absl::StripLeadingAsciiWhitespace(*s);
  if (s->size() >= 3 && (s->front() == 'X' || s->front() == 'x') && (*s)[1] == '\'') {
    const size_t end = s->find('\'', 2);
    if (end == absl::string_view::npos) return false;
    for (char c : s->substr(2, end - 2)) {
      if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
      out->push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
    s->remove_prefix(end + 1);
    return true;
  }
  if (!s->empty() && s->front() == '\'') {
    const size_t end = s->find('\'', 1);
    if (end == absl::string_view::npos) return false;
    AppendLowerHex(std::string_view(s->data() + 1, end - 1), out);
    s->remove_prefix(end + 1);
    return true;
  }
  return false;
}

}  // namespace

void XaHolds::BeginGroup(const replication::BinlogPosition& from) {
  if (in_group_) return;  // XA START after a PREPARED_XA GTID: one group
  in_group_ = true;
  group_from_ = from;
  staged_.clear();
  bytes_ -= staged_bytes_;
  staged_bytes_ = 0;
}

void XaHolds::Stage(HeldRow row) {
  staged_bytes_ += RowBytes(row);
  bytes_ += RowBytes(row);
  staged_.push_back(std::move(row));
}

void XaHolds::Prepare(const std::string& xid) {
  in_group_ = false;
  prepared_[xid] = true;
  if (staged_.empty()) return;  // nothing of ours: nothing to hold back
  Held& h = held_[xid];
  bytes_ -= h.bytes;  // the same xid prepared again (after a rollback)
  h.from = group_from_;
  h.rows = std::move(staged_);
  h.bytes = staged_bytes_;
  staged_.clear();
  staged_bytes_ = 0;
}

std::vector<HeldRow> XaHolds::TakeStaged() {
  in_group_ = false;
  bytes_ -= staged_bytes_;
  staged_bytes_ = 0;
  std::vector<HeldRow> out = std::move(staged_);
  staged_.clear();
  return out;
}

std::vector<HeldRow> XaHolds::Commit(const std::string& xid, bool* seen) {
  *seen = prepared_.erase(xid) > 0;
  auto it = held_.find(xid);
  if (it == held_.end()) return {};
  bytes_ -= it->second.bytes;
  std::vector<HeldRow> out = std::move(it->second.rows);
  if (!committing_from_ || replication::PositionBefore(it->second.from, *committing_from_)) {
    committing_from_ = it->second.from;
  }
  held_.erase(it);
  return out;
}

void XaHolds::Rollback(const std::string& xid) {
  if (in_group_) (void)TakeStaged();  // a rollback of the open group
  prepared_.erase(xid);
  auto it = held_.find(xid);
  if (it == held_.end()) return;
  bytes_ -= it->second.bytes;
  held_.erase(it);
}

std::optional<replication::BinlogPosition> XaHolds::earliest() const {
  std::optional<replication::BinlogPosition> out = committing_from_;
  for (const auto& [xid, h] : held_) {
    if (!out || replication::PositionBefore(h.from, *out)) out = h.from;
  }
  return out;
}

std::string XaEventXid(const protocol::XaPrepareEvent& ev) {
  std::string out;
  AppendLowerHex(ev.gtrid, &out);
  out.push_back(',');
  AppendLowerHex(ev.bqual, &out);
  // The event carries formatID in 4 bytes; the statement prints the
  // server's long: both compare as its low 32 bits, unsigned.
  absl::StrAppend(&out, ",", static_cast<uint32_t>(ev.format_id));
  return out;
}

XaStatement ParseXaStatement(std::string_view query) {
  XaStatement st;
  absl::string_view s = absl::StripLeadingAsciiWhitespace(AV(query));
  if (s.size() < 3 || !absl::StartsWithIgnoreCase(s, "XA") ||
      !absl::ascii_isspace(static_cast<unsigned char>(s[2]))) {
    return st;
  }
  s.remove_prefix(3);
  s = absl::StripLeadingAsciiWhitespace(s);
  XaStatement::Kind kind;
  if (absl::StartsWithIgnoreCase(s, "START") || absl::StartsWithIgnoreCase(s, "BEGIN")) {
    st.kind = XaStatement::Kind::kStart;
    return st;
  } else if (absl::StartsWithIgnoreCase(s, "PREPARE")) {
    kind = XaStatement::Kind::kPrepare;
    s.remove_prefix(7);
  } else if (absl::StartsWithIgnoreCase(s, "COMMIT")) {
    kind = XaStatement::Kind::kCommit;
    s.remove_prefix(6);
  } else if (absl::StartsWithIgnoreCase(s, "ROLLBACK")) {
    kind = XaStatement::Kind::kRollback;
    s.remove_prefix(8);
  } else {
    return st;
  }
  std::string xid;
  if (!TakeXidPart(&s, &xid)) return st;
  xid.push_back(',');
  s = absl::StripLeadingAsciiWhitespace(s);
  if (absl::ConsumePrefix(&s, ",")) {
    if (!TakeXidPart(&s, &xid)) return st;
    s = absl::StripLeadingAsciiWhitespace(s);
  }
  uint64_t format = 1;  // the default formatID
  if (absl::ConsumePrefix(&s, ",")) {
    s = absl::StripLeadingAsciiWhitespace(s);
    size_t n = 0;
    format = 0;
    // Up to 20 digits (a negative long printed as unsigned), wrapping.
    while (n < s.size() && std::isdigit(static_cast<unsigned char>(s[n]))) {
      format = format * 10 + static_cast<uint64_t>(s[n] - '0');
      if (++n > 20) return st;
    }
    if (n == 0) return st;
    s.remove_prefix(n);
  }
  absl::StrAppend(&xid, ",", static_cast<uint32_t>(format));
  s = absl::StripLeadingAsciiWhitespace(s);
  if (kind == XaStatement::Kind::kCommit && absl::StartsWithIgnoreCase(s, "ONE PHASE")) {
    kind = XaStatement::Kind::kCommitOnePhase;
  }
  st.kind = kind;
  st.xid = std::move(xid);
  return st;
}

}  // namespace binrelay::apply
