// SourceView: what the serving side needs to know about binrelay's own
// source, declared here where it is used (dumps, admin statements) and
// implemented by `binrelay serve` over its upstream session.
//
// Thread safety: implementations must be callable from any io thread; calls
// must be quick (in-memory snapshots, no SQL).
// Lifetime: results are copies.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace binrelay::proxy {

class SourceView {
 public:
  virtual ~SourceView() = default;
  // binrelay may not hold everything the source has: it is not streaming
  // from it right now, or has received more than it has stored. A position
  // beyond the store is then "not stored yet" (retryable), not an error.
  virtual bool MayBeBehind() const = 0;
  // The source's global variables as last read (SHOW GLOBAL VARIABLES at
  // the upstream session's connect), lower-case names, sorted by name; null
  // before the first connect. Immutable and shared: cheap to take.
  using VariableList = std::vector<std::pair<std::string, std::string>>;
  virtual std::shared_ptr<const VariableList> Variables() const = 0;
  // One of them by lower-case name.
  std::optional<std::string> Variable(std::string_view name) const;
};

inline std::optional<std::string> SourceView::Variable(std::string_view name) const {
  std::shared_ptr<const VariableList> vars = Variables();
  if (vars == nullptr) return std::nullopt;
  auto it = std::lower_bound(vars->begin(), vars->end(), name,
                             [](const auto& v, std::string_view n) { return v.first < n; });
  if (it == vars->end() || it->first != name) return std::nullopt;
  return it->second;
}

}  // namespace binrelay::proxy
