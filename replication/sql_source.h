// SqlSource: the ordinary-SQL side of a source server, as the replication
// code needs it (preflight checks, schema lookups, binlog status). The
// upstream session implements it over its own client connection; unit tests
// implement it with canned answers.
//
// Thread safety: an implementation is used from one thread at a time.
// Lifetime: returned rows are owned copies.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "protocol/text_rows.h"

namespace binrelay::replication {

using SqlRow = std::vector<std::optional<std::string>>;

class SqlSource {
 public:
  virtual ~SqlSource() = default;
  // Runs a statement and returns its rows (empty for statements without a
  // result set). A server error keeps its code in the status message as
  // "error NNNN".
  virtual absl::StatusOr<std::vector<SqlRow>> Query(std::string_view sql) = 0;
  // The same rows in one buffer (protocol/text_rows.h), for large results.
  absl::StatusOr<protocol::TextRows> QueryRows(std::string_view sql);
  // The same into `into`, emptied first, its memory reused (after an error
  // it may hold part of the result). By default converted from Query.
  virtual absl::Status QueryRowsInto(std::string_view sql, protocol::TextRows* into);
  // "host:port", for messages.
  virtual std::string Peer() const = 0;
};

// First column of the first row, or nullopt for NULL or no rows.
absl::StatusOr<std::optional<std::string>> QueryValue(SqlSource& source, std::string_view sql);

// Reads a global variable that may not exist on this flavour/version:
// "Unknown system variable" (error 1193) yields nullopt instead of an error.
absl::StatusOr<std::optional<std::string>> QueryOptionalVariable(SqlSource& source,
                                                                  std::string_view name);

}  // namespace binrelay::replication
