#include "cli/shown_argument.h"

namespace binrelay::cli {

std::string ShownArgument(std::string_view arg) {
  if (arg.size() > 2 && arg[0] == '-' && arg[1] == 'p') return "-p...";
  const size_t eq = arg.find('=');
  if (eq != std::string_view::npos) return std::string(arg.substr(0, eq)) + "=...";
  return std::string(arg.substr(0, 128));
}

}  // namespace binrelay::cli
