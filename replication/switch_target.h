// SwitchTarget: what an UpstreamSession needs of its consumer to follow
// another server by GTID (CHANGE MASTER TO ... MASTER_USE_GTID /
// SOURCE_AUTO_POSITION): the GTIDs the consumer holds, and the switch
// itself, which makes the consumer take the new server's `first_file` from
// its offset 4 next (BinlogStore: a new store era, store_era.h). Declared
// here, beside the session that uses it; BinlogStore implements it.
//
// Thread safety: called from the session's thread, between streams.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "replication/source_gtids.h"

namespace binrelay::replication {

class SwitchTarget {
 public:
  virtual ~SwitchTarget() = default;
  // The GTIDs of every complete transaction consumed (kNone: it knows none).
  virtual SourceGtids ConsumedGtids() const = 0;
  // Drops a transaction cut at the end and continues with `first_file` of
  // the new server (`server_id`, reached at `address`, "host:port"), read
  // from offset 4. The consumer keeps `address` for a restart to follow,
  // and `left_address` (the server followed until now) with the server_id
  // its stored files carry, never to be followed again by a failover.
  // Returns that server_id (0 if unknown).
  virtual absl::StatusOr<uint32_t> BeginSwitch(std::string_view first_file, uint32_t server_id,
                                               std::string_view address,
                                               std::string_view left_address) = 0;
  // The server followed now is reached at `address` ("host:port"), after a
  // CHANGE MASTER TO by position gave it a new one: kept for a restart to
  // follow, like BeginSwitch's. Nothing to keep before the first switch
  // ([source] host is the record then).
  virtual absl::Status RecordSourceAddress(std::string_view address) = 0;
};

}  // namespace binrelay::replication
