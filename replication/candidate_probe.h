// CandidateProbe: what a failover needs to know of a server that may become
// binrelay's source: reachable or not, its flavour and identity, whether it
// takes writes, and the GTIDs its binlog holds (MariaDB @@gtid_binlog_state,
// every server's last GTID per domain; MySQL @@gtid_executed). Read with one
// short connection and one SELECT; a candidate that cannot be asked is a
// fact too (`error`), not a failure of the probe.
//
// Thread safety: ProbeCandidate may run on any thread; it blocks for at most
// the options' connect and io timeouts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "protocol/client_connection.h"
#include "replication/source_gtids.h"

namespace binrelay::replication {

struct CandidateFacts {
  std::string address;  // host:port, as configured
  absl::Status error;   // not OK: the candidate could not be asked (why)
  // It accepted binrelay's login (then `error` is about the questions): it
  // is up, and may be taking writes.
  bool connected = false;
  bool is_mariadb = false;
  std::string version;
  uint32_t server_id = 0;
  std::string server_uuid;  // MySQL; "" on MariaDB
  // @@read_only (MySQL: or @@super_read_only): the server refuses writes.
  bool read_only = true;
  bool log_bin = false;  // without a binlog there is nothing to follow
  SourceGtids gtids;
};

CandidateFacts ProbeCandidate(const protocol::ConnectOptions& options);

// Every candidate at once (one thread each), each connect capped at 2 s and
// each read at 5 s: a dead or unreachable candidate must not hold the
// decision for long, nor several add up. In the order given.
std::vector<CandidateFacts> ProbeCandidates(const std::vector<protocol::ConnectOptions>& candidates);

// "host:port" ("[::1]:3306" for IPv6): how a candidate is named and told
// apart by address (CandidateFacts::address, ChoiceOptions::left).
std::string CandidateAddress(const protocol::ConnectOptions& options);

}  // namespace binrelay::replication
