#include "tests/harness/fixtures.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace binrelay::testing {

std::string FixturesDir() {
  const char* env = std::getenv("BINRELAY_FIXTURES_DIR");
  if (env != nullptr && *env != '\0') return env;
  std::error_code ec;
  if (std::filesystem::is_directory(BINRELAY_SHARED_FIXTURES_DIR, ec)) {
    return BINRELAY_SHARED_FIXTURES_DIR;
  }
  return BINRELAY_LOCAL_FIXTURES_DIR;
}

std::string FixturePath(const std::string& relative) { return FixturesDir() + "/" + relative; }

bool FixtureExists(std::string_view relative) {
  std::error_code ec;
  return std::filesystem::is_regular_file(FixturePath(std::string(relative)), ec);
}

bool FixtureDirExists(std::string_view relative) {
  std::error_code ec;
  return std::filesystem::is_directory(
      relative.empty() ? FixturesDir() : FixturePath(std::string(relative)), ec);
}

std::string FirstAbsentFixture(std::initializer_list<std::string_view> relatives) {
  for (std::string_view rel : relatives) {
    if (!FixtureExists(rel)) return std::string(rel);
  }
  return {};
}

std::string FixtureAbsentMessage(std::string_view relative) {
  const std::string path = relative.empty() ? FixturesDir() : FixturePath(std::string(relative));
  return "recorded fixture " + path +
         " is absent: run scripts/fetch-fixtures.sh (or set BINRELAY_FIXTURES_DIR)";
}

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot open " << path;
    return {};
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace binrelay::testing
