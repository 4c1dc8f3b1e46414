// ChangeDecoder: turns a verified event stream (from the upstream session or
// a local binlog file) into row changes for the subscribed tables.
//
// For every TABLE_MAP it reads only the table id and names, asks the
// Subscription, and remembers the answer by table id. Rows events of
// unsubscribed tables are skipped after reading their table id; only
// subscribed tables are row-decoded (rows_events_decoded() counts them).
// Column names, signedness and charsets come from TABLE_MAP optional
// metadata or, where absent, from the SchemaCache; DDL on a schema drops its
// cache entries. The source marks transaction ends; the sink sees OnCommit
// at each.
//
// Thread safety: single-threaded.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "apply/change_sink.h"
#include "apply/subscription.h"
#include "protocol/gtid_events.h"
#include "protocol/row_decoder.h"
#include "protocol/row_image.h"
#include "protocol/table_map.h"
#include "replication/schema_cache.h"
#include "replication/stream_consumer.h"

namespace binrelay::apply {

struct DecoderStats {
  uint64_t rows_events_decoded = 0;
  uint64_t rows_events_skipped = 0;
  uint64_t rows = 0;
  uint64_t transactions = 0;
};

class ChangeDecoder : public replication::StreamConsumer {
 public:
  // `schema` may be null when no source is reachable (file mode).
  ChangeDecoder(const Subscription* subscription, replication::SchemaCache* schema,
                ChangeSink* sink)
      : subscription_(subscription), schema_(schema), sink_(sink) {}

  absl::Status OnEvent(const replication::StreamEvent& e) override;
  void OnStreamRestart(const replication::BinlogPosition& resume) override;

  const DecoderStats& stats() const { return stats_; }
  size_t cached_tables() const { return tables_.size(); }

  // Table ids rise at every table reopen and DDL, so the cache of TABLE_MAPs
  // is emptied at a transaction's end once it holds more than this many
  // (every transaction maps its own tables again, so nothing is lost).
  static constexpr size_t kCachedTablesAfterCommit = 4096;
  // One transaction mapping more tables than this is refused.
  static constexpr size_t kMaxTablesPerTransaction = 65536;

 private:
  struct CachedTable {
    bool subscribed = false;
    std::string raw;  // TABLE_MAP body, to skip re-parsing identical maps
    protocol::TableMap map;
  };

  absl::Status Dispatch(const protocol::EventView& event, const protocol::FormatDescription& fde,
                        const replication::BinlogPosition& end);
  absl::Status OnTableMap(const protocol::EventView& event, const protocol::FormatDescription& fde,
                          const replication::BinlogPosition& end);
  absl::Status OnRows(const protocol::EventView& event, const protocol::FormatDescription& fde,
                      const replication::BinlogPosition& end);
  absl::Status OnQuery(const protocol::EventView& event, const protocol::FormatDescription& fde,
                       const replication::BinlogPosition& end);
  absl::Status OnPayload(const protocol::EventView& event, const protocol::FormatDescription& fde,
                         const replication::BinlogPosition& end);
  // Savepoints (see the .cc): a row after one is staged until the
  // transaction ends, so that ROLLBACK TO can drop it.
  absl::Status OnSavepointStatement(std::string_view query,
                                    const replication::BinlogPosition& end);
  absl::Status Deliver(uint64_t table_id, const RowChange& change);
  absl::Status DeliverStaged();
  void ResetTransaction();

  const Subscription* subscription_;
  replication::SchemaCache* schema_;
  ChangeSink* sink_;
  absl::flat_hash_map<uint64_t, CachedTable> tables_;
  std::string_view GtidText();

  // The current transaction's GTID, kept parsed; its text is built lazily.
  enum class GtidKind : uint8_t { kNone, kMysql, kMaria };
  GtidKind gtid_kind_ = GtidKind::kNone;
  protocol::MysqlGtid mysql_gtid_;
  protocol::MariaGtid maria_gtid_;
  std::string gtid_;
  DecoderStats stats_;
  protocol::RowDecoder row_decoder_;  // reuses its buffers across events
  protocol::RowImageSplitter image_splitter_;  // for sinks that want raw images
  struct StagedRow {
    RowOp op;
    uint64_t table_id;
    std::string file;
    uint64_t pos;
    uint32_t timestamp;
    bool partial;
    std::string before;  // JSON, or the raw image for a sink that wants_images()
    std::string after;
    bool has_before;
    bool has_after;
  };
  struct Savepoint {
    std::string name;
    size_t staged;  // staged_.size() when it was set; kPassedOn: rows after it went on
  };
  // Rows held after savepoints are bounded: past this many bytes they are
  // passed on, and a ROLLBACK TO across them is refused. ORMs set a
  // SAVEPOINT in many transactions, and the server logs it even when the
  // transaction touches only InnoDB (a ROLLBACK TO then cuts the undone rows
  // out of the log itself).
  static constexpr size_t kMaxStagedBytes = 64 << 20;
  static constexpr size_t kPassedOn = static_cast<size_t>(-1);  // Savepoint::staged
  static size_t StagedSize(const StagedRow& r);  // what a staged row holds, for the bound
  std::vector<Savepoint> savepoints_;  // of the open transaction, oldest first
  std::vector<StagedRow> staged_;
  size_t staged_bytes_ = 0;
  uint64_t delivered_in_transaction_ = 0;  // rows handed to the sink directly
  bool rolled_back_ = false;  // the open transaction ends with ROLLBACK
  std::string payload_;  // decompressed TRANSACTION_PAYLOAD, reused
  std::string scratch_;  // inflated QUERY_COMPRESSED text, reused
};

}  // namespace binrelay::apply
