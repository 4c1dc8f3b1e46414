// Subscription: which tables a consumer wants decoded, from patterns such as
// "db.t1", "db.*" and "*.*". The decoder consults it once per TABLE_MAP and
// caches the answer by table id, so the per-rows-event cost is one hash
// lookup, and rows of unsubscribed tables are never decoded.
//
// Thread safety: immutable after construction; share freely.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"

namespace binrelay::apply {

class Subscription {
 public:
  // Parses a comma-separated list of db.table, db.* or *.* patterns.
  // Identifiers match exactly (MySQL on Linux has case-sensitive table names
  // by default); InvalidArgument names the malformed entry.
  static absl::StatusOr<Subscription> Parse(std::string_view spec);

  bool Matches(std::string_view db, std::string_view table) const;
  // The same with ASCII letters compared without case: for a server with
  // lower_case_table_names = 1 or 2, where a statement may name a table in
  // another case than its TABLE_MAP (MySQL manual, "Identifier Case
  // Sensitivity").
  bool MatchesIgnoringCase(std::string_view db, std::string_view table) const;
  // Human form for logs, e.g. "shop.orders, crm.*".
  std::string ToString() const;

 private:
  bool all_ = false;
  absl::flat_hash_set<std::string> schemas_;  // db.* entries
  absl::flat_hash_set<std::string> tables_;   // "db\0table" keys
  absl::flat_hash_set<std::string> lower_schemas_;  // the same, ASCII-lowercased
  absl::flat_hash_set<std::string> lower_tables_;
};

}  // namespace binrelay::apply
