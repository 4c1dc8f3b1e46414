// A small reader for Erlang `file:consult` data (the msmp *.terms fixtures),
// so tests can compare binrelay's decoding with the expectation maps stored
// beside each packet instead of hand-copying them.
//
// Supported: integers (incl. negative and 16#hex), atoms (bare and 'quoted'),
// "strings" (lists of code points), binaries <<...>> of integers, "latin-1
// strings" and "utf8 strings"/utf8, lists, tuples, maps #{k => v}, and
// %-comments. The file text is UTF-8; a plain string inside a binary stores
// each code point as one byte, as Erlang does. Anything else is an error.
//
// Thread safety: pure functions. Lifetime: ErlTerm owns everything.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace binrelay::testing {

struct ErlTerm {
  enum class Kind { kInt, kAtom, kString, kBinary, kList, kTuple, kMap };
  Kind kind = Kind::kInt;
  int64_t i = 0;
  // kAtom: the name; kBinary: the bytes; kString: code points <= 255 as
  // bytes (the files only use latin-1 strings).
  std::string text;
  std::vector<ErlTerm> items;                           // list, tuple
  std::vector<std::pair<ErlTerm, ErlTerm>> map;         // map, in file order

  bool is_atom(std::string_view name) const { return kind == Kind::kAtom && text == name; }
  // Map value for atom key `key`, or nullptr.
  const ErlTerm* Find(std::string_view key) const;
  // Debug text (Erlang-like) for failure messages.
  std::string DebugString() const;
};

// Parses every top-level `Term.` in `text`.
absl::StatusOr<std::vector<ErlTerm>> ParseErlangTerms(std::string_view text);

}  // namespace binrelay::testing
