// FeedAsDump: feeds the events of a recorded binlog file to a StreamConsumer
// the way a source's dump from `name`:`from` delivers them: events before
// `from` are not sent except the FDE (re-sent as artificial, log_pos 0), and
// the FDE always arrives with BINLOG_IN_USE cleared. Used to build stores
// from fixtures.
//
// Thread safety: none. Lifetime: nothing is retained.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "replication/stream_consumer.h"

namespace binrelay::testing {

absl::Status FeedAsDump(const std::string& data, const std::string& name, uint64_t from,
                        replication::StreamConsumer& consumer);

}  // namespace binrelay::testing
