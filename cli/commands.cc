#include "cli/commands.h"

#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "cli/serve_command.h"
#include "cli/tail_command.h"

namespace binrelay::cli {
namespace {

constexpr const char* kUsage =
    "usage: binrelay <command> [options]\n"
    "\n"
    "commands:\n"
    "  tail   stream decoded row changes from a source or local binlog files as JSON lines\n"
    "  serve  follow a source and keep a durable local copy of its binlog (serving replicas\n"
    "         from it is not available yet)\n"
    "\n"
    "run `binrelay <command> --help` for the options of a command\n";

}  // namespace

int Main(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h") {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string_view command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "tail") return RunTail(args);
  if (command == "serve") return RunServe(args);
  std::fprintf(stderr, "binrelay: unknown command '%s'\n%s", argv[1], kUsage);
  return 2;
}

}  // namespace binrelay::cli
