// The key of a table in the apply code's maps: "db\0table" (names cannot
// hold a NUL, so no two tables share a key).
#pragma once

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"

namespace binrelay::apply {

inline std::string TableKey(std::string_view db, std::string_view table) {
  return absl::StrCat(AV(db), absl::string_view("\0", 1), AV(table));
}

}  // namespace binrelay::apply
