#include "replication/switch_point.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "protocol/status_macros.h"
#include "replication/store_index.h"

namespace binrelay::replication {
namespace {

// SHOW BINLOG EVENTS's Info of a state event, as the server prints it:
// MariaDB Gtid_list "[0-1-5,0-2-3]" (sql/log_event_server.cc
// Gtid_list_log_event::pack_info), MySQL Previous_gtids the set with a
// newline after each comma.
std::string StateTextOfInfo(std::string_view info) {
  std::string text;
  text.reserve(info.size());
  for (char c : info) {
    if (c != '\n' && c != '\r' && c != ' ' && c != '[' && c != ']') text.push_back(c);
  }
  return text;
}

std::string QuoteLiteral(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

}  // namespace

absl::StatusOr<SourceGtids> OpeningGtidsOnServer(SqlSource& source, std::string_view file,
                                                 GtidFlavour flavour) {
  BR_RETURN_IF_ERROR(ValidateBinlogName(file));
  const std::string sql = absl::StrCat("SHOW BINLOG EVENTS IN ", QuoteLiteral(file), " LIMIT 4");
  auto rows = source.Query(sql);
  if (!rows.ok()) {
    return Annotate(rows.status(), absl::StrCat(sql, " on ", source.Peer()));
  }
  // Log_name, Pos, Event_type, Server_id, End_log_pos, Info
  for (const SqlRow& row : *rows) {
    if (row.size() < 6 || !row[2]) continue;
    const std::string type = absl::AsciiStrToLower(*row[2]);
    if (type != "gtid_list" && type != "previous_gtids") continue;
    const GtidFlavour found = type == "gtid_list" ? GtidFlavour::kMariaDb : GtidFlavour::kMysql;
    if (found != flavour) {
      return absl::FailedPreconditionError(absl::StrCat(
          source.Peer(), "'s ", AV(file), " opens with a ", *row[2], " event: it is a ",
          AV(GtidFlavourName(found)), " server, and binrelay's store holds a ",
          AV(GtidFlavourName(flavour)), " stream"));
    }
    auto gtids = SourceGtids::Parse(flavour, StateTextOfInfo(row[5].value_or("")));
    if (!gtids.ok()) {
      return Annotate(gtids.status(), absl::StrCat("the ", *row[2], " event of ", AV(file), " on ",
                                                   source.Peer()));
    }
    return *std::move(gtids);
  }
  return SourceGtids();
}

absl::StatusOr<SwitchPoint> FindSwitchPoint(SqlSource& source, const SourceGtids& stored) {
  if (!stored.known()) {
    return absl::InvalidArgumentError(
        "binrelay's store holds no GTIDs: it cannot tell where its stream continues on "
        "another server");
  }
  auto logs = source.Query("SHOW BINARY LOGS");
  if (!logs.ok()) return Annotate(logs.status(), absl::StrCat("SHOW BINARY LOGS on ", source.Peer()));
  std::vector<std::string> files;
  for (const SqlRow& row : *logs) {
    if (!row.empty() && row[0]) files.push_back(*row[0]);
  }
  if (files.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(source.Peer(), " lists no binlog files (is log_bin on?)"));
  }
  // Newest first; one file at a time through the store's own rule.
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    BR_ASSIGN_OR_RETURN(SourceGtids first, OpeningGtidsOnServer(source, *it, stored.flavour()));
    std::vector<StoreFileEntry> one = {{*it, first, 0}};
    if (FileForGtidPosition(one, stored).ok()) return SwitchPoint{*it, std::move(first)};
  }
  return absl::NotFoundError(absl::StrCat(
      "every binlog file of ", source.Peer(), " (oldest ", files.front(),
      ") opens after binrelay's stored GTID state ", stored.PositionText(),
      ": transactions the store lacks were purged there; following it would leave a gap"));
}

}  // namespace binrelay::replication
