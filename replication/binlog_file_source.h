// Local event sources: a binlog or relay-log file on disk (gzip-compressed
// files are inflated transparently, binlog_file_bytes.h) and a recorded replication stream
// (`*.packets.bin`: u32 length + packet payload per event, as in the zongji
// fixtures). Both feed a StreamConsumer exactly like the upstream session:
// verified events, each with the position of its end.
//
// Positions: for a binlog file, `file` is the file's base name and the end is
// offset + event_size (relay logs may carry other servers' log_pos); for a
// stream capture, they follow the source's ROTATEs and log_pos, as live.
//
// Thread safety: stateless functions; the consumer is called on the caller's
// thread.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "replication/stream_consumer.h"

namespace binrelay::replication {

// Feeds every event of the file. A file that ends inside a transaction ends
// with OnStreamRestart at the last complete transaction, so its uncommitted
// tail is dropped, not delivered.
absl::Status FeedBinlogFile(const std::string& path, StreamConsumer& consumer);
// The same over a file's bytes already in memory; `path` names it in errors.
absl::Status FeedBinlogBytes(std::string_view data, const std::string& path,
                             StreamConsumer& consumer);
absl::Status FeedPacketCapture(const std::string& path, StreamConsumer& consumer);

}  // namespace binrelay::replication
