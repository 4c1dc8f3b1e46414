// Fuzz target: the my.cnf-style configuration (IniFile) and what serve and
// move make of it, including sizes and durations.
#include <cstddef>
#include <cstdint>
#include <cctype>
#include <string>
#include <string_view>

#include "cli/ini_file.h"
#include "cli/serve_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace binrelay::cli;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // Keys naming files that are read at parse time (password_file,
  // server_public_key_path) would make the fuzzer read /dev/zero or a
  // FIFO: such inputs are parsed as INI only.
  std::string lower(text);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const bool names_files =
      lower.find("file") != std::string::npos || lower.find("path") != std::string::npos;
  (void)ParseByteSize(text);
  (void)ParseDuration(text);
  auto ini = IniFile::Parse(text, "fuzz.cnf");
  if (!ini.ok() || names_files) return 0;
  (void)ParseServeConfig(*ini);
  (void)ParseMoveConfig(*ini);
  return 0;
}
