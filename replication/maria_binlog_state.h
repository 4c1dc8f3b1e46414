// MariaBinlogState: MariaDB's binlog state (rpl_binlog_state in MariaDB's
// sql/rpl_gtid.h): for every replication domain, the last GTID each server
// logged in it, and which of those was logged last. It is what a GTID_LIST
// event carries, and what a MariaDB primary checks a connecting replica's
// GTID position against (sql/sql_repl.cc check_slave_start_position). A
// replication position (MariaGtidPosition) keeps only each domain's last
// GTID, which is not enough after a failover: a replica at 0-1-100 is at a
// valid position of a binlog whose domain 0 last logged 0-2-150.
//
// Order is part of the value: domains and servers are kept in the order
// they first appeared, and ToGtidList() lists them as MariaDB does
// (rpl_binlog_state::get_gtid_list: per domain, its servers in that order
// with the domain's last GTID moved to the end), so an event built from it
// matches the one a MariaDB primary would send.
//
// Thread safety: plain value.
// Lifetime: owns its data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "protocol/gtid_events.h"
#include "replication/gtid_set.h"

namespace binrelay::replication {

class MariaBinlogState {
 public:
  // Replaces the state with a GTID_LIST's entries, in their order (the last
  // entry of a domain is that domain's last GTID).
  void Load(const std::vector<protocol::MariaGtidList::Entry>& entries);
  // `gtid` was logged: it becomes its server's entry and its domain's last.
  void Update(const MariaGtid& gtid);
  void Clear() { domains_.clear(); }

  bool empty() const { return domains_.empty(); }
  // The last seq_no `server_id` logged in `domain` (find_in_binlog_state).
  std::optional<uint64_t> Find(uint32_t domain, uint32_t server_id) const;
  // The last GTID logged in `domain` (lookup_domain_in_binlog_state).
  std::optional<MariaGtid> LastInDomain(uint32_t domain) const;

  // Entries in MariaDB's GTID_LIST order (see the file comment).
  std::vector<protocol::MariaGtidList::Entry> ToGtidList() const;
  // Each domain's last GTID: the @@gtid_binlog_pos this state gives.
  MariaGtidPosition ToPosition() const;
  // ToPosition().ToString() without building the position ("0-1-100,1-2-5",
  // domains ascending).
  std::string PositionString() const;
  // "0-1-5,0-2-10,1-1-3" in ToGtidList() order (@@gtid_binlog_state).
  std::string ToString() const;

  bool operator==(const MariaBinlogState& other) const;

  // "0-1-5,0-2-10" (a GTID_LIST as text, or a connect state) as entries in
  // order; duplicates are kept. Blanks around entries are allowed, an empty
  // text is no entries; anything else is InvalidArgument naming the entry.
  static absl::StatusOr<std::vector<protocol::MariaGtidList::Entry>> ParseEntries(
      std::string_view text);

 private:
  struct Domain {
    uint32_t id = 0;
    std::vector<MariaGtid> servers;  // first-appearance order
    size_t last = 0;                 // index into servers of the domain's last GTID
  };
  // Few domains, few servers each: linear search beats a hash here.
  std::vector<Domain> domains_;
};

}  // namespace binrelay::replication
