// WriteFileAtomically: a small file replaced whole or not at all, and durable
// once the call returns: written to PATH.tmp, fsync'd, renamed over PATH, and
// the directory fsync'd, so a crash leaves either the old file or the new one.
//
// Thread safety: none per path; callers own their files.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace binrelay::replication {

// `mode` applies to a newly created file (0600 for keys); errors name the
// path and the failed step. `durable` false: still whole or not at all, but
// without the fsyncs (a file rewritten again before it matters, such as the
// store index between group commits).
absl::Status WriteFileAtomically(const std::string& path, std::string_view data, mode_t mode,
                                 bool durable = true);

}  // namespace binrelay::replication
