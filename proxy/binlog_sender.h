// BinlogSender: one replica's dump, served from the BinlogStore (protocol.md
// §5). It decides everything that is sent, without touching the socket:
//
// - every file starts with a fake ROTATE; a dump starting past offset 4 gets
//   the file's FDE rewritten (log_pos 0, created 0); FDEs go out with
//   BINLOG_IN_USE cleared; stored events are sent byte for byte;
// - MariaDB GTID dumps (@slave_connect_state) start at the file the store
//   index names, skip whole groups until each requested domain's GTID is
//   passed, then send a fake GTID_LIST so the replica's position moves;
// - MySQL COM_BINLOG_DUMP_GTID skips every transaction already in the
//   replica's executed set and sends a heartbeat carrying the position
//   after a skipped run;
// - ANNOTATE_ROWS is dropped unless requested (MariaDB flag 0x02); fake
//   events carry a CRC iff the client declared @master_binlog_checksum=CRC32
//   until the first FDE, then iff that FDE's events do (mariadb-binlog reads
//   a mid-stream fake ROTATE by the FDE's algorithm);
//   a client that declared nothing gets 1236 if the binlog has checksums, as
//   from a real primary;
// - a non-blocking dump (flag 0x01 or server_id 0) ends with EOF at the
//   committed end.
//
// The dump pins its files in the store, so retention never removes what it
// still has to send, and is listed in the DumpRegistry.
//
// Thread safety: one connection uses a sender; ArmWake's callback may run on
// the store's writer thread.
// Lifetime: store, signal and registry must outlive the sender.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "proxy/commit_signal.h"
#include "proxy/dump_registry.h"
#include "proxy/dump_stream.h"
#include "proxy/replication_commands.h"
#include "replication/binlog_store.h"
#include "replication/gtid_set.h"
#include "replication/gtid_state.h"
#include "replication/store_reader.h"
#include "replication/transaction_boundary.h"

namespace binrelay::proxy {

struct BinlogSenderContext {
  replication::BinlogStore* store = nullptr;
  CommitSignal* signal = nullptr;
  DumpRegistry* registry = nullptr;
  uint32_t server_id = 0;  // binrelay's, for the events it invents
};

class BinlogSender : public DumpStream {
 public:
  // Validates the request against the store; errors carry the message the
  // replica gets with ER_MASTER_FATAL_ERROR_READING_BINLOG (1236).
  static absl::StatusOr<std::unique_ptr<BinlogSender>> Create(const BinlogSenderContext& context,
                                                              const DumpRequest& request);
  ~BinlogSender() override;

  absl::StatusOr<Progress> Fill(std::string* out, size_t budget) override;
  void AppendHeartbeat(std::string* out) override;
  void AppendError(std::string* out, uint16_t code, std::string_view message) override;
  std::chrono::nanoseconds heartbeat_period() const override { return heartbeat_; }
  bool ArmWake(std::function<void()> wake) override;
  void DisarmWake() override;

  const replication::BinlogPosition& position() const { return reader_->position(); }

 private:
  enum class Mode { kFilePosition, kMariaGtid, kMysqlGtid };
  BinlogSender(const BinlogSenderContext& context, const DumpRequest& request)
      : ctx_(context), request_(request) {}
  absl::Status Init();
  absl::Status ReadClientVariables();
  absl::Status CheckGtidStartAgainstStore(const std::string& state);
  // Routes one stored event: send, skip, or send with invented events.
  absl::Status Route(const protocol::EventView& ev, std::string* out);
  absl::Status RouteMariaGtid(const protocol::EventView& ev, std::string* out, bool* skip);
  absl::Status RouteMysqlGtid(const protocol::EventView& ev, std::string* out, bool* skip);
  void AppendFakeGtidList(std::string* out, uint64_t position);
  void AppendEvent(std::string* out, std::string_view event);

  BinlogSenderContext ctx_;
  DumpRequest request_;
  Mode mode_ = Mode::kFilePosition;
  std::unique_ptr<replication::StoreReader> reader_;
  replication::StorePin pin_;
  uint64_t registry_id_ = 0;
  std::optional<uint64_t> wake_id_;
  uint8_t seq_ = 1;  // the dump command was packet 0
  bool started_ = false;
  replication::BinlogPosition start_;

  // Whether invented events carry a CRC: what the client declared with SET
  // @master_binlog_checksum until the first FDE is sent, then that FDE's
  // algorithm (clients parse everything after an FDE by it).
  bool client_crc_ = false;
  bool client_checksum_aware_ = false;
  std::optional<int> maria_capability_;
  std::chrono::nanoseconds heartbeat_{0};

  // GTID dumps: groups are skipped until the start position is passed.
  std::map<uint32_t, replication::MariaGtid> maria_pending_;  // domain → requested GTID
  replication::MysqlGtidSet mysql_executed_;
  replication::GtidState binlog_state_;  // for the fake GTID_LIST
  replication::TransactionBoundary boundary_;
  bool skip_group_ = false;
  bool send_fake_gtid_list_ = false;
  bool heartbeat_after_skip_ = false;
};

}  // namespace binrelay::proxy
