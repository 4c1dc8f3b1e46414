#include "protocol/binlog_file_reader.h"

#include "absl/strings/str_cat.h"
#include "protocol/event_header.h"
#include "protocol/event_type.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {

absl::StatusOr<BinlogFileReader> BinlogFileReader::Open(std::string_view data, std::string name,
                                                        EventFramer::Options options) {
  if (data.substr(0, kBinlogMagic.size()) != kBinlogMagic) {
    std::string label = name.empty() ? "binlog file" : name;
    return absl::DataLossError(absl::StrCat(
        AV(label), ": missing binlog magic FE 62 69 6E at offset 0 (", data.size(),
        " bytes); not a binlog or relay-log file"));
  }
  return BinlogFileReader(data, std::move(name), options);
}

absl::Status BinlogFileReader::Error(absl::Status s) const {
  return name_.empty() ? s : Annotate(s, name_);
}

absl::StatusOr<bool> BinlogFileReader::Next(EventView* out) {
  while (true) {
    if (pos_ == data_.size()) return false;
    const uint64_t remain = data_.size() - pos_;
    if (remain < kEventHeaderLen) {
      return Error(absl::OutOfRangeError(
          absl::StrCat("truncated event header at offset ", pos_, ": ", remain,
                       " bytes remain, 19 needed")));
    }
    auto h = ParseEventHeader(data_.substr(pos_));
    if (!h.ok()) return Error(Annotate(h.status(), absl::StrCat("event at offset ", pos_)));
    if (h->event_size > remain) {
      return Error(absl::OutOfRangeError(absl::StrCat(
          "truncated ", AV(EventTypeName(h->type)), " event at offset ", pos_, ": header says ",
          h->event_size, " bytes, ", remain, " remain")));
    }
    auto ev = framer_.Frame(data_.substr(pos_, h->event_size), pos_);
    if (!ev.ok()) return Error(ev.status());
    pos_ += h->event_size;
    if (!IsKnownEventType(ev->type())) {
      ++skipped_;  // unknown but IGNORABLE (the framer refused the rest)
      continue;
    }
    *out = *ev;
    return true;
  }
}

}  // namespace binrelay::protocol
