// Row keys: the primary key of a row image encoded as bytes that identify
// the row in a buffered map. The encoding is injective: every component is
// tagged by kind and either fixed-width or length-prefixed, so ("a-b", "c")
// and ("a", "b-c") never collide.
//
// Thread safety: KeyEncoder is used by one thread (it reuses a buffer).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "protocol/column_def.h"
#include "protocol/value.h"

namespace binrelay::apply {

// Appends one key component for `v` (nullptr: NULL) to `out`.
void AppendKeyComponent(const protocol::ValueView* v, std::string* out);

class KeyEncoder {
 public:
  // Replaces *out with the key of `image` (a full row image of `table`,
  // protocol/row_image.h), from the columns `primary_key` names in order.
  absl::Status Encode(std::string_view image, const protocol::TableDef& table,
                      const std::vector<uint32_t>& primary_key, std::string* out);

 private:
  std::string scratch_;
  std::vector<std::string> parts_;  // per key position, reused
};

}  // namespace binrelay::apply
