// SqlConn: one more root session on a ServerSandbox (over its Unix socket),
// for work that must not share the sandbox's own session: a workload thread
// running while the test thread kills or queries, or a query that needs the
// result's column names (SHOW SLAVE STATUS).
//
// Thread safety: a SqlConn is used by one thread at a time; separate SqlConns
// on one sandbox are independent. Lifetime: must not outlive the sandbox's
// server; everything returned is owned by the caller.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tests/harness/server_sandbox.h"

typedef struct st_mysql MYSQL;

namespace binrelay::testing {

// One row keyed by column name (NULL is nullopt).
using NamedRow = std::map<std::string, std::optional<std::string>>;

class SqlConn {
 public:
  // Multi-statement SQL is allowed ("BEGIN; ...; COMMIT").
  static absl::StatusOr<std::unique_ptr<SqlConn>> Open(const ServerSandbox& sb);
  ~SqlConn();
  SqlConn(const SqlConn&) = delete;
  SqlConn& operator=(const SqlConn&) = delete;

  // Runs every statement of `sql`; the first failing one is the error (with
  // the server's error number and message).
  absl::Status Exec(std::string_view sql);
  // The first result set of `sql`, rows keyed by column name.
  absl::StatusOr<std::vector<NamedRow>> QueryNamed(std::string_view sql);

 private:
  SqlConn() = default;
  absl::Status Error(std::string_view what, std::string_view sql);

  MYSQL* m_ = nullptr;
};

}  // namespace binrelay::testing
