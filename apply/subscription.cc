#include "apply/subscription.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "protocol/status_macros.h"

namespace binrelay::apply {
namespace {

std::string TableKey(std::string_view db, std::string_view table) {
  std::string key;
  key.reserve(db.size() + table.size() + 1);
  key.append(db);
  key.push_back('\0');
  key.append(table);
  return key;
}

// Strips optional backquotes: `db`.`t` is accepted as well as db.t.
std::string_view Unquote(std::string_view s) {
  if (s.size() >= 2 && s.front() == '`' && s.back() == '`') return s.substr(1, s.size() - 2);
  return s;
}

}  // namespace

absl::StatusOr<Subscription> Subscription::Parse(std::string_view spec) {
  Subscription sub;
  int entries = 0;
  for (absl::string_view raw : absl::StrSplit(AV(spec), ',')) {
    absl::string_view entry = absl::StripAsciiWhitespace(raw);
    if (entry.empty()) continue;
    size_t dot = entry.find('.');
    if (dot == absl::string_view::npos || dot == 0 || dot + 1 == entry.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad table pattern '", entry, "': expected db.table, db.* or *.* (comma-separated)"));
    }
    std::string_view db = Unquote(std::string_view(entry.data(), dot));
    std::string_view table =
        Unquote(std::string_view(entry.data() + dot + 1, entry.size() - dot - 1));
    if (db == "*") {
      if (table != "*") {
        return absl::InvalidArgumentError(absl::StrCat(
            "bad table pattern '", entry, "': a '*' schema needs a '*' table (use *.*)"));
      }
      sub.all_ = true;
    } else if (table == "*") {
      sub.schemas_.insert(std::string(db));
      sub.lower_schemas_.insert(absl::AsciiStrToLower(AV(db)));
    } else {
      sub.tables_.insert(TableKey(db, table));
      sub.lower_tables_.insert(absl::AsciiStrToLower(TableKey(db, table)));
    }
    ++entries;
  }
  if (entries == 0) {
    return absl::InvalidArgumentError(
        "no tables given: pass --tables db.table[,db.*...] (or '*.*' for everything)");
  }
  return sub;
}

bool Subscription::Matches(std::string_view db, std::string_view table) const {
  if (all_) return true;
  if (!schemas_.empty() && schemas_.contains(AV(db))) return true;
  return tables_.contains(TableKey(db, table));
}

bool Subscription::MatchesIgnoringCase(std::string_view db, std::string_view table) const {
  if (all_) return true;
  if (!lower_schemas_.empty() && lower_schemas_.contains(absl::AsciiStrToLower(AV(db)))) {
    return true;
  }
  return lower_tables_.contains(absl::AsciiStrToLower(TableKey(db, table)));
}

std::string Subscription::ToString() const {
  if (all_) return "*.*";
  std::vector<std::string> parts;
  for (const auto& s : schemas_) parts.push_back(s + ".*");
  for (const auto& t : tables_) {
    std::string p = t;
    p[p.find('\0')] = '.';
    parts.push_back(p);
  }
  std::sort(parts.begin(), parts.end());
  return absl::StrJoin(parts, ", ");
}

}  // namespace binrelay::apply
