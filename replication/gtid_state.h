// GtidState: the GTID state of a binlog at a point, followed event by event:
// MariaDB's per-domain position (seeded by a file's GTID_LIST) or MySQL's
// executed set (seeded by PREVIOUS_GTIDS). A transaction's GTID is held as
// pending until the caller says the transaction completed (Commit), so the
// state never includes a half-stored transaction.
//
// Thread safety: none; owned by one writer.
// Lifetime: plain value; nothing returned points into events.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "protocol/event_header.h"
#include "replication/gtid_set.h"
#include "replication/maria_binlog_state.h"
#include "replication/source_gtids.h"

namespace binrelay::replication {

// The floor's rule (GtidState::SetFloor): `floor` holds the transaction
// `gtid_event` opens (a MariaDB GTID, MySQL GTID or GTID_TAGGED event).
// False for any other event and for a floor of flavour kNone. Readers of a
// store era's first file skip such transactions (StoreReader).
absl::StatusOr<bool> FloorHolds(const SourceGtids& floor, const protocol::EventView& gtid_event);
// The state a file of a store era opens with as its readers see it: its
// own opening state `opening` with the era's `floor` under it (MariaDB:
// the floor, then each entry past the floor's last in its domain; MySQL:
// the union). `opening` itself when the floor is kNone or of another
// flavour.
SourceGtids FloorMerged(const SourceGtids& floor, const SourceGtids& opening);

class GtidState {
 public:
  // Feeds one stored event. GTID_LIST / PREVIOUS_GTIDS replace the state
  // (they open a file and carry the state of everything before it); GTID
  // events become pending.
  absl::Status OnEvent(const protocol::EventView& ev);
  // The pending GTID (if any) is now part of the state.
  void Commit();
  // The pending transaction was dropped (stream restart, truncation).
  void DropPending() {
    pending_maria_.reset();
    pending_mysql_.reset();
  }
  // The state now, typed by flavour (kNone until a GTID_LIST,
  // PREVIOUS_GTIDS or GTID event was seen).
  SourceGtids gtids() const;

  // Within a store era (store_era.h) the files open before `floor`, the
  // GTIDs stored before the era, and may repeat transactions the store
  // holds (the first file does by design; a later one can, when the new
  // source logged a transaction the store lacks before repeating stored
  // ones). While a floor is set, a GTID_LIST or PREVIOUS_GTIDS adds to the
  // floor instead of replacing the state (FloorMerged), and a transaction
  // the floor holds (MariaDB: seq_no at or below the floor's last in its
  // domain, as a GTID position compares; MySQL: in the set) leaves the
  // state alone: it never goes back. The state becomes the floor at once.
  // A floor of flavour kNone is no floor.
  void SetFloor(const SourceGtids& floor);
  bool has_floor() const { return floor_.known(); }
  // The floor holds the pending transaction's GTID: a repeat of a stored
  // transaction (readers skip it).
  bool PendingIsBelowFloor() const;

 private:
  enum class Flavour { kNone, kMaria, kMysql };
  struct PendingMysql {
    std::string uuid;
    std::string tag;
    uint64_t gno = 0;
  };
  Flavour flavour_ = Flavour::kNone;
  SourceGtids floor_;
  MariaBinlogState maria_;
  MysqlGtidSet mysql_;
  std::optional<MariaGtid> pending_maria_;
  std::optional<PendingMysql> pending_mysql_;
};

}  // namespace binrelay::replication
