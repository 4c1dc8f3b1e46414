#include "proxy/relay_sources.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "replication/candidate_probe.h"
#include "replication/source_choice.h"

namespace binrelay::proxy {

ResultSet RelaySourcesResultSet(const replication::SourceGtids& stored, bool store_has_binlog,
                                const std::vector<protocol::ConnectOptions>& candidates,
                                bool follow_read_only, const FollowedSources* followed) {
  // All at once: an operator waits for this answer.
  const std::vector<replication::CandidateFacts> facts = replication::ProbeCandidates(candidates);
  replication::ChoiceOptions choice_options;
  choice_options.follow_read_only = follow_read_only;
  choice_options.store_has_transactions = store_has_binlog;
  if (followed != nullptr) {
    choice_options.left = followed->left;
    choice_options.left_server_ids = followed->left_server_ids;
  }
  const replication::SourceChoice choice = replication::ChooseSource(stored, facts, choice_options);
  const std::string decision =
      choice.chosen ? absl::StrCat("would follow ", facts[*choice.chosen].address)
                    : choice.refusal;
  ResultSet rs;
  rs.columns = {"Source",    "Current",    "Reachable", "Version", "Server_id",
                "Server_uuid", "Read_only", "Gtid_state", "Lacks",  "Beyond",
                "Eligible",  "Verdict",    "Decision"};
  for (size_t i = 0; i < facts.size(); ++i) {
    const replication::CandidateFacts& f = facts[i];
    const replication::CandidateVerdict& v = choice.verdicts[i];
    const bool up = f.error.ok();
    auto when_up = [up](std::string text) {
      return up ? std::optional<std::string>(std::move(text)) : std::nullopt;
    };
    const bool current = followed != nullptr ? f.address == followed->current : i == 0;
    rs.rows.push_back({f.address, current ? "Yes" : "No", up ? "Yes" : "No", when_up(f.version),
                       when_up(absl::StrCat(f.server_id)), when_up(f.server_uuid),
                       when_up(f.read_only ? "ON" : "OFF"), when_up(f.gtids.StateText()),
                       when_up(v.gtids.candidate_lacks), when_up(v.gtids.store_lacks),
                       v.eligible ? "Yes" : "No", v.why, decision});
  }
  return rs;
}

}  // namespace binrelay::proxy
