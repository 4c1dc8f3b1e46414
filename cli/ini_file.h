// IniFile: my.cnf-style configuration text: `[section]` headers, `key = value`
// lines, `#` and `;` comments, optional single or double quotes around
// values, keys case-insensitive with '-' and '_' equivalent (as MySQL's
// option files). Every value remembers where it came from, so an invalid one
// is reported as "FILE:LINE: [section] key: ...".
//
// Thread safety: immutable after parsing.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"

namespace binrelay::cli {

class IniFile {
 public:
  struct Value {
    std::string text;
    std::string origin;  // "FILE:LINE" or "--section.key"
  };

  // Parses `text`; `name` (the file path) is used in messages.
  static absl::StatusOr<IniFile> Parse(std::string_view text, std::string_view name);
  static absl::StatusOr<IniFile> Load(const std::string& path);

  // Applies a command-line override "--section.key=value".
  absl::Status Override(std::string_view flag);

  const Value* Find(std::string_view section, std::string_view key) const;
  // Section names that start with `prefix` ("apply." -> "apply.orders"), sorted.
  std::vector<std::string> SectionsWithPrefix(std::string_view prefix) const;
  // Keys present in the file that nobody asked for: typos, reported at start.
  std::vector<std::string> UnreadKeys() const;
  // Every (section, key, value), sections and keys normalized, in order.
  template <typename F>
  void ForEachValue(F&& f) const {
    for (const auto& [k, v] : values_) f(k.first, k.second, v);
  }

 private:
  static std::string Normalize(std::string_view key);
  std::map<std::pair<std::string, std::string>, Value> values_;
  mutable std::map<std::pair<std::string, std::string>, bool> read_;
};

}  // namespace binrelay::cli
