#include "tests/harness/store_feed.h"

#include "protocol/binlog_file_reader.h"
#include "protocol/event_type.h"
#include "protocol/status_macros.h"
#include "replication/transaction_boundary.h"

namespace binrelay::testing {

absl::Status FeedBinlogFile(const std::string& data, const std::string& name, uint64_t from,
                            replication::StreamConsumer& consumer) {
  BR_ASSIGN_OR_RETURN(protocol::BinlogFileReader reader,
                      protocol::BinlogFileReader::Open(data, name));
  replication::TransactionBoundary boundary;
  protocol::EventView ev;
  while (true) {
    BR_ASSIGN_OR_RETURN(bool more, reader.Next(&ev));
    if (!more) return absl::OkStatus();
    const protocol::FormatDescription& fde = reader.framer().format();
    replication::BinlogPosition end{name, ev.offset + ev.header.event_size};
    BR_ASSIGN_OR_RETURN(bool ends, boundary.OnEvent(ev, fde, end));
    std::string cleared;
    if (ev.type() == protocol::kFormatDescriptionEvent) {
      cleared = std::string(ev.bytes);
      cleared[17] = static_cast<char>(cleared[17] & ~protocol::kFlagBinlogInUse);
      BR_ASSIGN_OR_RETURN(ev, protocol::MakeEventView(cleared, ev.has_checksum, ev.offset));
    }
    if (ev.offset < from) {
      if (ev.offset == 4 && from > 4) {
        replication::BinlogPosition artificial{name, 0};
        BR_RETURN_IF_ERROR(consumer.OnEvent({ev, fde, artificial, false}));
      }
      continue;
    }
    BR_RETURN_IF_ERROR(consumer.OnEvent({ev, fde, end, ends}));
  }
}

}  // namespace binrelay::testing
