// BinlogSender: one client's dump, served from the BinlogStore (MySQL
// sql/rpl_binlog_sender.cc, MariaDB sql/sql_repl.cc mysql_binlog_send),
// sending what the source would send for the same request. It decides
// everything that is sent, without touching the socket:
//
// - every file starts with a fake ROTATE; a dump starting past offset 4 gets
//   the file's FDE rewritten (log_pos 0, created 0); FDEs go out with
//   BINLOG_IN_USE cleared; stored events are sent byte for byte unless the
//   client's capability says otherwise;
// - MariaDB streams follow MariaDB's sender (maria_dump_filter.h): GTID
//   positions, strict mode, START SLAVE UNTIL, @mariadb_slave_capability
//   (events a replica cannot handle are left out or replaced by events of
//   the same length), the annotate flag, skip_replication;
// - MySQL COM_BINLOG_DUMP_GTID skips every transaction already in the
//   replica's executed set and sends a heartbeat carrying the position
//   after a skipped run;
// - fake events carry a CRC iff the client declared @master_binlog_checksum
//   =CRC32 until the first FDE, then iff that FDE's events do; a client that
//   declared nothing gets 1236 at the first FDE of a checksummed binlog, as
//   from a real primary;
// - refusals carry the source's error code (client_error.h); a position
//   binrelay has not stored yet while it is behind its source is the
//   retryable 1105, never a fatal error;
// - a non-blocking dump (flag 0x01 or server_id 0) ends with EOF at the
//   committed end.
//
// The dump pins its files in the store, so retention never removes what it
// still has to send, and is listed in the DumpRegistry, through which a
// newer dump with the same server_id ends it (MariaDB: ER_SLAVE_SAME_ID).
//
// Thread safety: one connection uses a sender; ArmWake's callback may run on
// the store's writer thread; RequestEnd may be called from any thread.
// Lifetime: store, signal, registry and source view must outlive the sender.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proxy/commit_signal.h"
#include "proxy/dump_registry.h"
#include "proxy/dump_request.h"
#include "proxy/dump_stream.h"
#include "proxy/maria_dump_filter.h"
#include "proxy/source_view.h"
#include "protocol/gtid_events.h"
#include "replication/store_read_side.h"
#include "replication/gtid_set.h"
#include "replication/store_reader.h"
#include "replication/transaction_boundary.h"

namespace binrelay::proxy {

// How long the files a disconnected replica still needed stay protected
// from retention (not from the hard cap).
inline constexpr absl::Duration kReconnectGrace = absl::Hours(1);

struct BinlogSenderContext {
  replication::StoreReadSide* store = nullptr;  // read side only: a dump never writes
  CommitSignal* signal = nullptr;
  DumpRegistry* registry = nullptr;
  uint32_t server_id = 0;  // binrelay's, for the events it invents
  // binrelay's source; null: nothing is known of it (a position beyond the
  // store may then exist there: retryable).
  const SourceView* source = nullptr;
};

class BinlogSender : public DumpStream {
 public:
  // Validates the request against the store; errors carry the error the
  // client gets (client_error.h).
  static absl::StatusOr<std::unique_ptr<BinlogSender>> Create(const BinlogSenderContext& context,
                                                              const DumpRequest& request);
  ~BinlogSender() override;

  absl::StatusOr<Progress> Fill(std::string* out, size_t budget) override;
  void AppendHeartbeat(std::string* out) override;
  void AppendError(std::string* out, const absl::Status& error) override;
  std::chrono::nanoseconds heartbeat_period() const override {
    return request_.settings.heartbeat_period;
  }
  bool ArmWake(std::function<void()> wake) override;
  void DisarmWake() override;
  // Ends the dump at its next Fill with `why` (another dump took its
  // server_id, a KILL): wakes it if it is waiting.
  void RequestEnd(absl::Status why) override;

  const replication::BinlogPosition& position() const { return reader_->position(); }

 private:
  enum class Mode { kFilePosition, kMariaGtid, kMysqlGtid };
  BinlogSender(const BinlogSenderContext& context, const DumpRequest& request)
      : ctx_(context), request_(request) {}
  absl::Status Init();
  absl::Status InitMysqlGtid(const std::vector<replication::StoreFileEntry>& files);
  absl::Status InitFilePosition(const std::vector<replication::StoreFileEntry>& files,
                                bool may_be_behind);
  // The file's FDE as this dump sends it (send_format_descriptor_event).
  absl::Status SendFde(const protocol::EventView& fde, bool mid_file_start, std::string* out);
  // Routes one stored event: send, skip, or send with invented events.
  // *finished: the UNTIL position was reached (the dump ends).
  absl::Status Route(const protocol::EventView& ev, std::string* out, bool* finished);
  absl::Status RouteMysqlGtid(const protocol::EventView& ev, std::string* out, bool* skip);
  void AppendEvent(std::string* out, std::string_view event);
  // "; the first event 'F' at P, the last event read from ..." as MariaDB and
  // MySQL append to a fatal error once a binlog was opened.
  std::string WithReadPositions(std::string_view message) const;

  BinlogSenderContext ctx_;
  DumpRequest request_;
  Mode mode_ = Mode::kFilePosition;
  bool mariadb_ = false;  // the stored stream is MariaDB's
  std::unique_ptr<replication::StoreReader> reader_;
  std::optional<MariaDumpFilter> maria_;
  replication::StorePin pin_;
  uint64_t registry_id_ = 0;
  std::optional<uint64_t> wake_id_;
  uint8_t seq_ = 1;  // the dump command was packet 0
  bool started_ = false;
  bool file_opened_ = false;  // a binlog was read: errors get read positions
  replication::BinlogPosition start_;
  uint64_t last_event_start_ = 4;
  std::string scratch_;  // a rewritten event

  // Whether invented events carry a CRC: what the client declared with SET
  // @master_binlog_checksum until the first FDE is sent, then that FDE's
  // algorithm (clients parse everything after an FDE by it).
  bool client_crc_ = false;
  bool client_checksum_aware_ = false;

  // MySQL GTID dumps: groups are skipped until the start position is passed.
  replication::MysqlGtidSet mysql_executed_;
  protocol::UuidText uuid_text_;
  replication::TransactionBoundary boundary_;
  bool skip_group_ = false;
  bool heartbeat_after_skip_ = false;

  absl::Mutex end_mu_;
  absl::Status end_ ABSL_GUARDED_BY(end_mu_);
  std::function<void()> wake_ ABSL_GUARDED_BY(end_mu_);
};

}  // namespace binrelay::proxy
