// Subcommand dispatch for the binrelay executable.
// Thread safety: called once from main.
#pragma once

namespace binrelay::cli {

// Parses argv, runs the subcommand and returns the process exit code.
int Main(int argc, char** argv);

}  // namespace binrelay::cli
