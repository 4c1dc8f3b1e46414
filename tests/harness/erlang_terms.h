// Reads the binaries (<<...>>) out of Erlang term files such as the msmp
// fixtures (*.terms), which pair decoded expectations with raw packets.
//
// Thread safety: pure functions.
// Lifetime: results are owned by the caller.
#pragma once

#include <string>
#include <vector>

namespace binrelay::testing {

// Every <<...>> binary in `text` whose elements are integers (decimal or
// 16#hex) or "strings", in file order. %-comment lines are ignored.
std::vector<std::string> ErlangBinaries(const std::string& text);

// The binaries of fixture file `relative` that are whole wire packets: their
// first 3 bytes (LE) equal their length minus the 4-byte header.
std::vector<std::string> WirePacketsFromTerms(const std::string& relative);

}  // namespace binrelay::testing
