// A fresh directory under gtest's TempDir() for one test (the caller
// removes it in TearDown). A failure to create it fails the test.
//
// Thread safety: safe. Lifetime: returns the path by value.
#pragma once

#include <string>
#include <string_view>

namespace binrelay::testing {

std::string MakeTestTempDir(std::string_view name);

}  // namespace binrelay::testing
