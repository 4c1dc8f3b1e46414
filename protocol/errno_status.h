// ErrnoStatus: a failed system call as an absl::Status, the one way every
// module reports one. The message is "WHAT: strerror"; the code says what a
// caller can do about it: ENOSPC and EDQUOT are ResourceExhausted (a full
// disk or quota: free space, nothing is wrong with the data), ENOENT is
// NotFound, anything else Unknown.
#pragma once

#include <cerrno>
#include <cstring>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"

namespace binrelay {

inline absl::Status ErrnoStatus(int err, std::string_view what) {
  std::string msg = absl::StrCat(AV(what), ": ", std::strerror(err));
  switch (err) {
    case ENOSPC:
    case EDQUOT:
      return absl::ResourceExhaustedError(msg);
    case ENOENT:
      return absl::NotFoundError(msg);
    default:
      return absl::UnknownError(msg);
  }
}

// "WHAT PATH: strerror".
inline absl::Status ErrnoStatus(int err, std::string_view what, std::string_view path) {
  return ErrnoStatus(err, absl::StrCat(AV(what), " ", AV(path)));
}

}  // namespace binrelay
