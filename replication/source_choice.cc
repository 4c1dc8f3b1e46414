#include "replication/source_choice.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace binrelay::replication {

SourceChoice ChooseSource(const SourceGtids& stored, const std::vector<CandidateFacts>& facts,
                          const ChoiceOptions& options) {
  SourceChoice c;
  // Writable servers, each once (the same server may be listed under two
  // names).
  std::vector<std::string> writable;
  std::vector<std::string> writable_ids;
  std::vector<std::string> unknown;  // up, but their role could not be read
  for (const CandidateFacts& f : facts) {
    if (!f.error.ok()) {
      if (f.connected) unknown.push_back(absl::StrCat(f.address, " (", f.error.message(), ")"));
      continue;
    }
    if (f.read_only) continue;
    const std::string id = f.is_mariadb ? absl::StrCat(f.server_id) : f.server_uuid;
    if (std::find(writable_ids.begin(), writable_ids.end(), id) != writable_ids.end()) continue;
    writable_ids.push_back(id);
    writable.push_back(f.address);
  }
  std::vector<size_t> eligible;
  for (size_t i = 0; i < facts.size(); ++i) {
    const CandidateFacts& f = facts[i];
    CandidateVerdict v;
    if (!f.error.ok()) {
      v.why = absl::StrCat(f.connected ? "answered but could not be checked: " : "unreachable: ",
                           f.error.message());
    } else {
      v.gtids = CompareGtids(stored, f.gtids);
      const bool left =
          std::find(options.left.begin(), options.left.end(), f.address) != options.left.end() ||
          (f.server_id != 0 && std::find(options.left_server_ids.begin(),
                                         options.left_server_ids.end(),
                                         f.server_id) != options.left_server_ids.end());
      if (!f.log_bin) {
        v.why = "has no binary log (log_bin = OFF)";
      } else if (!v.gtids.contains_stored) {
        v.why = absl::StrCat("lacks ", v.gtids.candidate_lacks, " that binrelay stored");
        if (!v.gtids.store_lacks.empty()) {
          absl::StrAppend(&v.why, ", and has ", v.gtids.store_lacks,
                          " that binrelay never stored (errant transactions)");
        }
      } else if (left) {
        v.why = "binrelay switched away from it; re-point by hand (CHANGE MASTER TO) to follow "
                "it again";
      } else if (f.read_only && !options.follow_read_only) {
        v.why = "read-only (read_only = ON; set follow_read_only = on to follow a read-only "
                "server)";
      } else {
        v.eligible = true;
        v.why = v.gtids.store_lacks.empty()
                    ? std::string("holds every stored transaction")
                    : absl::StrCat("holds every stored transaction, and ", v.gtids.store_lacks,
                                   " after them");
      }
    }
    if (v.eligible) eligible.push_back(i);
    c.verdicts.push_back(std::move(v));
  }
  auto refuse_all = [&c](std::string why) {
    c.refusal = std::move(why);
    for (CandidateVerdict& v : c.verdicts) v.eligible = false;
    return c;
  };
  if (options.store_has_transactions && (!stored.known() || stored.empty())) {
    return refuse_all(
        "binrelay's store holds binlog but no GTIDs (a MySQL source with gtid_mode = OFF?): "
        "no candidate can be checked for what it stored; re-point by hand");
  }
  if (!unknown.empty()) {
    return refuse_all(absl::StrCat(
        "cannot tell whether ", absl::StrJoin(unknown, ", "),
        " takes writes: it accepted the login but did not answer the check; grant binrelay's "
        "user what SHOW RELAY SOURCES reads (@@read_only, @@gtid_binlog_state or "
        "@@gtid_executed) or remove it from [source] candidates"));
  }
  if (writable.size() > 1) {
    c.refusal = absl::StrCat(writable.size(), " candidates take writes (",
                             absl::StrJoin(writable, ", "),
                             "): following either could serve a history the other contradicts; "
                             "set read_only = ON on all but the new primary");
    for (CandidateVerdict& v : c.verdicts) {
      if (!v.eligible) continue;
      v.eligible = false;
      v.why = "not alone in taking writes";
    }
    return c;
  }
  // The one writable candidate: followed if it qualifies; if it does not,
  // a read-only one is not followed instead (the writes go elsewhere).
  for (size_t i = 0; i < facts.size(); ++i) {
    if (!facts[i].error.ok() || facts[i].read_only) continue;
    if (c.verdicts[i].eligible) {
      c.chosen = i;
      return c;
    }
    c.refusal = absl::StrCat("the one candidate taking writes, ", facts[i].address,
                             ", cannot be followed: ", c.verdicts[i].why);
    for (CandidateVerdict& v : c.verdicts) v.eligible = false;
    return c;
  }
  if (eligible.empty()) {
    std::vector<std::string> whys;
    for (size_t i = 0; i < facts.size(); ++i) {
      whys.push_back(absl::StrCat(facts[i].address, " ", c.verdicts[i].why));
    }
    c.refusal = absl::StrCat("no candidate can be followed: ", absl::StrJoin(whys, "; "));
    return c;
  }
  c.chosen = eligible.front();  // follow_read_only, none writable
  return c;
}

}  // namespace binrelay::replication
