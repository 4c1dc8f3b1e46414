// Bytes({0x17, 1, 0}): a byte string written as numbers, for tests that
// compare wire formats byte for byte.
#pragma once

#include <initializer_list>
#include <string>

namespace binrelay::testing {

inline std::string Bytes(std::initializer_list<int> values) {
  std::string s;
  s.reserve(values.size());
  for (int v : values) s.push_back(static_cast<char>(v));
  return s;
}

}  // namespace binrelay::testing
