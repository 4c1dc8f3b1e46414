// MariaDumpFilter: what a MariaDB primary decides for each event of a dump,
// ported from MariaDB's sql/sql_repl.cc (init_binlog_sender,
// check_slave_start_position, gtid_find_binlog_file, send_event_to_slave,
// send_events, is_until_reached), so a client reading binrelay gets the
// stream it would get from the source, event for event:
//
// - GTID dumps (@slave_connect_state): the start is checked against the
//   binlog state (every server's last GTID per domain), the start file is
//   the newest whose GTID_LIST the position has passed, and whole groups are
//   skipped until each domain's GTID is reached; then a fake GTID_LIST moves
//   the replica's position. Strict mode, ignore-duplicates and START SLAVE
//   UNTIL master_gtid_pos (@slave_until_gtid) behave as on MariaDB.
// - Replicas of a lower @mariadb_slave_capability get what they can handle:
//   ANNOTATE_ROWS only with the annotate flag (else dropped from capability
//   2, sent as-is at 1, a dummy below); GTID events as BEGIN (standalone ones
//   dropped from capability 2, dummies below); BINLOG_CHECKPOINT and
//   GTID_LIST dropped from capability 2 (dummies below) when the replica
//   does not know them. Dummies keep every position valid (compat_events.h).
// - With SET skip_replication=1 on the session, events flagged
//   LOG_EVENT_SKIP_REPLICATION_F are not sent.
//
// Errors carry the code the client gets (client_error.h): 1236 for what the
// source refuses fatally, 1105 for a malformed request or a position that
// binrelay has not stored yet while it is behind the source (retryable).
//
// Thread safety: none; one dump owns a filter.
// Lifetime: plain value; results own their bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "protocol/event_header.h"
#include "proxy/dump_request.h"
#include "replication/maria_binlog_state.h"
#include "replication/store_index.h"

namespace binrelay::proxy {

// What the store (and binrelay's view of its source) says at dump start.
struct MariaDumpStart {
  // The binlog state at the store's committed end.
  replication::MariaBinlogState binlog_state;
  // Committed files, oldest first, with the GTID_LIST each opens with.
  std::vector<replication::StoreFileEntry> files;
  uint32_t server_id = 0;  // @@server_id binrelay answers with
  // The source's @@gtid_slave_pos ("" if unknown), for a replica asking for
  // the position the source itself last applied as a replica.
  std::string own_slave_pos;
  // binrelay may be behind its source (not streaming, or not caught up):
  // a GTID beyond the store is then retryable instead of fatal.
  bool may_be_behind = false;
};

class MariaDumpFilter {
 public:
  // A file/position dump: only the capability rules apply. A GTID dump also
  // validates the position and names the file to start in (*start_file).
  static absl::StatusOr<MariaDumpFilter> Create(const DumpSettings& settings, uint16_t flags,
                                                const MariaDumpStart& start,
                                                std::string* start_file);

  enum class Action { kSend, kSendRewritten, kSkip };
  // Decides `ev` (a stored event, not the FDE). kSendRewritten: send
  // *rewritten instead. `with_crc`: the current file's events carry CRC32.
  absl::StatusOr<Action> OnEvent(const protocol::EventView& ev, bool with_crc,
                                 std::string* rewritten);
  // After OnEvent for the event ending at `end`: a fake GTID_LIST due now
  // (the replica's position moved past the requested GTID), and whether the
  // UNTIL condition is reached (then a last fake GTID_LIST with the
  // UNTIL_REACHED flag goes out and the dump ends with EOF). Fills *entries
  // and *flags for the GTID_LIST to send; false if none is due.
  bool TakeFakeGtidList(std::vector<protocol::MariaGtidList::Entry>* entries, uint32_t* flags);
  bool UntilReached(const protocol::EventView& ev, bool with_crc,
                    std::vector<protocol::MariaGtidList::Entry>* entries, uint32_t* flags);
  // A new file starts: an UNTIL already met stops after its first event.
  void OnFileStart();

  bool using_gtid() const { return using_gtid_; }
  // Every domain of the requested position has been reached (those left
  // wait only for a domain the binlog never had): a GTID dump's FDE keeps
  // its `created` field only then (a reconnecting replica must not drop its
  // temporary tables before its position).
  bool position_reached() const;

 private:
  enum class SkipGroup { kNot, kStandalone, kTransaction };
  enum class UntilGroup { kNotDone, kStopAfterStandalone, kStopAfterTransaction };
  struct Entry {
    replication::MariaGtid gtid;
    bool start_on_empty_domain = false;
    bool start_own_slave_pos = false;
  };
  // slave_connection_state: at most one GTID per domain, in request order.
  using ConnectionState = std::vector<Entry>;

  MariaDumpFilter() = default;
  absl::Status CheckStartPosition(const MariaDumpStart& start);
  absl::StatusOr<std::string> FindStartFile(const MariaDumpStart& start);
  absl::Status OnGtid(const protocol::EventView& ev);
  static Entry* FindEntry(ConnectionState& state, uint32_t domain);
  static void Remove(ConnectionState& state, uint32_t domain);

  int capability_ = 0;
  bool send_annotate_ = false;
  bool skip_replication_ = false;
  bool using_gtid_ = false;
  bool strict_ = false;
  bool ignore_duplicates_ = false;
  ConnectionState state_;
  std::optional<ConnectionState> until_;
  // The state the fake GTID_LISTs report: loaded from GTID_LIST events
  // (with UNTIL) and updated by each GTID while skipping.
  replication::MariaBinlogState until_binlog_state_;
  replication::MariaBinlogState store_state_;  // for START_ON_EMPTY_DOMAIN re-checks
  SkipGroup skip_ = SkipGroup::kNot;
  UntilGroup until_group_ = UntilGroup::kNotDone;
  bool fake_gtid_list_due_ = false;
  bool may_be_behind_ = false;
};

}  // namespace binrelay::proxy
