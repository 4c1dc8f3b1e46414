// ChooseSource: which candidate binrelay may follow after losing its source,
// decided from each candidate's facts (candidate_probe.h) and the GTIDs the
// store holds. A candidate is followed only if
//   (a) it answered, has a binlog, and takes writes (read_only = 0), unless
//       follow_read_only allows a read-only one;
//   (b) its binlog holds every transaction binrelay stored (CompareGtids:
//       per MariaDB domain, per MySQL uuid), so a GTID dump continues on it
//       with no gap;
//   (c) no other candidate takes writes too: two writable servers are a
//       split brain, and following either could serve the replicas a
//       history the other one contradicts;
//   (d) binrelay did not leave it in an earlier switch (`left`): an old
//       primary that flaps back is not followed again by itself.
// A candidate that accepted the login but could not be asked (a missing
// grant, an unreadable answer) may be taking writes: nothing is chosen
// while one is in that state. One server named twice (a name and an
// address) counts once: candidates are told apart by server_uuid (MySQL)
// or server_id (MariaDB).
// Otherwise nothing is chosen and `refusal` says why, naming candidates and
// GTIDs. Of several that qualify (only possible with follow_read_only and
// none writable) the first in configured order is taken.
//
// Thread safety: pure function over plain values.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "replication/candidate_probe.h"
#include "replication/source_gtids.h"

namespace binrelay::replication {

struct ChoiceOptions {
  bool follow_read_only = false;
  // The store holds binlog. With no GTIDs in it (MySQL with gtid_mode =
  // OFF) nothing can be checked: no candidate is chosen.
  bool store_has_transactions = false;
  // Servers binrelay switched away from: by address (host:port) and by
  // server_id (the same server under another name is still left).
  std::vector<std::string> left;
  std::vector<uint32_t> left_server_ids;
};

struct CandidateVerdict {
  bool eligible = false;
  // "follows: holds every stored transaction", "read-only", "lacks
  // 0-2-145 that binrelay stored", "unreachable: ...".
  std::string why;
  GtidComparison gtids;  // unset when the candidate could not be asked
};

struct SourceChoice {
  std::optional<size_t> chosen;  // index into the facts
  std::vector<CandidateVerdict> verdicts;  // one per candidate, same order
  std::string refusal;  // when nothing is chosen
};

SourceChoice ChooseSource(const SourceGtids& stored, const std::vector<CandidateFacts>& facts,
                          const ChoiceOptions& options);

}  // namespace binrelay::replication
