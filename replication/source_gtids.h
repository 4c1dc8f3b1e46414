// SourceGtids: the GTIDs a binlog holds at a point, typed by the source's
// flavour. MariaDB: the binlog state (every server's last GTID per domain,
// what a GTID_LIST carries and @@gtid_binlog_state prints); MySQL: the
// executed set (uuid[:tag]:intervals, what PREVIOUS_GTIDS carries and
// @@gtid_executed prints). It is the one form GTID state takes when it
// crosses a boundary (store -> readers, store -> status and admin SQL, a
// candidate source -> the failover check), so no reader tells the flavour
// from the text.
//
// A value with flavour kNone knows nothing (a file not yet past its state
// event, a source without GTIDs); an empty MariaDB or MySQL value is a
// known, empty state (a GTID_LIST or PREVIOUS_GTIDS with no entries).
//
// Thread safety: plain value.
// Lifetime: owns its data.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "protocol/event_header.h"
#include "replication/gtid_set.h"
#include "replication/maria_binlog_state.h"

namespace binrelay::replication {

enum class GtidFlavour : uint8_t { kNone, kMariaDb, kMysql };
std::string_view GtidFlavourName(GtidFlavour f);  // "none", "mariadb", "mysql"

class SourceGtids {
 public:
  SourceGtids() = default;
  explicit SourceGtids(MariaBinlogState state)
      : flavour_(GtidFlavour::kMariaDb), maria_(std::move(state)) {}
  explicit SourceGtids(MysqlGtidSet set) : flavour_(GtidFlavour::kMysql), mysql_(std::move(set)) {}

  // `text` in the form the flavour's server prints (@@gtid_binlog_state:
  // "0-1-5,0-2-10"; @@gtid_executed: "uuid:1-5,uuid2:3"). kNone takes only
  // an empty text. InvalidArgument names the bad entry.
  static absl::StatusOr<SourceGtids> Parse(GtidFlavour flavour, std::string_view text);

  GtidFlavour flavour() const { return flavour_; }
  bool known() const { return flavour_ != GtidFlavour::kNone; }
  bool is_mariadb() const { return flavour_ == GtidFlavour::kMariaDb; }
  bool is_mysql() const { return flavour_ == GtidFlavour::kMysql; }
  bool empty() const { return maria_.empty() && mysql_.empty(); }
  // Empty unless the flavour is theirs.
  const MariaBinlogState& maria() const { return maria_; }
  const MysqlGtidSet& mysql() const { return mysql_; }

  // The replication position a replica would take: MariaDB each domain's
  // last GTID (@@gtid_binlog_pos, "0-1-100,1-2-5"); MySQL the executed set.
  std::string PositionText() const;
  // The whole state: MariaDB @@gtid_binlog_state (GTID_LIST order); MySQL
  // the executed set. Parse(flavour(), StateText()) gives this value back.
  std::string StateText() const;

  bool operator==(const SourceGtids& other) const = default;

 private:
  GtidFlavour flavour_ = GtidFlavour::kNone;
  MariaBinlogState maria_;
  MysqlGtidSet mysql_;
};

// The state a GTID_LIST (MariaDB) or PREVIOUS_GTIDS (MySQL) event carries:
// the GTIDs of everything before the file it opens. InvalidArgument for any
// other event type; a malformed body is the parser's error.
absl::StatusOr<SourceGtids> GtidsOfStateEvent(const protocol::EventView& ev);

// How a candidate source's GTIDs compare with what binrelay stored: the
// check a failover makes before it follows the candidate.
struct GtidComparison {
  // The candidate holds every stored transaction: a GTID dump from the
  // stored state continues on it with no gap.
  bool contains_stored = false;
  // Stored GTIDs the candidate lacks. MariaDB: the stored domain's last GTID
  // the candidate's binlog state does not reach (what the server itself
  // checks, sql_repl.cc check_slave_start_position); MySQL: stored minus
  // candidate. "" when contains_stored.
  std::string candidate_lacks;
  // The candidate's GTIDs the store lacks. MariaDB: each domain's last GTID
  // where the candidate is past the store (or a domain the store never saw);
  // MySQL: candidate minus stored. Expected on a primary that took writes
  // after promotion; errant when contains_stored is false as well.
  std::string store_lacks;
};

// A store that knows no GTIDs (kNone) is contained in any candidate;
// otherwise flavours must match (a kNone candidate contains nothing).
GtidComparison CompareGtids(const SourceGtids& stored, const SourceGtids& candidate);

}  // namespace binrelay::replication
