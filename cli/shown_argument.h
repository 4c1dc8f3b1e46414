// ShownArgument: a command-line argument as error messages may quote it.
// An argument can carry a password (`-pS3cret` in the mysql client's style,
// `--source.password=...`, a mistyped `--passwd=...`), and errors reach
// terminals, logs and CI output: the value after '=' and whatever follows
// `-p` are never shown.
#pragma once

#include <string>
#include <string_view>

namespace binrelay::cli {

std::string ShownArgument(std::string_view arg);

}  // namespace binrelay::cli
