#include "tests/harness/temp_dir.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace binrelay::testing {

std::string MakeTestTempDir(std::string_view name) {
  std::string tmpl = ::testing::TempDir() + "/" + std::string(name) + "_XXXXXX";
  EXPECT_NE(::mkdtemp(tmpl.data()), nullptr) << "cannot create " << tmpl;
  return tmpl;
}

}  // namespace binrelay::testing
