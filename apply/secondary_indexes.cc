#include "apply/secondary_indexes.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"

namespace binrelay::apply {
namespace {

// SHOW CREATE TABLE prints one definition per line, indented by two
// spaces (sql/sql_show.cc, show_create_table); a comment's newline is
// printed escaped, so a line is never part of a longer definition.
constexpr std::string_view kKeyLine = "  KEY `";

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t nl = text.find('\n');
    out.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) return out;
    text.remove_prefix(nl + 1);
  }
}

// The unquoted name after "KEY `" (a ` inside is doubled), or "" if the
// line does not parse.
std::string KeyName(std::string_view line) {
  std::string name;
  for (size_t i = kKeyLine.size(); i < line.size(); ++i) {
    if (line[i] != '`') {
      name.push_back(line[i]);
      continue;
    }
    if (i + 1 < line.size() && line[i + 1] == '`') {
      name.push_back('`');
      ++i;
      continue;
    }
    return name;
  }
  return "";
}

bool HasForeignKey(std::string_view create_table) {
  for (std::string_view line : Lines(create_table)) {
    if (line.starts_with("  CONSTRAINT ") &&
        line.find(" FOREIGN KEY ") != std::string_view::npos) {
      return true;
    }
    if (line.starts_with("  FOREIGN KEY ")) return true;
  }
  return false;
}

}  // namespace

std::vector<IndexDefinition> DeferrableIndexes(std::string_view create_table) {
  std::vector<IndexDefinition> out;
  if (HasForeignKey(create_table)) return out;
  for (std::string_view line : Lines(create_table)) {
    if (!line.starts_with(kKeyLine)) continue;
    std::string name = KeyName(line);
    if (name.empty()) continue;
    if (line.ends_with(',')) line.remove_suffix(1);
    line.remove_prefix(2);
    out.push_back(IndexDefinition{std::move(name), std::string(line)});
  }
  return out;
}

std::string WithoutDeferrableIndexes(std::string_view create_table) {
  if (DeferrableIndexes(create_table).empty()) return std::string(create_table);
  std::vector<std::string_view> kept;
  for (std::string_view line : Lines(create_table)) {
    if (line.starts_with(kKeyLine) && !KeyName(line).empty()) continue;
    kept.push_back(line);
  }
  // The definition before the closing ") ENGINE=..." line loses its comma.
  std::string out;
  for (size_t i = 0; i < kept.size(); ++i) {
    std::string_view line = kept[i];
    const bool before_close = i + 1 < kept.size() && kept[i + 1].starts_with(")");
    if (before_close && line.ends_with(',')) line.remove_suffix(1);
    if (i > 0) out.push_back('\n');
    out.append(line);
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> AddMissingIndexes(
    replication::SqlSource& target, const std::string& target_table,
    const std::vector<IndexDefinition>& indexes) {
  std::vector<std::string> added;
  if (indexes.empty()) return added;
  BR_ASSIGN_OR_RETURN(std::vector<replication::SqlRow> rows,
                      target.Query(absl::StrCat("SHOW INDEX FROM ", target_table)));
  absl::flat_hash_set<std::string> have;
  for (const replication::SqlRow& r : rows) {
    if (r.size() > 2 && r[2]) have.insert(*r[2]);  // Key_name
  }
  std::string alter = absl::StrCat("ALTER TABLE ", target_table);
  for (const IndexDefinition& i : indexes) {
    if (have.contains(i.name)) continue;
    absl::StrAppend(&alter, added.empty() ? " ADD " : ", ADD ", i.definition);
    added.push_back(i.name);
  }
  if (added.empty()) return added;
  BR_RETURN_IF_ERROR(target.Query(alter).status());
  return added;
}

}  // namespace binrelay::apply
