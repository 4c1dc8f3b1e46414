#include "cli/commands.h"

#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "cli/serve_command.h"
#include "cli/shown_argument.h"
#include "cli/tail_command.h"

namespace binrelay::cli {
namespace {

constexpr const char* kUsage =
    "usage: binrelay <command> [options]\n"
    "\n"
    "commands:\n"
    "  tail   stream decoded row changes from a source or local binlog files as JSON lines\n"
    "  serve  follow a source as a replica, keep a durable byte-identical copy of its binlog,\n"
    "         and serve it to replicas, mysqlbinlog and binlog clients (and to another\n"
    "         binrelay); status over SQL and HTTP\n"
    "  move   move tables to another server while the source takes writes: copy, verify,\n"
    "         cut over (changes come from binrelay's own copy of the binlog)\n"
    "\n"
    "run `binrelay <command> --help` for the options of a command;\n"
    "`binrelay --version` prints the version\n";

}  // namespace

int Main(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h") {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string_view command = argv[1];
  if (command == "--version" || command == "-V" || command == "version") {
    std::printf("binrelay %s\n", BINRELAY_VERSION);
    return 0;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "tail") return RunTail(args);
  if (command == "serve") return RunServe(args);
  if (command == "move") return RunMove(args);
  std::fprintf(stderr, "binrelay: unknown command '%s'\n%s", ShownArgument(command).c_str(),
               kUsage);
  return 2;
}

}  // namespace binrelay::cli
