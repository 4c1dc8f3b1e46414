#include "replication/gtid_start.h"

#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "protocol/event_type.h"
#include "protocol/gtid_events.h"
#include "protocol/status_macros.h"
#include "replication/gtid_set.h"
#include "replication/store_reader.h"

namespace binrelay::replication {

absl::StatusOr<BinlogPosition> FirstTransactionNotIn(const StoreReadSide& store,
                                                     std::string_view gtid_position) {
  std::optional<MariaGtidPosition> maria;
  std::optional<MysqlGtidSet> mysql;
  if (auto m = MariaGtidPosition::Parse(gtid_position); m.ok()) {
    maria = std::move(*m);
  } else if (auto s = MysqlGtidSet::Parse(gtid_position); s.ok()) {
    mysql = std::move(*s);
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", AV(gtid_position), "' is neither a MariaDB GTID position (domain-server-seq,...) nor "
        "a MySQL GTID set (uuid:1-5,...)"));
  }
  BR_ASSIGN_OR_RETURN(std::string file, store.FileForGtid(gtid_position));
  BR_ASSIGN_OR_RETURN(std::unique_ptr<StoreReader> reader,
                      StoreReader::Open(&store, BinlogPosition{file, 4}));
  BR_RETURN_IF_ERROR(reader->PeekAt(4).status());  // the file's format
  protocol::UuidText uuid_text;
  while (true) {
    protocol::EventView ev;
    BR_ASSIGN_OR_RETURN(StoreReader::Step step, reader->Next(&ev));
    if (step == StoreReader::Step::kCaughtUp) return reader->position();
    if (step == StoreReader::Step::kNextFile) continue;
    const uint8_t type = ev.type();
    bool contained;
    if (type == protocol::kMariaGtidEvent) {
      BR_ASSIGN_OR_RETURN(protocol::MariaGtid g, protocol::ParseMariaGtid(ev));
      contained = false;
      if (maria) {
        auto it = maria->domains().find(g.domain_id);
        contained = it != maria->domains().end() && it->second.seq >= g.seq_no;
      }
    } else if (type == protocol::kGtidEvent || type == protocol::kGtidTaggedEvent) {
      BR_ASSIGN_OR_RETURN(protocol::MysqlGtid g, protocol::ParseMysqlGtid(ev));
      contained =
          mysql && mysql->Contains(uuid_text.Of(g.sid), g.tag, static_cast<uint64_t>(g.gno));
    } else if (type == protocol::kAnonymousGtidEvent) {
      contained = false;
    } else {
      continue;
    }
    if (!contained) return BinlogPosition{reader->position().file, ev.offset};
  }
}

}  // namespace binrelay::replication
