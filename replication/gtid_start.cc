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
  // The text is read in the stored stream's flavour: the store, not the
  // text's shape, says which GTIDs it holds.
  const GtidFlavour flavour = store.committed().gtid_state().flavour();
  if (flavour == GtidFlavour::kNone) {
    return absl::UnavailableError(absl::StrCat(
        "the store holds no GTID state yet to place GTID position '", AV(gtid_position),
        "' in; it will once the source's first binlog file is stored"));
  }
  // Read as the config check reads it (MariaGtidPosition / MysqlGtidSet:
  // blanks and empty entries allowed).
  std::optional<MariaGtidPosition> maria;
  std::optional<MysqlGtidSet> mysql;
  SourceGtids position;
  absl::Status parsed = absl::OkStatus();
  if (flavour == GtidFlavour::kMariaDb) {
    if (auto m = MariaGtidPosition::Parse(gtid_position); m.ok()) {
      MariaBinlogState state;
      for (const auto& [domain, gtid] : m->domains()) state.Update(gtid);
      position = SourceGtids(std::move(state));
      maria = *std::move(m);
    } else {
      parsed = m.status();
    }
  } else if (auto m = MysqlGtidSet::Parse(gtid_position); m.ok()) {
    position = SourceGtids(*m);
    mysql = *std::move(m);
  } else {
    parsed = m.status();
  }
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", AV(gtid_position), "' is not a ", AV(GtidFlavourName(flavour)), " GTID position (",
        flavour == GtidFlavour::kMariaDb ? "domain-server-seq,..." : "uuid:1-5,...",
        ", as the stored stream holds): ", parsed.message()));
  }
  BR_ASSIGN_OR_RETURN(std::string file, store.FileForGtid(position));
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
