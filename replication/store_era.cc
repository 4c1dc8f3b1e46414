#include "replication/store_era.h"

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "protocol/status_macros.h"
#include "replication/atomic_file.h"
#include "replication/store_index.h"

namespace binrelay::replication {

std::optional<uint32_t> ParseEraDirName(std::string_view name) {
  if (!name.starts_with(kEraDirPrefix)) return std::nullopt;
  name.remove_prefix(kEraDirPrefix.size());
  // Canonical decimal only: one directory per era, never "era-01" beside "era-1".
  if (name.empty() || name.size() > 9 || name[0] == '0') return std::nullopt;
  uint32_t era = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    era = era * 10 + static_cast<uint32_t>(c - '0');
  }
  return era;
}

StoredFileName SplitStoredName(std::string_view stored) {
  const size_t slash = stored.find('/');
  if (slash == std::string_view::npos) return {0, stored};
  std::optional<uint32_t> era = ParseEraDirName(stored.substr(0, slash));
  if (!era) return {0, stored};
  return {*era, stored.substr(slash + 1)};
}

std::vector<const StoreFileEntry*> FilesNamed(const std::vector<StoreFileEntry>& files,
                                              std::string_view requested) {
  std::vector<const StoreFileEntry*> out;
  for (const StoreFileEntry& f : files) {
    if (f.name == requested || SourceNameOf(f.name) == requested) out.push_back(&f);
  }
  return out;
}

BinlogPosition StoredPositionOf(uint32_t current_era, const BinlogPosition& source_position) {
  if (current_era == 0 || SplitStoredName(source_position.file).era != 0) return source_position;
  return {StoredNameOf(current_era, source_position.file), source_position.offset};
}

std::string EraDirName(uint32_t era) { return absl::StrCat(AV(kEraDirPrefix), era); }

std::string StoredNameOf(uint32_t era, std::string_view source_name) {
  if (era == 0) return std::string(source_name);
  return absl::StrCat(AV(kEraDirPrefix), era, "/", AV(source_name));
}

bool IsStoredNameOf(std::string_view stored, uint32_t era, std::string_view source_name) {
  if (era == 0) return stored == source_name;
  if (!stored.ends_with(source_name) || stored.size() == source_name.size()) return false;
  stored.remove_suffix(source_name.size());
  if (stored.back() != '/') return false;
  stored.remove_suffix(1);
  return ParseEraDirName(stored) == era;
}

absl::Status WriteEraEntry(const std::string& dir, uint32_t era, const EraEntry& entry,
                           bool durable) {
  BR_RETURN_IF_ERROR(ValidateBinlogName(entry.first_file));
  if (!entry.previous_last_file.empty()) {
    BR_RETURN_IF_ERROR(ValidateBinlogName(entry.previous_last_file));
  }
  for (const std::string* a : {&entry.source_address, &entry.left_address}) {
    if (a->find_first_of("\t\n") != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "era ", era, " entry in ", dir, ": server address '", *a,
          "' holds a tab or a line break"));
    }
  }
  const std::string text =
      absl::StrCat(AV(GtidFlavourName(entry.stored.flavour())), "\t", entry.stored.StateText(),
                   "\n", entry.first_file, "\t", entry.server_id, "\t",
                   entry.previous_last_file, "\n", entry.source_address, "\t",
                   entry.switched_at, "\t", entry.left_address, "\t", entry.left_server_id,
                   "\n");
  return WriteFileAtomically(absl::StrCat(dir, "/", EraDirName(era), "/", AV(kEraEntryName)),
                             text, 0644, durable);
}

absl::StatusOr<EraEntry> ReadEraEntry(const std::string& dir, uint32_t era) {
  const std::string path = absl::StrCat(dir, "/", EraDirName(era), "/", AV(kEraEntryName));
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(
        "no era entry ", path, ": it records the GTIDs stored before era ", era,
        " began, which readers need to skip the era's repeats; restore it (a copy of the store "
        "that skipped hidden files?) or remove the era's directory if it holds no files"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  const std::string body = text.str();
  // Two or three lines, each ended: a cut write never parses (the file is
  // replaced whole, so only damage can cut it).
  std::vector<std::string> lines = absl::StrSplit(body, '\n');
  std::optional<EraEntry> entry;
  const bool shape = (lines.size() == 3 || lines.size() == 4) && lines.back().empty();
  std::vector<std::string> second =
      shape ? absl::StrSplit(lines[1], '\t') : std::vector<std::string>();
  std::vector<std::string> third = shape && lines.size() == 4
                                       ? absl::StrSplit(lines[2], '\t')
                                       : std::vector<std::string>{"", "0"};
  if (third.size() == 2) third.insert(third.end(), {"", "0"});
  uint32_t server_id = 0;
  int64_t switched_at = 0;
  uint32_t left_server_id = 0;
  if (shape && second.size() == 3 && third.size() == 4 &&
      absl::SimpleAtoi(third[1], &switched_at) && absl::SimpleAtoi(third[3], &left_server_id) &&
      ValidateBinlogName(second[0]).ok() && absl::SimpleAtoi(second[1], &server_id) &&
      (second[2].empty() || ValidateBinlogName(second[2]).ok())) {
    std::vector<std::string> f = absl::StrSplit(lines[0], absl::MaxSplits('\t', 1));
    std::optional<GtidFlavour> flavour;
    if (f.size() == 2) {
      if (f[0] == "mariadb") flavour = GtidFlavour::kMariaDb;
      if (f[0] == "mysql") flavour = GtidFlavour::kMysql;
      if (f[0] == "none") flavour = GtidFlavour::kNone;
    }
    if (flavour) {
      if (auto gtids = SourceGtids::Parse(*flavour, f[1]); gtids.ok()) {
        entry = EraEntry{*std::move(gtids), second[0], server_id, second[2], third[0],
                         switched_at, third[2], left_server_id};
      }
    }
  }
  if (!entry) {
    return absl::DataLossError(absl::StrCat(
        "era entry ", path, " is not '<mariadb|mysql|none>\\t<gtid state>\\n<first file>\\t"
        "<server_id>\\t<previous last file>\\n[<source address>\\t<switched at>\\n]'; "
        "it records the GTIDs stored before era ", era, " began, which the files cannot "
        "rebuild: restore it from a backup of the store"));
  }
  return *std::move(entry);
}

}  // namespace binrelay::replication
