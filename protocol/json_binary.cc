#include "protocol/json_binary.h"

namespace binrelay::protocol {

absl::Status AppendJsonBinaryText(std::string_view doc, std::string* out) {
  if (doc.empty()) {
    out->append("null");
    return absl::OkStatus();
  }
  return absl::UnimplementedError("binary JSON decoding not implemented yet");
}

}  // namespace binrelay::protocol
