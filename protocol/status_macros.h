// Return-if-error and assign-or-return helpers for absl::Status code.
// Thread safety: macros only. Nothing here outlives the expression it wraps.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

#define BR_CONCAT_INNER_(a, b) a##b
#define BR_CONCAT_(a, b) BR_CONCAT_INNER_(a, b)

#define BR_RETURN_IF_ERROR(expr)                 \
  do {                                           \
    ::absl::Status br_status_ = (expr);          \
    if (!br_status_.ok()) return br_status_;     \
  } while (0)

#define BR_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(*tmp)

#define BR_ASSIGN_OR_RETURN(lhs, expr) \
  BR_ASSIGN_OR_RETURN_IMPL_(BR_CONCAT_(br_statusor_, __LINE__), lhs, expr)

namespace binrelay {

// Debian's abseil is built without std::string_view aliasing, so absl::StrCat
// rejects std::string_view. Every conversion goes through this one helper.
inline absl::string_view AV(std::string_view s) { return absl::string_view(s.data(), s.size()); }
// The reverse, for absl results (Status::message(), StripAsciiWhitespace).
inline std::string_view SV(absl::string_view s) { return std::string_view(s.data(), s.size()); }

// Returns `status` with `context` prefixed to its message, keeping the code.
// Each layer adds one piece of context (peer, file:offset, event type, table).
inline absl::Status Annotate(const absl::Status& status, std::string_view context) {
  if (status.ok()) return status;
  absl::Status out(status.code(), absl::StrCat(AV(context), ": ", status.message()));
  // Keep payloads (e.g. the server error code) so callers can still inspect them.
  status.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
    out.SetPayload(url, payload);
  });
  return out;
}

}  // namespace binrelay
