#include "replication/preflight.h"

#include "spdlog/spdlog.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"

namespace binrelay::replication {
namespace {

std::string Upper(const std::optional<std::string>& v) {
  return v ? absl::AsciiStrToUpper(*v) : std::string();
}

absl::Status CheckBinlogSettings(SqlSource& source, const PreflightOptions& options,
                                 SourceInfo* info) {
  const std::string peer = source.Peer();
  BR_ASSIGN_OR_RETURN(auto log_bin, QueryOptionalVariable(source, "log_bin"));
  if (Upper(log_bin) != "1" && Upper(log_bin) != "ON") {
    return absl::FailedPreconditionError(absl::StrCat(
        "binary logging is off on source ", peer,
        ": restart it with log_bin enabled (--log-bin) so binrelay has a binlog to stream"));
  }
  BR_ASSIGN_OR_RETURN(auto format, QueryOptionalVariable(source, "binlog_format"));
  if (Upper(format) != "ROW") {
    return absl::FailedPreconditionError(absl::StrCat(
        "source ", peer, " has binlog_format=", Upper(format),
        ": binrelay decodes row events only; set binlog_format=ROW in the server configuration "
        "(and SET GLOBAL binlog_format='ROW'), then reconnect"));
  }
  BR_ASSIGN_OR_RETURN(auto image, QueryOptionalVariable(source, "binlog_row_image"));
  info->binlog_row_image = Upper(image);
  if (info->binlog_row_image != "FULL") {
    std::string msg = absl::StrCat(
        "source ", peer, " has binlog_row_image=", info->binlog_row_image,
        ": row images are partial (lines carry \"image\":\"partial\"); set binlog_row_image=FULL "
        "for complete before/after images");
    if (options.require_full_row_image) return absl::FailedPreconditionError(msg);
    info->warnings.push_back(std::move(msg));
  }
  BR_ASSIGN_OR_RETURN(auto checksum, QueryOptionalVariable(source, "binlog_checksum"));
  info->checksum_crc32 = Upper(checksum) == "CRC32";
  if (checksum && !info->checksum_crc32 && Upper(checksum) != "NONE") {
    return absl::FailedPreconditionError(absl::StrCat(
        "source ", peer, " uses binlog_checksum=", *checksum,
        ": binrelay understands NONE and CRC32 only"));
  }
  // MySQL-only settings; absent (nullopt) on MariaDB.
  BR_ASSIGN_OR_RETURN(auto value_options, QueryOptionalVariable(source, "binlog_row_value_options"));
  if (value_options && absl::StrContains(Upper(value_options), "PARTIAL_JSON")) {
    info->warnings.push_back(absl::StrCat(
        "source ", peer,
        " has binlog_row_value_options=PARTIAL_JSON: JSON updates arrive as diffs and are "
        "rebuilt from the before image; set it to '' for plain full JSON images"));
  }
  BR_ASSIGN_OR_RETURN(auto compression,
                      QueryOptionalVariable(source, "binlog_transaction_compression"));
  if (Upper(compression) == "1" || Upper(compression) == "ON") {
    info->warnings.push_back(absl::StrCat(
        "source ", peer, " compresses transactions (binlog_transaction_compression=ON): "
        "TRANSACTION_PAYLOAD events are decompressed (zstd) by binrelay"));
  }
  if (!info->is_mariadb) {
    BR_ASSIGN_OR_RETURN(auto gtid_mode, QueryOptionalVariable(source, "gtid_mode"));
    info->gtid_mode = Upper(gtid_mode);
  }
  return absl::OkStatus();
}

absl::Status CheckPrivileges(SqlSource& source) {
  BR_ASSIGN_OR_RETURN(std::vector<SqlRow> grants, source.Query("SHOW GRANTS"));
  bool has_replication = false;
  bool has_role = false;
  for (const SqlRow& row : grants) {
    if (row.empty() || !row[0]) continue;
    std::string g = absl::AsciiStrToUpper(*row[0]);
    if (absl::StrContains(g, "REPLICATION SLAVE") || absl::StrContains(g, "REPLICATION REPLICA") ||
        absl::StrContains(g, "ALL PRIVILEGES ON *.*")) {
      has_replication = true;
    }
    // "GRANT `role` TO user" lines: privileges may come through a role we
    // cannot see from here, so we do not refuse in that case.
    if (absl::StartsWith(g, "GRANT `") || absl::StartsWith(g, "GRANT '")) has_role = true;
  }
  if (!has_replication && !has_role) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the user binrelay connects as lacks the REPLICATION SLAVE privilege on source ",
        source.Peer(), ": GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO that user "
        "(MariaDB 10.5+: also BINLOG MONITOR)"));
  }
  return absl::OkStatus();
}

absl::Status CheckServerId(SqlSource& source, const PreflightOptions& options,
                           const SourceInfo& info) {
  if (options.replica_server_id == 0) {
    return absl::InvalidArgumentError("--server-id must be a non-zero 32-bit integer");
  }
  if (options.replica_server_id == info.server_id) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--server-id ", options.replica_server_id, " equals the server_id of source ",
        source.Peer(), ": pick an id no server or replica in this topology uses"));
  }
  // MySQL 8.4 dropped SHOW SLAVE HOSTS; older servers and MariaDB lack SHOW REPLICAS.
  auto replicas = source.Query("SHOW REPLICAS");
  if (!replicas.ok()) replicas = source.Query("SHOW SLAVE HOSTS");
  if (!replicas.ok()) return absl::OkStatus();  // cannot list: the server will reject duplicates
  for (const SqlRow& row : *replicas) {
    uint32_t id = 0;
    if (row.size() >= 2 && row[0] && absl::SimpleAtoi(*row[0], &id) &&
        id == options.replica_server_id) {
      if (row[1] && *row[1] == "binrelay") {
        // Most likely this relay's previous process (restarted, or killed
        // before the source noticed): the source drops that older dump when
        // this one registers, as it does for any replica reconnecting.
        spdlog::warn("--server-id {} is still registered on source {} by a binrelay (this "
                     "relay's previous process?); the source will replace that connection. If "
                     "another binrelay uses this id, give each its own.",
                     id, source.Peer());
        continue;
      }
      return absl::FailedPreconditionError(absl::StrCat(
          "--server-id ", id, " is already used by replica ", row[1].value_or("?"),
          " registered on source ", source.Peer(),
          ": two replicas with one id disconnect each other; pick another --server-id"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SourceInfo> RunPreflight(SqlSource& source, const PreflightOptions& options) {
  SourceInfo info;
  BR_ASSIGN_OR_RETURN(auto version, QueryValue(source, "SELECT VERSION()"));
  info.version = version.value_or("");
  info.is_mariadb = absl::StrContains(absl::AsciiStrToLower(info.version), "mariadb");
  BR_ASSIGN_OR_RETURN(auto server_id, QueryValue(source, "SELECT @@GLOBAL.server_id"));
  if (!server_id || !absl::SimpleAtoi(*server_id, &info.server_id)) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read @@server_id from source ", source.Peer()));
  }
  BR_RETURN_IF_ERROR(CheckBinlogSettings(source, options, &info));
  BR_RETURN_IF_ERROR(CheckPrivileges(source));
  BR_RETURN_IF_ERROR(CheckServerId(source, options, info));
  return info;
}

}  // namespace binrelay::replication
