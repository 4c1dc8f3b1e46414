// `binrelay tail`: stream decoded row changes as JSON lines (see
// apply/json_line_sink.h for the line format).
// Thread safety: runs on the main thread; SIGINT/SIGTERM stop it cleanly.
#pragma once

#include <string>
#include <vector>

namespace binrelay::cli {

// Returns the process exit code: 0 on success (--until-end reached, files
// decoded, or stopped by a signal), 1 on a runtime error, 2 on bad usage.
int RunTail(const std::vector<std::string>& args);

}  // namespace binrelay::cli
