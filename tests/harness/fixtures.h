// Locations of the recorded fixtures and the built binary, for tests.
#pragma once

#include <string>

namespace binrelay::testing {

// Directory holding ../shared/fixtures (INDEX.md describes the files).
std::string FixturesDir();
// Path of fixture `relative` (e.g. "zongji/binlog-mysql84.events.binlog").
std::string FixturePath(const std::string& relative);
// Reads a whole file; fails the current test if it cannot.
std::string ReadFileOrDie(const std::string& path);

}  // namespace binrelay::testing
