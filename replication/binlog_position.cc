#include "replication/binlog_position.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"

namespace binrelay::replication {

std::string BinlogPosition::ToString() const { return absl::StrCat(file, ":", offset); }

absl::StatusOr<StartSpec> ParseStartSpec(std::string_view text) {
  StartSpec spec;
  if (text == "current") return spec;
  if (text == "earliest") {
    spec.kind = StartSpec::Kind::kEarliest;
    return spec;
  }
  if (text.substr(0, 5) == "gtid:") {
    spec.kind = StartSpec::Kind::kGtid;
    spec.gtid_set = std::string(text.substr(5));
    return spec;
  }
  size_t colon = text.rfind(':');
  uint64_t offset = 0;
  if (colon == std::string_view::npos || colon == 0 ||
      !absl::SimpleAtoi(AV(text.substr(colon + 1)), &offset) || offset < 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad --start '", AV(text),
                     "': expected current, earliest, FILE:POS (POS >= 4) or gtid:SET"));
  }
  spec.kind = StartSpec::Kind::kPosition;
  spec.position.file = std::string(text.substr(0, colon));
  spec.position.offset = offset;
  return spec;
}

}  // namespace binrelay::replication
