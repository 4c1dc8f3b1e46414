// binrelay entry point: a thin shell over the subcommands in cli/.
#include "cli/commands.h"

int main(int argc, char** argv) { return binrelay::cli::Main(argc, argv); }
