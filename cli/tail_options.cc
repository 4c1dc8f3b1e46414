#include "cli/tail_options.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/shown_argument.h"
#include "protocol/status_macros.h"

namespace binrelay::cli {

const char* const kTailUsage =
    "usage: binrelay tail --source HOST[:PORT] --user USER --tables db.t1,db.* \n"
    "                     [--start current|earliest|FILE:POS|gtid:SET] [--until-end]\n"
    "       binrelay tail --file PATH [--file PATH ...] --tables db.t1|'*.*'\n"
    "\n"
    "Prints one JSON object per changed row of the subscribed tables.\n"
    "\n"
    "  --source HOST[:PORT]   source server (port 3306 by default)\n"
    "  --user USER            replication user (needs REPLICATION SLAVE, and BINLOG MONITOR\n"
    "                         or REPLICATION CLIENT; SELECT on information_schema)\n"
    "  --password-file PATH   file whose first line is the password; otherwise the\n"
    "                         BINRELAY_SOURCE_PASSWORD environment variable is used\n"
    "  --tables LIST          comma-separated db.table, db.* or *.*\n"
    "  --start WHERE          current (default), earliest, FILE:POS, or gtid:SET\n"
    "                         (MariaDB 0-1-100,...; MySQL uuid:1-100,...)\n"
    "  --until-end            exit 0 once the source's binlog end at connect time is reached\n"
    "  --file PATH            decode a local binlog file instead (repeatable, in order)\n"
    "  --server-id N          replica server_id to register with (default: random, checked\n"
    "                         against the replicas registered on the source)\n"
    "  --tls MODE             disabled, preferred (default) or required\n"
    "  --tls-ca PATH          verify the source's certificate against this CA, and its host name\n"
    "  --server-public-key-path PATH\n"
    "                         the source's RSA public key (PEM), for caching_sha2_password\n"
    "                         without TLS: the password is encrypted to this key only\n"
    "  --get-server-public-key  without TLS or a pinned key, accept the RSA key the\n"
    "                         source sends (a man in the middle could read the password)\n"
    "  --heartbeat SECONDS    source heartbeat period; 3 missed ones mean a dead link (2)\n"
    "  --reconnect-timeout S  give up after the source is unreachable this long (60)\n"
    "  --log-level LEVEL      debug, info (default), warn, error (logs go to stderr)\n";

namespace {

absl::StatusOr<std::string> ReadPasswordFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read --password-file ", path));
  }
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

}  // namespace

absl::StatusOr<TailOptions> ParseTailOptions(const std::vector<std::string>& args) {
  TailOptions o;
  std::string password_file;
  std::string source;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> absl::StatusOr<std::string> {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat(a, " needs a value"));
      }
      return args[++i];
    };
    auto seconds = [&](std::chrono::milliseconds* out) -> absl::Status {
      BR_ASSIGN_OR_RETURN(std::string v, value());
      double s = 0;
      if (!absl::SimpleAtod(v, &s) || s <= 0) {
        return absl::InvalidArgumentError(absl::StrCat(a, " takes a positive number of seconds"));
      }
      *out = std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
      return absl::OkStatus();
    };
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--source") {
      BR_ASSIGN_OR_RETURN(source, value());
    } else if (a == "--user") {
      BR_ASSIGN_OR_RETURN(o.user, value());
    } else if (a == "--password-file") {
      BR_ASSIGN_OR_RETURN(password_file, value());
    } else if (a == "--password" || a.rfind("--password=", 0) == 0) {
      return absl::InvalidArgumentError(
          "--password is not accepted (it would be visible in ps): use "
          "BINRELAY_SOURCE_PASSWORD or --password-file");
    } else if (a == "--tables") {
      BR_ASSIGN_OR_RETURN(o.tables, value());
    } else if (a == "--start") {
      BR_ASSIGN_OR_RETURN(o.start, value());
    } else if (a == "--until-end") {
      o.until_end = true;
    } else if (a == "--file") {
      BR_ASSIGN_OR_RETURN(std::string f, value());
      o.files.push_back(std::move(f));
    } else if (a == "--server-id") {
      BR_ASSIGN_OR_RETURN(std::string v, value());
      if (!absl::SimpleAtoi(v, &o.server_id) || o.server_id == 0) {
        return absl::InvalidArgumentError("--server-id takes an integer from 1 to 4294967295");
      }
    } else if (a == "--tls") {
      BR_ASSIGN_OR_RETURN(o.tls, value());
      if (o.tls != "disabled" && o.tls != "preferred" && o.tls != "required") {
        return absl::InvalidArgumentError("--tls takes disabled, preferred or required");
      }
    } else if (a == "--tls-ca") {
      BR_ASSIGN_OR_RETURN(o.tls_ca, value());
    } else if (a == "--server-public-key-path") {
      BR_ASSIGN_OR_RETURN(o.server_public_key_path, value());
    } else if (a == "--get-server-public-key") {
      o.get_server_public_key = true;
    } else if (a == "--heartbeat") {
      BR_RETURN_IF_ERROR(seconds(&o.heartbeat));
    } else if (a == "--reconnect-timeout") {
      BR_RETURN_IF_ERROR(seconds(&o.reconnect_timeout));
    } else if (a == "--log-level") {
      BR_ASSIGN_OR_RETURN(o.log_level, value());
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown option '", ShownArgument(a), "'"));
    }
  }
  if (o.help) return o;
  if (o.tables.empty()) {
    return absl::InvalidArgumentError("--tables is required (db.table, db.* or '*.*')");
  }
  if (!o.files.empty()) {
    if (!source.empty()) return absl::InvalidArgumentError("give either --source or --file");
    return o;
  }
  if (source.empty()) return absl::InvalidArgumentError("--source HOST[:PORT] or --file is required");
  size_t colon = source.rfind(':');
  o.source_host = source.substr(0, colon);
  if (colon != std::string::npos) {
    uint32_t port = 0;
    if (!absl::SimpleAtoi(source.substr(colon + 1), &port) || port == 0 || port > 65535) {
      return absl::InvalidArgumentError(absl::StrCat("bad port in --source ", source));
    }
    o.source_port = static_cast<uint16_t>(port);
  }
  if (o.source_host.empty()) return absl::InvalidArgumentError("--source needs a host");
  if (o.user.empty()) return absl::InvalidArgumentError("--user is required with --source");
  if (!password_file.empty()) {
    BR_ASSIGN_OR_RETURN(o.password, ReadPasswordFile(password_file));
  } else if (const char* env = std::getenv("BINRELAY_SOURCE_PASSWORD")) {
    o.password = env;
  }
  return o;
}

}  // namespace binrelay::cli
