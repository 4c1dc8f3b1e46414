#include "proxy/binlog_sender.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "protocol/artificial_events.h"
#include "protocol/byte_cursor.h"
#include "protocol/event_type.h"
#include "protocol/gtid_events.h"
#include "protocol/packet_framer.h"
#include "protocol/server_packets.h"
#include "protocol/status_macros.h"

namespace binrelay::proxy {
namespace {

constexpr uint16_t kFlagSecond = 0x02;  // MariaDB: send ANNOTATE_ROWS; MySQL: HEARTBEAT_V2
constexpr int kCapabilityTolerateHoles = 2;
constexpr int kCapabilityGtid = 4;

const std::string* Variable(const DumpRequest& r, std::string_view a, std::string_view b = {}) {
  auto it = r.user_variables.find(std::string(a));
  if (it != r.user_variables.end()) return &it->second;
  if (!b.empty()) {
    it = r.user_variables.find(std::string(b));
    if (it != r.user_variables.end()) return &it->second;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<std::unique_ptr<BinlogSender>> BinlogSender::Create(
    const BinlogSenderContext& context, const DumpRequest& request) {
  std::unique_ptr<BinlogSender> s(new BinlogSender(context, request));
  BR_RETURN_IF_ERROR(s->Init());
  return s;
}

BinlogSender::~BinlogSender() {
  DisarmWake();
  // A replica that reconnects soon finds its files still there (retention
  // honours recently connected consumers, not only connected ones). The
  // claim goes back to the end of the file before the last rotation sent:
  // that rotation may have been still in socket buffers when the replica
  // dropped, and then it asks for that file again.
  pin_.Linger(kReconnectGrace,
              reader_ != nullptr ? reader_->finished_file_end() : replication::BinlogPosition{});
  if (registry_id_ != 0) ctx_.registry->Remove(registry_id_);
}

absl::Status BinlogSender::ReadClientVariables() {
  if (const std::string* v = Variable(request_, "master_binlog_checksum", "source_binlog_checksum")) {
    // Lenient like protocol.md §4.4: anything but NONE means CRC32.
    client_checksum_aware_ = true;
    client_crc_ = !absl::EqualsIgnoreCase(AV(*v), "NONE") && !v->empty();
  }
  if (const std::string* v = Variable(request_, "mariadb_slave_capability")) {
    int cap = 0;
    if (!absl::SimpleAtoi(AV(*v), &cap)) {
      return absl::InvalidArgumentError(
          absl::StrCat("@mariadb_slave_capability='", *v, "' is not an integer"));
    }
    maria_capability_ = cap;
  }
  if (const std::string* v = Variable(request_, "master_heartbeat_period", "source_heartbeat_period")) {
    uint64_t ns = 0;
    double dns = 0;
    if (absl::SimpleAtoi(AV(*v), &ns)) {
      heartbeat_ = std::chrono::nanoseconds(ns);
    } else if (absl::SimpleAtod(AV(*v), &dns) && dns >= 0) {
      heartbeat_ = std::chrono::nanoseconds(static_cast<uint64_t>(dns));
    }
  }
  return absl::OkStatus();
}

absl::Status BinlogSender::CheckGtidStartAgainstStore(const std::string& state) {
  BR_ASSIGN_OR_RETURN(replication::MariaGtidPosition have,
                      replication::MariaGtidPosition::Parse(ctx_.store->committed().gtid_state));
  for (const auto& [domain, want] : maria_pending_) {
    auto it = have.domains().find(domain);
    if (it == have.domains().end()) {
      return absl::NotFoundError(absl::StrCat(
          "Error: connecting slave requested to start from GTID ", want.ToString(),
          ", which is not in the master's binlog (binrelay's store has no domain ", domain,
          "; it is at '", have.ToString(), "'). Check the replica's @@gtid_slave_pos"));
    }
    if (want.seq > it->second.seq) {
      // binrelay may still be catching up with the source: retryable.
      return absl::UnavailableError(absl::StrCat(
          "Error: connecting slave requested to start from GTID ", want.ToString(),
          ", which is not in the master's binlog: binrelay's store ends at ",
          it->second.ToString(), " in domain ", domain,
          " (the replica is ahead of binrelay; requested position '", state, "')"));
    }
  }
  return absl::OkStatus();
}

absl::Status BinlogSender::Init() {
  BR_RETURN_IF_ERROR(ReadClientVariables());
  // Only what is committed: a file the store has just started may not even
  // hold its FDE on disk yet.
  std::vector<replication::StoreFileEntry> files = ctx_.store->CommittedFiles();
  if (files.empty()) {
    return absl::UnavailableError(
        "binrelay's store is still empty (it has not received the source's first file yet); "
        "retry in a moment");
  }
  const std::string* connect_state = Variable(request_, "slave_connect_state");
  if (request_.kind == DumpRequest::Kind::kMySqlGtid) {
    mode_ = Mode::kMysqlGtid;
    BR_ASSIGN_OR_RETURN(std::string text, protocol::DecodeGtidSetText(request_.encoded_gtid_set));
    BR_ASSIGN_OR_RETURN(mysql_executed_, replication::MysqlGtidSet::Parse(text));
    std::string file = files.front().name;
    if (!text.empty()) {
      auto found = ctx_.store->FileForGtid(text);
      if (!found.ok()) {
        return absl::NotFoundError(absl::StrCat(
            "Cannot replicate because the source purged required binary logs: binrelay's "
            "store (", files.front().name, " to ", files.back().name,
            ") does not reach back to the replica's executed set '", text, "'"));
      }
      file = *found;
    }
    start_ = {file, 4};
  } else if (connect_state != nullptr) {
    mode_ = Mode::kMariaGtid;
    BR_ASSIGN_OR_RETURN(replication::MariaGtidPosition want,
                        replication::MariaGtidPosition::Parse(*connect_state));
    maria_pending_ = want.domains();
    BR_RETURN_IF_ERROR(CheckGtidStartAgainstStore(*connect_state));
    std::string file = files.front().name;
    if (!want.empty()) {
      auto found = ctx_.store->FileForGtid(*connect_state);
      if (!found.ok()) {
        return absl::NotFoundError(absl::StrCat(
            "Could not find GTID state requested by slave in any binlog files. Probably the "
            "slave state is too old and required binlog files have been purged (binrelay's "
            "store holds ", files.front().name, " to ", files.back().name,
            ", requested '", *connect_state, "')"));
      }
      file = *found;
    } else if (!files.front().first_gtid_state.empty()) {
      return absl::NotFoundError(absl::StrCat(
          "Could not find GTID state requested by slave in any binlog files: the replica "
          "starts from an empty GTID position, but binrelay's oldest file ", files.front().name,
          " begins after GTIDs '", files.front().first_gtid_state,
          "' (earlier files were purged); seed the replica and set gtid_slave_pos"));
    }
    start_ = {file, 4};
  } else {
    start_ = {request_.file.empty() ? files.front().name : request_.file, request_.position};
    const replication::StoreFileEntry& newest = files.back();
    const int cmp = replication::CompareBinlogNames(start_.file, newest.name);
    if (cmp > 0 ||
        (cmp == 0 && start_.offset > newest.size && !ctx_.store->IsClosed(newest.name))) {
      // The replica is ahead of binrelay (which is catching up with the
      // source, or was just put in front of it): retryable, not fatal.
      // Past the end of a closed file is impossible: StoreReader::Open
      // refuses it below (fatal 1236), as the source would.
      return absl::UnavailableError(absl::StrCat(
          "binrelay has not stored ", start_.ToString(), " yet (its store ends at ", newest.name,
          ":", newest.size, "); it is behind the source, retry shortly"));
    }
  }
  BR_ASSIGN_OR_RETURN(reader_, replication::StoreReader::Open(ctx_.store, start_));
  BR_RETURN_IF_ERROR(reader_->PeekAt(4).status());
  const protocol::FormatDescription& format = reader_->format();
  if (format.events_have_crc() && !client_checksum_aware_) {
    return absl::FailedPreconditionError(
        "Slave can not handle replication events with the checksum that master is configured "
        "to log (binrelay's stored binlog has CRC32 checksums and the client did not SET "
        "@master_binlog_checksum)");
  }
  if (format.is_mariadb && maria_capability_.value_or(0) < kCapabilityGtid) {
    return absl::FailedPreconditionError(absl::StrCat(
        "binrelay serves this MariaDB binlog only to GTID-aware clients (MariaDB 10.0+ "
        "replicas, mariadb-binlog), which SET @mariadb_slave_capability=4; this client sent ",
        maria_capability_ ? absl::StrCat(*maria_capability_) : std::string("none")));
  }
  pin_ = ctx_.store->Pin(start_, absl::StrCat("replica ", request_.peer, " server_id ",
                                              request_.server_id));
  DumpInfo info;
  info.peer = request_.peer;
  info.server_id = request_.server_id;
  info.mode = mode_ == Mode::kFilePosition ? "file/position"
              : mode_ == Mode::kMariaGtid  ? "mariadb gtid"
                                           : "mysql gtid";
  info.position = start_;
  info.connected = absl::Now();
  registry_id_ = ctx_.registry->Add(std::move(info));
  return absl::OkStatus();
}

void BinlogSender::AppendEvent(std::string* out, std::string_view event) {
  const size_t payload = 1 + event.size();
  if (payload < protocol::kMaxPacketChunk) {
    protocol::AppendFixed(out, payload, 3);
    out->push_back(static_cast<char>(seq_++));
    out->push_back('\0');
    out->append(event);
    return;
  }
  std::string p;
  p.reserve(payload);
  p.push_back('\0');
  p.append(event);
  protocol::AppendFramedPacket(out, p, &seq_);
}

void BinlogSender::AppendFakeGtidList(std::string* out, uint64_t position) {
  std::vector<protocol::MariaGtidList::Entry> entries;
  auto state = replication::MariaGtidPosition::Parse(binlog_state_.ToString());
  if (state.ok()) {
    for (const auto& [domain, g] : state->domains()) {
      entries.push_back({g.domain, g.server_id, g.seq});
    }
  }
  AppendEvent(out, protocol::BuildFakeGtidList(ctx_.server_id, entries, position, client_crc_));
}

absl::Status BinlogSender::RouteMariaGtid(const protocol::EventView& ev, std::string* out,
                                          bool* skip) {
  BR_RETURN_IF_ERROR(binlog_state_.OnEvent(ev));
  BR_ASSIGN_OR_RETURN(bool ended, boundary_.OnEvent(ev, reader_->format(), reader_->position()));
  if (ev.type() == protocol::kMariaGtidEvent) {
    BR_ASSIGN_OR_RETURN(protocol::MariaGtid g, protocol::ParseMariaGtid(ev));
    auto it = maria_pending_.find(g.domain_id);
    if (it != maria_pending_.end()) {
      const replication::MariaGtid& want = it->second;
      // As MariaDB's sender: skip the group unless it is past the
      // requested GTID of the same server in this domain.
      if (g.server_id != want.server_id || g.seq_no <= want.seq) skip_group_ = true;
      if (g.server_id == want.server_id && g.seq_no >= want.seq) {
        send_fake_gtid_list_ = true;
        maria_pending_.erase(it);
      }
    }
  }
  if (ended) binlog_state_.Commit();
  if (skip_group_) {
    *skip = true;
    if (ended) {
      skip_group_ = false;
      if (send_fake_gtid_list_) {
        // The replica has logically passed everything up to here.
        AppendFakeGtidList(out, reader_->position().offset);
        send_fake_gtid_list_ = false;
      }
    }
    return absl::OkStatus();
  }
  if (send_fake_gtid_list_) {
    // The requested GTID is missing (a later one of its server came first):
    // move the replica's position before sending this group.
    AppendFakeGtidList(out, ev.offset);
    send_fake_gtid_list_ = false;
  }
  return absl::OkStatus();
}

absl::Status BinlogSender::RouteMysqlGtid(const protocol::EventView& ev, std::string* out,
                                          bool* skip) {
  if (!skip_group_ &&
      (ev.type() == protocol::kGtidEvent || ev.type() == protocol::kGtidTaggedEvent)) {
    BR_ASSIGN_OR_RETURN(protocol::MysqlGtid g, protocol::ParseMysqlGtid(ev));
    if (mysql_executed_.Contains(protocol::UuidToString(g.sid), g.tag,
                                 static_cast<uint64_t>(g.gno))) {
      skip_group_ = true;
      boundary_.Reset(replication::BinlogPosition{reader_->position().file, ev.offset});
    }
  }
  if (skip_group_) {
    *skip = true;
    BR_ASSIGN_OR_RETURN(bool ended,
                        boundary_.OnEvent(ev, reader_->format(), reader_->position()));
    if (ended) {
      skip_group_ = false;
      heartbeat_after_skip_ = true;
    }
    return absl::OkStatus();
  }
  if (heartbeat_after_skip_) {
    // As MySQL's sender: tell the replica where the skipped run ended.
    heartbeat_after_skip_ = false;
    const bool v2 = (request_.flags & kFlagSecond) != 0;
    const auto& file = reader_->position().file;
    AppendEvent(out, v2 ? protocol::BuildHeartbeatV2(ctx_.server_id, file, ev.offset, client_crc_)
                        : protocol::BuildHeartbeat(ctx_.server_id, file, ev.offset, client_crc_));
  }
  return absl::OkStatus();
}

absl::Status BinlogSender::Route(const protocol::EventView& ev, std::string* out) {
  if (ev.type() == protocol::kFormatDescriptionEvent) {
    AppendEvent(out, protocol::FdeWithoutInUse(ev.bytes));
    // From here clients parse every event, invented ones included, with this
    // FDE's algorithm (real senders switch the same way).
    client_crc_ = reader_->format().events_have_crc();
    return absl::OkStatus();
  }
  bool skip = false;
  if (mode_ == Mode::kMariaGtid && (!maria_pending_.empty() || skip_group_)) {
    BR_RETURN_IF_ERROR(RouteMariaGtid(ev, out, &skip));
  } else if (mode_ == Mode::kMysqlGtid) {
    BR_RETURN_IF_ERROR(RouteMysqlGtid(ev, out, &skip));
  }
  if (skip) return absl::OkStatus();
  if (ev.type() == protocol::kAnnotateRowsEvent && (request_.flags & kFlagSecond) == 0 &&
      maria_capability_.value_or(0) >= kCapabilityTolerateHoles) {
    return absl::OkStatus();
  }
  AppendEvent(out, ev.bytes);
  return absl::OkStatus();
}

absl::StatusOr<DumpStream::Progress> BinlogSender::Fill(std::string* out, size_t budget) {
  if (!started_) {
    started_ = true;
    const uint64_t rotate_pos = mode_ == Mode::kFilePosition ? start_.offset : 4;
    AppendEvent(out, protocol::BuildFakeRotate(ctx_.server_id, start_.file, rotate_pos, client_crc_));
    if (start_.offset > 4) {
      BR_ASSIGN_OR_RETURN(protocol::EventView fde, reader_->PeekAt(4));
      BR_ASSIGN_OR_RETURN(std::string rewritten,
                          protocol::RewriteFdeForMidFileStart(fde.bytes, fde.has_checksum));
      AppendEvent(out, rewritten);
      client_crc_ = reader_->format().events_have_crc();
    }
  }
  if (pin_.lost()) {
    // Retention's hard cap removed files this dump still needed.
    return absl::DataLossError(pin_.lost_reason());
  }
  while (out->size() < budget) {
    protocol::EventView ev;
    BR_ASSIGN_OR_RETURN(replication::StoreReader::Step step, reader_->Next(&ev));
    switch (step) {
      case replication::StoreReader::Step::kCaughtUp:
        ctx_.registry->Update(registry_id_, reader_->position(), true);
        if (request_.NonBlocking()) {
          protocol::AppendFramedPacket(out, protocol::BuildEofPacket(), &seq_);
          return Progress::kFinished;
        }
        return Progress::kCaughtUp;
      case replication::StoreReader::Step::kNextFile:
        pin_.Advance(reader_->position());
        AppendEvent(out, protocol::BuildFakeRotate(ctx_.server_id, reader_->position().file, 4,
                                                   client_crc_));
        break;
      case replication::StoreReader::Step::kEvent:
        BR_RETURN_IF_ERROR(Route(ev, out));
        break;
    }
  }
  ctx_.registry->Update(registry_id_, reader_->position(), false);
  return Progress::kMore;
}

void BinlogSender::AppendHeartbeat(std::string* out) {
  const auto& pos = reader_->position();
  const bool v2 = !maria_capability_ && (request_.flags & kFlagSecond) != 0;
  AppendEvent(out, v2 ? protocol::BuildHeartbeatV2(ctx_.server_id, pos.file, pos.offset, client_crc_)
                      : protocol::BuildHeartbeat(ctx_.server_id, pos.file, pos.offset, client_crc_));
}

void BinlogSender::AppendError(std::string* out, uint16_t code, std::string_view message) {
  protocol::AppendFramedPacket(out, protocol::BuildErrPacket(code, "HY000", message), &seq_);
}

bool BinlogSender::ArmWake(std::function<void()> wake) {
  DisarmWake();
  wake_id_ = ctx_.signal->Add(std::move(wake));
  if (ctx_.store->committed().sequence != reader_->seen_sequence()) {
    DisarmWake();
    return false;
  }
  return true;
}

void BinlogSender::DisarmWake() {
  if (wake_id_) ctx_.signal->Remove(*wake_id_);
  wake_id_.reset();
}

}  // namespace binrelay::proxy
