// `binrelay serve --config FILE`: follow the source as a replica and keep a
// durable, byte-identical local copy of its binlog (the store), with an HTTP
// status endpoint. Serving that copy to replicas (the listener) is not wired
// in yet: see README.
// Thread safety: runs on the main thread; SIGINT/SIGTERM stop it cleanly.
#pragma once

#include <string>
#include <vector>

namespace binrelay::cli {

int RunServe(const std::vector<std::string>& args);

}  // namespace binrelay::cli
