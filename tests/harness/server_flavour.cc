#include "tests/harness/server_flavour.h"

#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"

namespace binrelay::testing {
namespace {

bool Executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

}  // namespace

std::string ServersDir() {
  const char* env = std::getenv("BINRELAY_SERVERS_DIR");
  if (env != nullptr && *env != '\0') return env;
  return absl::StrCat(BINRELAY_SOURCE_DIR, "/.servers");
}

bool FlavourMissingIsFailure() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string_view(ci) == "true";
}

const std::vector<std::string>& ServerFlavour::All() {
  static const auto* all =
      new std::vector<std::string>{"mariadb-10.5", "mariadb-10.11", "mariadb-11.8", "mysql-9.7"};
  return *all;
}

std::string ServerFlavour::ShowBinlogStatus() const {
  return mysql && AtLeast(8, 4) ? "SHOW BINARY LOG STATUS" : "SHOW MASTER STATUS";
}

std::string ServerFlavour::ReplicationGrants() const {
  // MariaDB 10.5 split BINLOG MONITOR out of REPLICATION CLIENT.
  return mysql ? "REPLICATION SLAVE, REPLICATION CLIENT, SELECT"
               : "REPLICATION SLAVE, BINLOG MONITOR, SELECT";
}

absl::StatusOr<ServerFlavour> ServerFlavour::Find(std::string_view name) {
  ServerFlavour f;
  f.name = std::string(name);
  if (name == "mariadb-10.11") {
    f.major = 10;
    f.minor = 11;
    f.server = "/usr/sbin/mariadbd";
    f.install_db = "/usr/bin/mariadb-install-db";
    f.client = "/usr/bin/mariadb";
    f.binlog_tool = "/usr/bin/mariadb-binlog";
    f.dump_tool = "/usr/bin/mariadb-dump";
    for (const std::string* p : {&f.server, &f.install_db}) {
      if (!Executable(*p)) {
        return absl::FailedPreconditionError(absl::StrCat(
            *p, " is missing: install MariaDB 10.11 with scripts/setup.sh (integration tests "
                "never skip it)"));
      }
    }
    return f;
  }
  if (name == "mariadb-10.5") {
    f.major = 10;
    f.minor = 5;
  } else if (name == "mariadb-11.8") {
    f.major = 11;
    f.minor = 8;
  } else if (name == "mysql-9.7") {
    f.mysql = true;
    f.major = 9;
    f.minor = 7;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown server flavour '", AV(name),
                     "' (mariadb-10.5, mariadb-10.11, mariadb-11.8 or mysql-9.7)"));
  }
  const std::string dir = absl::StrCat(ServersDir(), "/", AV(name));
  if (::access((dir + "/.complete").c_str(), F_OK) != 0) {
    return absl::NotFoundError(absl::StrCat(
        AV(name), " is not fetched into ", dir, ": run scripts/fetch-servers.sh ", AV(name),
        " (scripts/setup.sh fetches every flavour)"));
  }
  const std::string bin = dir + "/bin/";
  const std::string usr = dir + "/root/usr";
  f.basedir = usr;
  if (::access((usr + "/lib/mysql/plugin").c_str(), F_OK) == 0) f.plugin_dir = usr + "/lib/mysql/plugin";
  if (f.mysql) {
    f.server = bin + "mysqld";
    f.lc_messages_dir = usr + "/share/mysql";
    f.client = bin + "mysql";
    f.binlog_tool = bin + "mysqlbinlog";
    f.dump_tool = bin + "mysqldump";
  } else {
    f.server = bin + "mariadbd";
    f.install_db = bin + "mariadb-install-db";
    f.install_basedir = dir + "/base";
    // 10.5 keeps its messages under share/mysql, 10.6+ under share/mariadb.
    f.lc_messages_dir = f.AtLeast(10, 6) ? usr + "/share/mariadb" : usr + "/share/mysql";
    f.client = bin + "mariadb";
    f.binlog_tool = bin + "mariadb-binlog";
    f.dump_tool = bin + "mariadb-dump";
  }
  for (const std::string* p : {&f.server, &f.client, &f.binlog_tool}) {
    if (!Executable(*p)) {
      return absl::NotFoundError(absl::StrCat(*p, " is missing: run scripts/fetch-servers.sh ",
                                              AV(name), " again"));
    }
  }
  return f;
}

}  // namespace binrelay::testing
