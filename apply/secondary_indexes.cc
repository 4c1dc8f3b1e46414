#include "apply/secondary_indexes.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "protocol/server_error.h"
#include "protocol/status_macros.h"
#include "spdlog/spdlog.h"

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

// The unquoted identifier that starts at line[at] just after its opening
// ` (a ` inside is doubled), or "" if it does not close; *end gets the
// position after the closing `.
std::string Quoted(std::string_view line, size_t at, size_t* end = nullptr) {
  std::string name;
  for (size_t i = at; i < line.size(); ++i) {
    if (line[i] != '`') {
      name.push_back(line[i]);
      continue;
    }
    if (i + 1 < line.size() && line[i + 1] == '`') {
      name.push_back('`');
      ++i;
      continue;
    }
    if (end != nullptr) *end = i + 1;
    return name;
  }
  return "";
}

std::string KeyName(std::string_view line) { return Quoted(line, kKeyLine.size()); }

// The first column of a KEY line: "  KEY `name` (`col`..." -> col.
std::string FirstKeyColumn(std::string_view line) {
  size_t end = 0;
  if (Quoted(line, kKeyLine.size(), &end).empty()) return "";
  const size_t open = line.find("(`", end);
  if (open == std::string_view::npos) return "";
  return Quoted(line, open + 2);
}

// The AUTO_INCREMENT column ("" if none): InnoDB needs it to lead some
// index (error 1075), so the KEY it leads cannot wait.
std::string AutoIncrementColumn(std::string_view create_table) {
  for (std::string_view line : Lines(create_table)) {
    if (line.starts_with("  `") && line.find(" AUTO_INCREMENT") != std::string_view::npos) {
      return Quoted(line, 3);
    }
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

bool ReferencesOtherTables(std::string_view create_table) { return HasForeignKey(create_table); }

std::vector<IndexDefinition> DeferrableIndexes(std::string_view create_table) {
  std::vector<IndexDefinition> out;
  if (HasForeignKey(create_table)) return out;
  const std::string auto_increment = AutoIncrementColumn(create_table);
  for (std::string_view line : Lines(create_table)) {
    if (!line.starts_with(kKeyLine)) continue;
    std::string name = KeyName(line);
    if (name.empty()) continue;
    if (!auto_increment.empty() && FirstKeyColumn(line) == auto_increment) continue;
    if (line.ends_with(',')) line.remove_suffix(1);
    line.remove_prefix(2);
    out.push_back(IndexDefinition{std::move(name), std::string(line)});
  }
  return out;
}

std::string WithoutDeferrableIndexes(std::string_view create_table) {
  const std::vector<IndexDefinition> deferred = DeferrableIndexes(create_table);
  if (deferred.empty()) return std::string(create_table);
  absl::flat_hash_set<std::string> names;
  for (const IndexDefinition& i : deferred) names.insert(i.name);
  std::vector<std::string_view> kept;
  for (std::string_view line : Lines(create_table)) {
    if (line.starts_with(kKeyLine) && names.contains(KeyName(line))) continue;
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
    const std::vector<IndexDefinition>& indexes, std::string* not_online, bool online_only) {
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
  // MySQL 8.0.27 and later sort an index build's keys in
  // innodb_ddl_buffer_size bytes, 1 MiB by default (MySQL manual,
  // "Configuring Parallel Threads for Online DDL Operations"). 64 MiB built
  // a 2M-row INT index in 1.70 s instead of 1.95 s on MySQL 9.7. A server
  // without the variable (MariaDB, older MySQL: 1193) builds with its
  // default; so does one that refuses it otherwise (an account that may not
  // set it: 1227), said in the log: a speed-up must not stop a move. A lost
  // connection is the caller's to retry.
  auto sized = target.Query(absl::StrCat("SET SESSION innodb_ddl_buffer_size = ", kIndexSortBytes));
  if (!sized.ok()) {
    std::optional<protocol::ServerError> e = protocol::GetServerError(sized.status());
    if (!e) return sized.status();
    if (e->code != 1193) {
      spdlog::info("{} refused innodb_ddl_buffer_size = {} ({}); the indexes of {} are built "
                   "with its default", target.Peer(), kIndexSortBytes, SV(sized.status().message()),
                   target_table);
    }
  }
  // Online: the move's pipeline keeps writing to the table meanwhile.
  auto online = target.Query(absl::StrCat(alter, ", ALGORITHM=INPLACE, LOCK=NONE"));
  if (online.ok()) return added;
  std::optional<protocol::ServerError> e = protocol::GetServerError(online.status());
  // ER_ALTER_OPERATION_NOT_SUPPORTED(_REASON): this build cannot be online
  // (sql/share/errmsg-utf8.txt); built with writes waiting instead.
  if (!e || (e->code != 1845 && e->code != 1846) || online_only) return online.status();
  if (not_online != nullptr) *not_online = std::string(online.status().message());
  BR_RETURN_IF_ERROR(target.Query(alter).status());
  return added;
}

}  // namespace binrelay::apply
