#include "replication/upstream_session.h"

#include <algorithm>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "protocol/control_events.h"
#include "protocol/byte_cursor.h"
#include "replication/binlog_status.h"
#include "protocol/event_type.h"
#include "protocol/server_error.h"
#include "protocol/status_macros.h"
#include "replication/dump_commands.h"
#include "replication/gtid_set.h"
#include "replication/candidate_probe.h"
#include "replication/source_choice.h"
#include "replication/switch_point.h"
#include "spdlog/spdlog.h"

namespace binrelay::replication {
namespace {

using Clock = std::chrono::steady_clock;

// Server errors that mean "this connection ended", not "this request is
// wrong": killed by an operator, server shutting down, network loss.
bool IsRetryable(const absl::Status& status) {
  if (absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status)) return true;
  // The consumer's disk is full: keep retrying, appending resumes when
  // space returns (the store lost nothing it had made durable).
  if (absl::IsResourceExhausted(status)) return true;
  if (auto err = protocol::GetServerError(status)) {
    switch (err->code) {
      case 1040:  // ER_CON_COUNT_ERROR: too many connections, for now
      case 1053:  // ER_SERVER_SHUTDOWN
      case 1317:  // ER_QUERY_INTERRUPTED
      case 1927:  // ER_CONNECTION_KILLED (MariaDB)
      case 2013:  // CR_SERVER_LOST
        return true;
      default:
        return false;
    }
  }
  return false;
}

// Binlog file names share a base and differ in a zero-padded counter whose
// width can grow; compare by length first, then bytes.
int CompareFiles(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a.compare(b);
}

}  // namespace

UpstreamSession::UpstreamSession(UpstreamOptions options, StreamConsumer* consumer)
    : options_(std::move(options)),
      consumer_(consumer),
      left_(options_.left),
      left_server_ids_(options_.left_server_ids),
      followed_address_(CandidateAddress(options_.connect)),
      repointed_(options_.source_from_store) {
  stats_.source_switches.store(options_.switches_before);
  absl::MutexLock lock(&status_mu_);
  connect_snapshot_ = options_.connect;
  followed_snapshot_ = options_.connect;
  last_switch_ = options_.last_switch_before;
  left_snapshot_ = left_;
  left_ids_snapshot_ = left_server_ids_;
}

UpstreamSession::~UpstreamSession() = default;

std::string UpstreamSession::Where() const {
  return absl::StrCat("source ", options_.connect.host, ":", options_.connect.port, " at ",
                      current_.file.empty() ? std::string("start") : current_.ToString());
}

absl::Status UpstreamSession::Command(std::string_view payload, std::string_view what) {
  BR_RETURN_IF_ERROR(conn_->WriteCommand(payload));
  BR_ASSIGN_OR_RETURN(std::string_view reply, conn_->ReadPacket(options_.connect.io_timeout));
  if (!reply.empty() && static_cast<uint8_t>(reply[0]) == 0xFF) {
    return Annotate(protocol::ErrPacketToStatus(reply, conn_->peer()), what);
  }
  return absl::OkStatus();
}

absl::Status UpstreamSession::ConnectAndPrepare(bool first) {
  BR_ASSIGN_OR_RETURN(conn_, protocol::ClientConnection::Connect(options_.connect));
  ConnectionSqlSource sql(conn_.get());
  if (first || rerun_preflight_) {
    BR_ASSIGN_OR_RETURN(info_, RunPreflight(sql, {.replica_server_id = options_.server_id,
                                                   .require_full_row_image =
                                                       options_.require_full_row_image}));
    for (const std::string& w : info_.warnings) spdlog::warn("{}", w);
    {
      absl::MutexLock lock(&status_mu_);
      info_snapshot_ = info_;
    }
    spdlog::info("connected to {} ({}), server_id {}, binlog_checksum {}", conn_->peer(),
                 info_.version, info_.server_id, info_.checksum_crc32 ? "CRC32" : "NONE");
    rerun_preflight_ = false;
  }
  if (options_.read_source_variables) BR_RETURN_IF_ERROR(ReadSourceVariables(sql));
  // Declare checksum awareness (otherwise a CRC32 source refuses the dump)
  // and ask for heartbeats so a dead connection is noticed (as
  // get_master_version_and_clock in sql/rpl_replica.cc and sql/slave.cc).
  uint64_t hb_ns = static_cast<uint64_t>(options_.heartbeat_period.count()) * 1000000;
  BR_RETURN_IF_ERROR(
      sql.Query(absl::StrCat("SET @master_binlog_checksum = @@global.binlog_checksum, "
                             "@source_binlog_checksum = @@global.binlog_checksum, "
                             "@master_heartbeat_period = ", hb_ns,
                             ", @source_heartbeat_period = ", hb_ns))
          .status());
  if (info_.is_mariadb) {
    BR_RETURN_IF_ERROR(sql.Query("SET @mariadb_slave_capability = 4").status());
  }
  if (first) BR_RETURN_IF_ERROR(ResolveStart());
  if (switch_pending_) BR_RETURN_IF_ERROR(SwitchByGtid(sql));
  RegisterReplica reg;
  reg.server_id = options_.server_id;
  reg.report_host = "binrelay";
  return Command(BuildRegisterSlave(reg), "registering as a replica (COM_REGISTER_SLAVE)");
}

absl::Status UpstreamSession::ReadSourceVariables(SqlSource& sql) {
  BR_ASSIGN_OR_RETURN(std::vector<SqlRow> rows, sql.Query("SHOW GLOBAL VARIABLES"));
  auto vars = std::make_shared<VariableList>();
  vars->reserve(rows.size());
  for (const SqlRow& row : rows) {
    if (row.size() < 2 || !row[0]) continue;
    vars->emplace_back(absl::AsciiStrToLower(*row[0]), row[1].value_or(""));
  }
  std::sort(vars->begin(), vars->end());
  absl::MutexLock lock(&status_mu_);
  source_variables_ = std::move(vars);
  return absl::OkStatus();
}

absl::Status UpstreamSession::ResolveStart() {
  ConnectionSqlSource sql(conn_.get());
  if (options_.until_end) {
    BR_ASSIGN_OR_RETURN(end_, ReadBinlogStatus(sql));
    spdlog::info("--until-end: stopping at {}", end_->ToString());
  }
  switch (options_.start.kind) {
    case StartSpec::Kind::kCurrent: {
      BR_ASSIGN_OR_RETURN(BinlogPosition pos, ReadBinlogStatus(sql));
      if (options_.whole_files) pos.offset = 4;
      boundary_.Reset(pos);
      break;
    }
    case StartSpec::Kind::kEarliest: {
      BR_ASSIGN_OR_RETURN(std::vector<SqlRow> logs, sql.Query("SHOW BINARY LOGS"));
      if (logs.empty() || logs[0].empty() || !logs[0][0]) {
        // A server with binary logging has a file; a relay that has stored
        // nothing yet has none, for now.
        return absl::UnavailableError(
            absl::StrCat("SHOW BINARY LOGS on ", conn_->peer(), " lists no binlog files yet"));
      }
      boundary_.Reset({*logs[0][0], 4});
      break;
    }
    case StartSpec::Kind::kPosition:
      boundary_.Reset(options_.start.position);
      break;
    case StartSpec::Kind::kGtid:
      break;  // the dump command carries the GTID state
  }
  return absl::OkStatus();
}

absl::Status UpstreamSession::StartDump() {
  // Flag 0x02: MariaDB sends ANNOTATE_ROWS; MySQL sends HEARTBEAT_V2. Always
  // asked for: a store keeps the binlog byte for byte, and a MariaDB 11.4+
  // source leaves end_log_pos 0 inside transactions, so every event of the
  // file must arrive for positions to be counted (one skipped ANNOTATE_ROWS
  // would shift every position after it in its transaction).
  uint16_t flags = kDumpFlag02;
  if (options_.until_end) flags |= kDumpNonBlock;
  protocol::EventFramer::Options framing;
  framing.out_of_band_checksum = info_.checksum_crc32
                                     ? protocol::EventFramer::OutOfBandChecksum::kCrc32
                                     : protocol::EventFramer::OutOfBandChecksum::kOff;
  framer_ = protocol::EventFramer(framing);
  counted_positions_ = false;
  positioned_since_dump_ = false;
  semi_sync_active_ = false;
  conn_->set_check_sequence(true);
  if (options_.semi_sync) {
    // sql/semisync_master.cc: the dump thread checks the connection's
    // @rpl_semi_sync_slave (MySQL 8.0.26+'s rpl_semi_sync_source plugin:
    // @rpl_semi_sync_replica). MySQL's newer plugin names its switch
    // rpl_semi_sync_source_enabled (the only one left in 8.4+); MariaDB's
    // built-in one and MySQL's older plugin rpl_semi_sync_master_enabled.
    ConnectionSqlSource sql(conn_.get());
    absl::StatusOr<std::vector<SqlRow>> enabled =
        absl::NotFoundError("rpl_semi_sync_source_enabled");
    if (!info_.is_mariadb) enabled = sql.Query("SELECT @@GLOBAL.rpl_semi_sync_source_enabled");
    if (!enabled.ok()) enabled = sql.Query("SELECT @@GLOBAL.rpl_semi_sync_master_enabled");
    if (enabled.ok() && !enabled->empty() && (*enabled)[0][0] == "1") {
      BR_RETURN_IF_ERROR(
          sql.Query("SET @rpl_semi_sync_slave = 1, @rpl_semi_sync_replica = 1").status());
      semi_sync_active_ = true;
      // The source may restart its packet numbering after reading an ACK
      // (net.pkt_nr_can_be_reset in MariaDB sql/semisync_master.cc).
      conn_->set_check_sequence(false);
    } else {
      spdlog::warn("semi_sync = on but {} does not have semi-synchronous replication on "
                   "(rpl_semi_sync_master_enabled, or MySQL's rpl_semi_sync_source_enabled); "
                   "streaming without acknowledgements", conn_->peer());
    }
  }
  const BinlogPosition& resume = boundary_.last_boundary();
  std::string cmd;
  // After a GTID start the source skips to the GTID without telling us
  // where; positions before the first delivered transaction would re-send
  // what it skipped. Until then a reconnect repeats the GTID request.
  if (options_.start.kind != StartSpec::Kind::kGtid) position_trusted_ = true;
  if (position_trusted_ && !resume.file.empty()) {
    if (resume.offset > 0xFFFFFFFFull) {
      return absl::UnimplementedError(absl::StrCat(
          "cannot resume at ", resume.ToString(),
          ": COM_BINLOG_DUMP positions are 32-bit; start from a GTID instead"));
    }
    current_ = resume;
    {
      // What a restarted or reconnected relay has is received, even before
      // the source sends anything new (SHOW REPLICA STATUS, /status).
      absl::MutexLock lock(&status_mu_);
      received_ = resume;
    }
    cmd = BuildBinlogDump(options_.server_id, resume.file, static_cast<uint32_t>(resume.offset),
                          flags);
  } else if (info_.is_mariadb) {
    BR_ASSIGN_OR_RETURN(MariaGtidPosition gtid, MariaGtidPosition::Parse(options_.start.gtid_set));
    ConnectionSqlSource sql(conn_.get());
    BR_RETURN_IF_ERROR(sql.Query(absl::StrCat("SET @slave_connect_state = '", gtid.ToString(),
                                              "', @slave_gtid_strict_mode = 1"))
                           .status());
    cmd = BuildBinlogDump(options_.server_id, "", 4, flags);
  } else {
    BR_ASSIGN_OR_RETURN(MysqlGtidSet gtid, MysqlGtidSet::Parse(options_.start.gtid_set));
    cmd = BuildBinlogDumpGtid(options_.server_id, "", 4, flags, gtid.Encode());
  }
  spdlog::info("dumping from {}", resume.file.empty()
                                      ? absl::StrCat("gtid ", options_.start.gtid_set)
                                      : resume.ToString());
  return conn_->WriteCommand(cmd);
}

bool UpstreamSession::ReachedEnd(const BinlogPosition& pos) const {
  if (!end_) return false;
  int c = CompareFiles(pos.file, end_->file);
  return c > 0 || (c == 0 && pos.offset >= end_->offset);
}

absl::Status UpstreamSession::HandleEvent(std::string_view bytes) {
  // The framer checks the size, decides CRC presence (FDE rules; the fake
  // ROTATE follows the checksum we negotiated) and verifies every CRC32.
  auto framed = framer_.Frame(bytes, current_.offset);
  if (!framed.ok()) return Annotate(framed.status(), Where());
  const protocol::EventView& view = *framed;
  const protocol::EventHeader& header = view.header;
  const protocol::FormatDescription& fde =
      framer_.has_format() ? framer_.format() : no_format_;
  stats_.events.fetch_add(1, std::memory_order_relaxed);
  stats_.bytes.fetch_add(bytes.size(), std::memory_order_relaxed);

  if (header.type == protocol::kRotateEvent) {
    auto rotate = protocol::ParseRotate(view);
    if (!rotate.ok()) return Annotate(rotate.status(), absl::StrCat("ROTATE event at ", Where()));
    const uint64_t pos = rotate->position;
    const std::string_view name = rotate->next_file;
    if (!header.artificial() && header.log_pos != 0) {
      // A real ROTATE closes the old file; it is that file's last event.
      BinlogPosition end{current_.file, header.log_pos};
      BR_ASSIGN_OR_RETURN(bool ends, boundary_.OnEvent(view, fde, end));
      BR_RETURN_IF_ERROR(consumer_->OnEvent(
          {view, fde, end, ends, conn_->buffered() > 0 && !force_durable_}));
    } else {
      BR_RETURN_IF_ERROR(consumer_->OnEvent({view, fde, BinlogPosition{std::string(name), 0},
                                             false}));
    }
    current_ = BinlogPosition{std::string(name), pos};
    counted_positions_ = false;
    artificial_ = BinlogPosition{current_.file, 0};
    if (!boundary_.in_transaction()) boundary_.Reset(current_);
    return absl::OkStatus();
  }
  if (header.type == protocol::kHeartbeatEvent || header.type == protocol::kHeartbeatEventV2) {
    // The source is idle at current_; nothing to deliver.
    if (!boundary_.in_transaction() && ReachedEnd(current_)) done_ = true;
    return absl::OkStatus();
  }
  last_event_ns_.store(absl::GetCurrentTimeNanos(), std::memory_order_relaxed);
  // Positions are passed by reference to long-lived members: no string copy
  // per event on this path.
  const BinlogPosition* end = &artificial_;
  if (!header.artificial()) {
    if (header.log_pos != 0) {
      // After counted positions, the next real one must agree: otherwise an
      // event of the file did not reach us, and the positions counted since
      // (printed by tail, stored) would be wrong.
      if (counted_positions_ && current_.offset + header.event_size != header.log_pos) {
        return absl::DataLossError(absl::StrCat(
            AV(protocol::EventTypeName(header.type)), " event ending at ", current_.file, ":",
            header.log_pos, " follows events whose end_log_pos 0 was counted up to ",
            current_.offset, ": the source skipped an event of its binlog in the stream (",
            Where(), "); set binlog_legacy_event_pos=ON on the source and report this"));
      }
      counted_positions_ = false;
      positioned_since_dump_ = true;
      current_.offset = header.log_pos;
      end = &current_;
    } else if (boundary_.in_transaction() && positioned_since_dump_) {
      counted_positions_ = true;
      // MariaDB 11.4+ with binlog_legacy_event_pos=OFF (the default) writes
      // end_log_pos 0 in the events inside a transaction. They follow the
      // event before them in the file, so their end is counted, as the
      // replica's IO thread counts it (sql/slave.cc, queue_event: the master
      // position advances by each event's length). Outside a transaction a 0
      // still marks an event that is not in the file (the FDE resent at a
      // dump's start, the fake GTID list), and so does one before this
      // dump's first real position (a dump resumed after a connection lost
      // mid-transaction begins with such an FDE).
      current_.offset += header.event_size;
      end = &current_;
    }
  }
  bool boundary = false;
  if (end->offset != 0) {
    BR_ASSIGN_OR_RETURN(boundary, boundary_.OnEvent(view, fde, *end));
  }
  if (absl::Status s = consumer_->OnEvent(
          {view, fde, *end, boundary, conn_->buffered() > 0 && !force_durable_});
      !s.ok()) {
    return Annotate(s, Where());
  }
  // The re-pointed source delivered an event that is in its file (past the
  // dump's start and the consumer's checks): its settings work.
  if (end->offset != 0) repointed_ = false;
  // The store accepted the server's binlog: an event of a file, or the
  // format description a dump resumed inside the stored file re-sends, if
  // the store compared it with its own (an idle source sends nothing else
  // after a CHANGE MASTER TO by position; one it could not compare, after
  // a closed file, proves nothing).
  if (!followed_published_ &&
      (end->offset != 0 ||
       (header.type == protocol::kFormatDescriptionEvent && consumer_->ResumeVerified()))) {
    PublishFollowed();
  }
  if (boundary) {
    position_trusted_ = true;
    absl::MutexLock lock(&status_mu_);
    received_ = *end;
  }
  if (boundary && ReachedEnd(*end)) done_ = true;
  return absl::OkStatus();
}

absl::Status UpstreamSession::SendSemiSyncAck() {
  // The event is in the store (synced: it was delivered with more_buffered
  // false). ACK: 0xEF, the 8-byte position after it, the file name
  // (sql/semisync_slave.cc slave_reply), as a new packet numbered 0.
  std::string ack(1, '\xEF');
  for (int i = 0; i < 8; ++i) ack.push_back(static_cast<char>((current_.offset >> (8 * i)) & 0xFF));
  ack.append(current_.file);
  stats_.semi_sync_acks.fetch_add(1, std::memory_order_relaxed);
  return Annotate(conn_->WriteOutOfBand(ack), absl::StrCat("semi-sync ACK at ", Where()));
}

absl::Status UpstreamSession::Stream() {
  // Heartbeats arrive every heartbeat_period when the source is idle; three
  // missed ones mean the connection is dead even if TCP has not noticed.
  auto read_timeout = std::max<std::chrono::milliseconds>(options_.heartbeat_period * 3,
                                                          std::chrono::milliseconds(5000));
  if (end_ && !boundary_.last_boundary().file.empty() && ReachedEnd(boundary_.last_boundary())) {
    done_ = true;  // nothing between the start and the end of binlog
    return absl::OkStatus();
  }
  // Reads wait in short slices so RequestStop() (SIGTERM) is honoured within
  // one slice even while the source is idle; a timed-out read leaves the
  // connection usable. The connection is dead only after read_timeout
  // without any packet.
  const auto slice = std::min<std::chrono::milliseconds>(read_timeout,
                                                         std::chrono::milliseconds(200));
  auto last_packet = Clock::now();
  while (!stop_.load(std::memory_order_relaxed) && !done_) {
    if (paused_.load(std::memory_order_relaxed)) {
      left_for_pause_ = true;
      break;
    }
    auto packet = conn_->ReadPacket(slice);
    if (!packet.ok()) {
      if (absl::IsDeadlineExceeded(packet.status()) &&
          Clock::now() - last_packet < read_timeout) {
        continue;
      }
      return Annotate(packet.status(), absl::StrCat("reading the binlog stream from ", Where()));
    }
    last_packet = Clock::now();
    std::string_view p = *packet;
    if (p.empty()) return absl::DataLossError(absl::StrCat("empty packet from ", Where()));
    uint8_t first = static_cast<uint8_t>(p[0]);
    if (first == 0x00 && semi_sync_active_) {
      // 0xEF, then 0x01 when the source waits for an ACK of this event
      // (sql/semisync.h kPacketMagicNum, kPacketFlagSync).
      if (p.size() < 3 || static_cast<uint8_t>(p[1]) != 0xEF) {
        return absl::DataLossError(absl::StrCat("semi-sync event packet without its 0xEF header "
                                                "at ", Where()));
      }
      force_durable_ = (static_cast<uint8_t>(p[2]) & 0x01) != 0;
      absl::Status handled = HandleEvent(p.substr(3));
      const bool ack = force_durable_;
      force_durable_ = false;
      BR_RETURN_IF_ERROR(handled);
      if (ack) BR_RETURN_IF_ERROR(SendSemiSyncAck());
    } else if (first == 0x00) {
      BR_RETURN_IF_ERROR(HandleEvent(p.substr(1)));
    } else if (first == 0xFE && p.size() < 9) {
      // EOF. For a non-blocking dump (--until-end) it marks the source's end
      // of binlog. A blocking dump only ends like this when the source shuts
      // down: a lost connection, retried like any other.
      if (!options_.until_end) {
        return absl::UnavailableError(
            absl::StrCat("source ended the binlog dump (shutting down?) at ", Where()));
      }
      done_ = true;
    } else if (first == 0xFF) {
      return Annotate(protocol::ErrPacketToStatus(p, conn_->peer()),
                      absl::StrCat("binlog dump at ", Where()));
    } else {
      return absl::DataLossError(absl::StrCat("unexpected packet type 0x", absl::Hex(first),
                                              " in the binlog stream from ", Where()));
    }
  }
  return absl::OkStatus();
}

absl::Status UpstreamSession::Run() {
  bool first = true;
  bool connected_once = false;
  bool authenticated_once = false;  // the source accepted our credentials
  std::chrono::milliseconds backoff(100);
  Clock::time_point lost_since{};  // valid while `lost`
  bool lost = false;
  Clock::time_point next_failover_probe{};
  while (!stop_.load()) {
    if (paused_.load()) {
      state_.store(State::kPaused);
      spdlog::info("upstream: stopped; the store ends at {} (START SLAVE resumes there)",
                   boundary_.last_boundary().ToString());
      {
        // RequestStop runs in signal handlers: it only sets stop_, which
        // this wait checks between slices.
        absl::MutexLock l(&pause_mu_);
        while (paused_.load() && !stop_.load()) {
          pause_cv_.WaitWithTimeout(&pause_mu_, absl::Milliseconds(200));
        }
      }
      if (stop_.load()) break;
      {
        absl::MutexLock lock(&status_mu_);
        if (repoint_) {
          // A failover chose the server already (its switch not made yet):
          // a CHANGE MASTER TO that keeps its address (a new password)
          // keeps the switch; one to another address is by position unless
          // it says MASTER_USE_GTID.
          const bool same_server = CandidateAddress(*repoint_) == CandidateAddress(options_.connect);
          options_.connect = *std::move(repoint_);
          repoint_.reset();
          followed_published_ = false;
          repointed_ = rerun_preflight_ = true;
          // Once: a later CHANGE MASTER TO (a new password) is by position.
          switch_pending_ = repoint_by_gtid_ || (same_server && switch_pending_);
          repoint_by_gtid_ = false;
        }
        last_error_.clear();  // as START SLAVE clears Last_IO_Error
      }
      spdlog::info("upstream: START SLAVE; connecting to {}", Where());
      state_.store(connected_once ? State::kReconnecting : State::kConnecting);
      lost = false;
      backoff = std::chrono::milliseconds(100);
    }
    left_for_pause_ = false;
    absl::Status s = ConnectAndPrepare(first);
    if (conn_) authenticated_once = true;  // set only by a connect that authenticated
    if (s.ok()) s = StartDump();
    if (s.ok()) {
      state_.store(State::kStreaming);
      // The server whose files the store continues (a new address of the
      // same server after CHANGE MASTER TO by position, too).
      followed_address_ = CandidateAddress(options_.connect);
      last_logged_failure_.clear();  // a new outage is logged at once
      last_logged_refusal_.clear();
      {
        absl::MutexLock lock(&status_mu_);
        failover_refusal_.clear();
      }
      connected_once = true;
      lost = false;
      backoff = std::chrono::milliseconds(100);
      s = Stream();
    }
    if (s.ok() && left_for_pause_ && !stop_.load()) {
      // STOP SLAVE: leave the stream as after a lost connection (the
      // consumer drops a transaction cut here) and wait at the top.
      if (conn_) conn_->Quit();
      conn_.reset();
      consumer_->OnStreamRestart(boundary_.last_boundary());
      first = !connected_once;
      continue;
    }
    if (s.ok()) break;  // done or stopped
    {
      absl::MutexLock lock(&status_mu_);
      last_error_ = std::string(s.message());
    }
    // A first connection that fails before the source accepted us is a
    // configuration problem (wrong host, port, or TLS): say so now. A relay
    // may instead wait for its source to come up, or to have a binlog at
    // all, as an empty relay of a relay has not. Lost after authenticating,
    // during the preflight or the dump request, it is the network's doing:
    // retried like a lost stream.
    if (repointed_ && !IsRetryable(s)) {
      // After CHANGE MASTER TO: the operator's settings are at fault (or the
      // server they name), not binrelay's: stop as a server's IO thread
      // does, keep serving, and wait for the next CHANGE MASTER / START.
      spdlog::error("upstream: after CHANGE MASTER TO: {}; stopped (fix it with CHANGE MASTER "
                    "TO, then START SLAVE)", std::string(s.message()));
      if (conn_) conn_->Quit();
      conn_.reset();
      paused_.store(true);
      consumer_->OnStreamRestart(boundary_.last_boundary());
      continue;
    }
    if ((!connected_once && !authenticated_once && !options_.retry_first_connect) ||
        !IsRetryable(s)) {
      state_.store(State::kStopped);
      if (conn_) conn_->Quit();
      if (!absl::StrContains(s.message(), options_.connect.host)) s = Annotate(s, Where());
      return s;
    }
    if (conn_) conn_.reset();
    state_.store(State::kReconnecting);
    if (!lost) {
      lost = true;
      lost_since = Clock::now();
    }
    if (Clock::now() - lost_since > options_.reconnect_timeout) {
      state_.store(State::kStopped);
      return absl::UnavailableError(absl::StrCat(
          "lost the connection to ", Where(), " and could not resume for ",
          options_.reconnect_timeout.count() / 1000, "s; last error: ", s.message()));
    }
    // Failover armed: the wait ends when the source has been lost for
    // failover_after, and is never longer than a probe interval after.
    const bool failover_armed =
        options_.failover_after.count() > 0 && options_.switch_target != nullptr;
    const auto probe_every = std::min(options_.failover_after, kFailoverProbeEvery);
    auto nap = backoff;
    if (failover_armed) {
      const auto until_due = std::chrono::duration_cast<std::chrono::milliseconds>(
          lost_since + options_.failover_after - Clock::now());
      nap = std::min(backoff, until_due.count() > 0 ? until_due : probe_every);
    }
    // The same failure every half second, for as long as a source stays
    // down waiting for a person: logged when it changes, then once a minute.
    const std::string what(s.message());
    if (what != last_logged_failure_ || Clock::now() - last_logged_at_ >= std::chrono::minutes(1)) {
      spdlog::warn("{}; reconnecting in {} ms and resuming after the last complete transaction "
                   "({})", what, nap.count(), boundary_.last_boundary().ToString());
      last_logged_failure_ = what;
      last_logged_at_ = Clock::now();
    }
    for (auto slept = std::chrono::milliseconds(0);
         slept < nap && !stop_.load() && !paused_.load();
         slept += std::chrono::milliseconds(50)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // stays responsive to stop
    }
    backoff = std::min(backoff * 2, options_.max_backoff);
    stats_.reconnects.fetch_add(1);
    // Not after STOP SLAVE or a stop: the operator (or the shutdown) has
    // the upstream now.
    if (failover_armed && !paused_.load() && !stop_.load() &&
        Clock::now() - lost_since >= options_.failover_after &&
        Clock::now() >= next_failover_probe) {
      next_failover_probe = Clock::now() + probe_every;
      std::string refusal = TryFailover();
      absl::MutexLock lock(&status_mu_);
      failover_refusal_ = std::move(refusal);
    }
    if (std::optional<BinlogPosition> r = consumer_->ResumeAfterFailure();
        r && !r->file.empty() && !(*r == boundary_.last_boundary())) {
      spdlog::warn("the consumer kept only up to {}; resuming there", r->ToString());
      boundary_.Reset(*r);
    }
    consumer_->OnStreamRestart(boundary_.last_boundary());
    first = !connected_once;  // the preflight and the start run until they succeed
  }
  if (conn_) conn_->Quit();
  state_.store(State::kStopped);
  return absl::OkStatus();
}


absl::Status UpstreamSession::SwitchByGtid(SqlSource& sql) {
  if (options_.switch_target == nullptr) {
    return absl::FailedPreconditionError(
        "this upstream cannot follow another server by GTID (MASTER_USE_GTID / "
        "SOURCE_AUTO_POSITION): its consumer cannot begin a new source");
  }
  const SourceGtids stored = options_.switch_target->ConsumedGtids();
  // The server, not binrelay's position in the old one's binlog (Where()).
  const std::string server = absl::StrCat("source ", conn_->peer());
  if (!stored.known()) {
    return absl::FailedPreconditionError(
        "binrelay's store holds no GTIDs (its source ran with gtid_mode = OFF?), so it cannot "
        "tell which of another server's transactions it has: MASTER_USE_GTID / "
        "SOURCE_AUTO_POSITION cannot be used");
  }
  const GtidFlavour flavour = info_.is_mariadb ? GtidFlavour::kMariaDb : GtidFlavour::kMysql;
  if (stored.flavour() != flavour) {
    return absl::FailedPreconditionError(absl::StrCat(
        server, " is ", info_.is_mariadb ? "MariaDB" : "MySQL", " but binrelay's store holds ",
        AV(GtidFlavourName(stored.flavour())), " GTIDs: it cannot follow a server of another "
        "flavour"));
  }
  BR_ASSIGN_OR_RETURN(std::vector<SqlRow> rows,
                      sql.Query(info_.is_mariadb ? "SELECT @@GLOBAL.gtid_binlog_state"
                                                 : "SELECT @@GLOBAL.gtid_executed"));
  const std::string text = !rows.empty() && !rows[0].empty() && rows[0][0] ? *rows[0][0] : "";
  BR_ASSIGN_OR_RETURN(SourceGtids theirs, SourceGtids::Parse(flavour, text));
  const GtidComparison cmp = CompareGtids(stored, theirs);
  if (!cmp.contains_stored) {
    return absl::FailedPreconditionError(absl::StrCat(
        server, " lacks ", cmp.candidate_lacks, " that binrelay stored (stored: ",
        stored.PositionText(), "); following it would leave binrelay's replicas with "
        "transactions its history does not have. Point CHANGE MASTER TO at a server that "
        "replicated everything binrelay stored"));
  }
  if (!info_.is_mariadb) {
    // gtid_executed may hold what its binlog lacks (purged, a clone,
    // log_replica_updates = OFF put them in gtid_purged): those must be
    // stored already, as MySQL's own auto-position check requires
    // (ER_SOURCE_HAS_PURGED_REQUIRED_GTIDS).
    BR_ASSIGN_OR_RETURN(std::vector<SqlRow> purged_rows,
                        sql.Query("SELECT @@GLOBAL.gtid_purged"));
    const std::string purged_text =
        !purged_rows.empty() && !purged_rows[0].empty() && purged_rows[0][0] ? *purged_rows[0][0]
                                                                             : "";
    BR_ASSIGN_OR_RETURN(SourceGtids purged, SourceGtids::Parse(flavour, purged_text));
    const MysqlGtidSet missing = purged.mysql().Minus(stored.mysql());
    if (!missing.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          server, " has purged ", missing.ToString(), " from its binary log (@@gtid_purged), "
          "and binrelay did not store them: following it would skip them. Point CHANGE MASTER "
          "TO at a server whose binlog still holds them"));
    }
  }
  if (!cmp.store_lacks.empty()) {
    spdlog::warn("upstream: {} has {} that binrelay did not store: written there after it "
                 "stopped replicating from binrelay's old source (a promotion), or errant",
                 server, cmp.store_lacks);
  }
  BR_ASSIGN_OR_RETURN(SwitchPoint point, FindSwitchPoint(sql, stored));
  const std::string address = CandidateAddress(options_.connect);
  BR_ASSIGN_OR_RETURN(const uint32_t left_id,
                      options_.switch_target->BeginSwitch(point.file, info_.server_id, address,
                                                          followed_address_));
  // The server left is never chosen again by a failover, under its address
  // or another (its server_id); the one followed now may have been left
  // before (a switch back by hand).
  if (!followed_address_.empty() && followed_address_ != address &&
      std::find(left_.begin(), left_.end(), followed_address_) == left_.end()) {
    left_.push_back(followed_address_);
  }
  std::erase(left_, address);
  if (left_id != 0 && left_id != info_.server_id &&
      std::find(left_server_ids_.begin(), left_server_ids_.end(), left_id) ==
          left_server_ids_.end()) {
    left_server_ids_.push_back(left_id);
  }
  std::erase(left_server_ids_, info_.server_id);
  followed_address_ = address;
  // The store follows it from now on (its era begun), whatever the dump
  // does next.
  PublishFollowed();
  {
    absl::MutexLock lock(&status_mu_);
    left_snapshot_ = left_;
    left_ids_snapshot_ = left_server_ids_;
  }
  boundary_.Reset({point.file, 4});
  // A first connect of this run that fails after the switch resolves its
  // start again: from the new server's file, not the old one's position.
  options_.start.kind = StartSpec::Kind::kPosition;
  options_.start.position = {point.file, 4};
  position_trusted_ = true;
  switch_pending_ = false;
  stats_.source_switches.fetch_add(1);
  {
    absl::MutexLock lock(&status_mu_);
    last_switch_ = absl::Now();
  }
  spdlog::info("upstream: following {} by GTID from its {}:4 (opening GTIDs {}; stored {})",
               server, point.file, point.first_gtids.PositionText(), stored.PositionText());
  return absl::OkStatus();
}

std::string UpstreamSession::TryFailover() {
  const SourceGtids stored = options_.switch_target->ConsumedGtids();
  const std::vector<CandidateFacts> facts = ProbeCandidates(options_.candidates);
  ChoiceOptions choice_options;
  choice_options.follow_read_only = options_.follow_read_only;
  choice_options.store_has_transactions = true;
  choice_options.left = left_;
  choice_options.left_server_ids = left_server_ids_;
  const SourceChoice choice = ChooseSource(stored, facts, choice_options);
  if (!choice.chosen) {
    if (choice.refusal != last_logged_refusal_ ||
        Clock::now() - refusal_logged_at_ >= std::chrono::minutes(1)) {
      spdlog::warn("upstream: failover: {}; retrying {}", choice.refusal, Where());
      last_logged_refusal_ = choice.refusal;
      refusal_logged_at_ = Clock::now();
    }
    return choice.refusal;
  }
  const protocol::ConnectOptions& next = options_.candidates[*choice.chosen];
  const std::string from = CandidateAddress(options_.connect);
  if (CandidateAddress(next) == from) return "";  // the source itself is back
  spdlog::warn("upstream: {} lost for {} ms or more; following {} by GTID ({})", from,
               options_.failover_after.count(), facts[*choice.chosen].address,
               choice.verdicts[*choice.chosen].why);
  options_.connect = next;
  followed_published_ = false;
  // An error the chosen server causes stops the upstream (kept serving,
  // Last_IO_Error says why) as after CHANGE MASTER TO, not binrelay.
  repointed_ = true;
  {
    absl::MutexLock lock(&status_mu_);
    connect_snapshot_ = next;
  }
  switch_pending_ = rerun_preflight_ = true;
  return "";
}

absl::Time UpstreamSession::last_switch_time() const {
  absl::MutexLock lock(&status_mu_);
  return last_switch_;
}

absl::Status UpstreamSession::Repoint(
    absl::FunctionRef<void(protocol::ConnectOptions*)> change, std::optional<bool> by_gtid) {
  // Only once Run has parked: it applies the change when it wakes.
  if (!paused_.load() || state_.load() != State::kPaused) {
    return absl::FailedPreconditionError(
        paused_.load() ? "the upstream has not left the source yet (STOP SLAVE is still waiting "
                         "for its connection attempt to end)"
                       : "the upstream is running");
  }
  absl::MutexLock lock(&status_mu_);
  // On top of a change not applied yet: two CHANGEs in a row both count.
  protocol::ConnectOptions next = repoint_ ? *repoint_ : connect_snapshot_;
  change(&next);
  connect_snapshot_ = next;
  repoint_ = std::move(next);
  if (by_gtid) repoint_by_gtid_ = *by_gtid;
  return absl::OkStatus();
}

std::pair<std::vector<std::string>, std::vector<uint32_t>> UpstreamSession::left_sources() const {
  absl::MutexLock lock(&status_mu_);
  return {left_snapshot_, left_ids_snapshot_};
}

protocol::ConnectOptions UpstreamSession::connect_options() const {
  absl::MutexLock lock(&status_mu_);
  return connect_snapshot_;
}

protocol::ConnectOptions UpstreamSession::followed_options() const {
  absl::MutexLock lock(&status_mu_);
  return followed_snapshot_;
}

void UpstreamSession::PublishFollowed() {
  followed_published_ = true;
  {
    absl::MutexLock lock(&status_mu_);
    followed_snapshot_ = options_.connect;
  }
  // After a switch, a restart follows the era's recorded address: a new
  // address of the same server (CHANGE MASTER TO by position) replaces it.
  if (options_.switch_target == nullptr) return;
  if (absl::Status s = options_.switch_target->RecordSourceAddress(
          CandidateAddress(options_.connect));
      !s.ok()) {
    spdlog::warn("upstream: {}; a restart of binrelay may go back to the address the store's "
                 "era recorded (CHANGE MASTER TO on the listener re-points it)",
                 std::string(s.message()));
  }
}

void UpstreamSession::Pause() {
  paused_.store(true);
}

void UpstreamSession::Resume() {
  absl::MutexLock l(&pause_mu_);
  paused_.store(false);
  pause_cv_.SignalAll();
}

BinlogPosition UpstreamSession::received() const {
  absl::MutexLock lock(&status_mu_);
  return received_;
}

SourceInfo UpstreamSession::source_info_snapshot() const {
  absl::MutexLock lock(&status_mu_);
  return info_snapshot_;
}

absl::Time UpstreamSession::last_event_time() const {
  int64_t ns = last_event_ns_.load(std::memory_order_relaxed);
  return ns == 0 ? absl::InfinitePast() : absl::FromUnixNanos(ns);
}

std::shared_ptr<const UpstreamSession::VariableList> UpstreamSession::source_variables() const {
  absl::MutexLock lock(&status_mu_);
  return source_variables_;
}

std::string UpstreamSession::last_error() const {
  absl::MutexLock lock(&status_mu_);
  if (failover_refusal_.empty()) return last_error_;
  return absl::StrCat(last_error_, "; no failover: ", failover_refusal_);
}

}  // namespace binrelay::replication
