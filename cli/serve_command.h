// `binrelay serve --config FILE`: follow the source as a replica, keep a
// durable, byte-identical local copy of its binlog (the store), serve it to
// replicas, run the [apply.NAME] pipelines and [move.NAME] moves, with SQL
// and HTTP status.
// `binrelay move --config FILE`: the same machinery for one move, ending
// when the move does.
// Thread safety: runs on the main thread; SIGINT/SIGTERM stop it cleanly,
// SIGUSR1 starts a manual cutover.
#pragma once

#include <string>
#include <vector>

namespace binrelay::cli {

int RunServe(const std::vector<std::string>& args);
int RunMove(const std::vector<std::string>& args);

}  // namespace binrelay::cli
