#include "tests/harness/fixtures.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace binrelay::testing {

std::string FixturesDir() {
  if (const char* env = std::getenv("BINRELAY_FIXTURES_DIR")) return env;
  return BINRELAY_FIXTURES_DIR;
}

std::string FixturePath(const std::string& relative) { return FixturesDir() + "/" + relative; }

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
