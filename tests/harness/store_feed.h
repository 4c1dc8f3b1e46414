// Feeding recorded binlog files to a StreamConsumer (a BinlogStore) the way
// a dump stream delivers them, for store, reader and admin tests.
//
// Thread safety: none. Lifetime: events are valid only during each OnEvent.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "replication/stream_consumer.h"

namespace binrelay::testing {

// Feeds the binlog image `data` as file `name` as a dump from name:from
// arrives: events before `from` are not sent, except the FDE, re-sent as
// artificial (end offset 0); the FDE always arrives with BINLOG_IN_USE
// cleared, as sources send it. Each event says whether it ends a transaction.
absl::Status FeedBinlogFile(const std::string& data, const std::string& name, uint64_t from,
                            replication::StreamConsumer& consumer);
inline absl::Status FeedAsDump(const std::string& data, const std::string& name, uint64_t from,
                               replication::StreamConsumer& consumer) {
  return FeedBinlogFile(data, name, from, consumer);
}

}  // namespace binrelay::testing
