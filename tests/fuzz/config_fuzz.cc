// Fuzz target: the my.cnf-style configuration (IniFile) and what serve and
// move make of it, including sizes and durations.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cli/ini_file.h"
#include "cli/serve_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace binrelay::cli;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ParseByteSize(text);
  (void)ParseDuration(text);
  auto ini = IniFile::Parse(text, "fuzz.cnf");
  if (!ini.ok()) return 0;
  (void)ParseServeConfig(*ini);
  (void)ParseMoveConfig(*ini);
  return 0;
}
