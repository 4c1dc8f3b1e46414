// ServerFlavour: one release of MySQL or MariaDB the integration tests run
// live, and where its programs are.
//
// - mariadb-10.11: Debian 12's own server and clients (/usr), installed by
//   scripts/setup.sh;
// - mariadb-10.5, mariadb-11.8, mysql-9.7: unpacked from Debian's archive by
//   scripts/fetch-servers.sh into $BINRELAY_SERVERS_DIR (default .servers/
//   in the source tree), each program run through a wrapper in FLAVOUR/bin/.
//
// A test that needs a fetched flavour calls BINRELAY_REQUIRE_FLAVOUR: when
// the flavour is missing it fails under CI=true (CI fetches every flavour)
// and is skipped elsewhere, naming the command that fetches it.
//
// Thread safety: Find() may be called from any thread; a ServerFlavour is a
// plain value.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace binrelay::testing {

struct ServerFlavour {
  std::string name;  // "mariadb-10.11", "mysql-9.7", ...
  bool mysql = false;
  int major = 0, minor = 0;

  std::string server;       // mariadbd or mysqld
  std::string install_db;   // mariadb-install-db; "" for MySQL (mysqld --initialize-insecure)
  std::string install_basedir;  // --basedir for install_db; "" for the system's
  std::string basedir;      // the server's --basedir; "" for the system's
  std::string lc_messages_dir;  // "" for the system's
  std::string plugin_dir;       // "" for the system's
  std::string client;       // mariadb or mysql
  std::string binlog_tool;  // mariadb-binlog or mysqlbinlog
  std::string dump_tool;    // mariadb-dump or mysqldump

  bool AtLeast(int maj, int min) const { return major > maj || (major == maj && minor >= min); }
  // The statement that shows the binlog end: SHOW BINARY LOG STATUS on MySQL
  // 8.4+ (SHOW MASTER STATUS was removed), SHOW MASTER STATUS elsewhere.
  std::string ShowBinlogStatus() const;
  // The grants a replication client (binrelay, tail) needs.
  std::string ReplicationGrants() const;

  // The flavour called `name`, with its programs' paths. NotFound for a
  // fetched flavour whose folder is absent (the message names the fetch
  // command); InvalidArgument for an unknown name.
  static absl::StatusOr<ServerFlavour> Find(std::string_view name);
  // Every flavour tested live, oldest first.
  static const std::vector<std::string>& All();
  // The default: Debian 12's MariaDB 10.11.
  static constexpr std::string_view kDefault = "mariadb-10.11";
};

// Where fetched flavours live: $BINRELAY_SERVERS_DIR, else .servers/ in the
// source tree.
std::string ServersDir();

// In a test body: the flavour, or a failure (CI=true) / skip naming
// scripts/fetch-servers.sh when it is not fetched.
#define BINRELAY_REQUIRE_FLAVOUR(name)                                                     \
  do {                                                                                     \
    absl::StatusOr<::binrelay::testing::ServerFlavour> flavour_or_ =                       \
        ::binrelay::testing::ServerFlavour::Find(name);                                    \
    if (!flavour_or_.ok()) {                                                               \
      if (::binrelay::testing::FlavourMissingIsFailure()) {                                \
        FAIL() << flavour_or_.status();                                                    \
      }                                                                                    \
      GTEST_SKIP() << flavour_or_.status();                                                \
    }                                                                                      \
  } while (0)

// CI=true: a missing flavour fails the test instead of skipping it.
bool FlavourMissingIsFailure();

// For INSTANTIATE_TEST_SUITE_P over ServerFlavour::All(): "mysql-9.7" ->
// "mysql_9_7" (test names allow no '-' or '.').
template <typename ParamInfo>
std::string FlavourTestName(const ParamInfo& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (c == '-' || c == '.') c = '_';
  }
  return name;
}

}  // namespace binrelay::testing
