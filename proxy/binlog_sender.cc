#include "proxy/binlog_sender.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "protocol/artificial_events.h"
#include "protocol/byte_cursor.h"
#include "protocol/event_type.h"
#include "protocol/gtid_events.h"
#include "protocol/packet_framer.h"
#include "protocol/server_error.h"
#include "protocol/server_packets.h"
#include "protocol/status_macros.h"
#include "proxy/client_error.h"
#include "replication/store_era.h"
#include "replication/store_scan.h"

namespace binrelay::proxy {
namespace {

using protocol::server_error::kMasterFatalReadingBinlog;
using protocol::server_error::kUnknownCommand;
using protocol::server_error::kUnknownError;

absl::Status Fatal(std::string_view message) {
  return ClientError(absl::StatusCode::kFailedPrecondition, kMasterFatalReadingBinlog, message);
}

absl::Status Retryable(std::string_view message) {
  return ClientError(absl::StatusCode::kUnavailable, kUnknownError, message);
}

// "mysql-bin.000012" -> ("mysql-bin", 12); false for names that are not a
// base name, a dot and a decimal counter.
bool SplitBinlogName(std::string_view name, std::string_view* base, uint64_t* number) {
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == name.size()) return false;
  std::string_view digits = name.substr(dot + 1);
  for (char c : digits) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  *base = name.substr(0, dot);
  return absl::SimpleAtoi(AV(digits), number);
}

// `name` continues the sequence `newest` belongs to, after it: a file the
// source may already have written and binrelay not yet received.
bool IsLaterFileOfSequence(std::string_view name, std::string_view newest) {
  std::string_view a, b;
  uint64_t na = 0, nb = 0;
  return SplitBinlogName(name, &a, &na) && SplitBinlogName(newest, &b, &nb) && a == b && na > nb;
}

std::string Holdings(const std::vector<replication::StoreFileEntry>& files) {
  return absl::StrCat("binrelay's store holds ", files.front().name, " to ", files.back().name);
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

absl::Status BinlogSender::Init() {
  const DumpSettings& settings = request_.settings;
  if (settings.checksum) {
    // Lenient (a real server's get_binlog_checksum_value_at_connect is
    // stricter): anything but NONE means CRC32.
    client_checksum_aware_ = true;
    client_crc_ = !absl::EqualsIgnoreCase(AV(*settings.checksum), "NONE") &&
                  !settings.checksum->empty();
  }
  // Only what is committed: a file the store has just started may not even
  // hold its FDE on disk yet.
  std::vector<replication::StoreFileEntry> files = ctx_.store->CommittedFiles();
  if (files.empty()) {
    return Retryable(
        "binrelay's store is still empty (it has not received the source's first file yet); "
        "retry in a moment");
  }
  // The stream's flavour decides the rules (and which commands exist).
  auto format = replication::ReadStoredFormat(
      absl::StrCat(ctx_.store->dir(), "/", files.back().name));
  if (!format.ok()) {
    return Retryable(absl::StrCat("binrelay cannot read the format of its newest stored file (",
                                  format.status().message(), "); retry shortly"));
  }
  mariadb_ = format->is_mariadb;
  const bool may_be_behind = ctx_.source == nullptr || ctx_.source->MayBeBehind();
  if (request_.kind == DumpRequest::Kind::kMySqlGtid) {
    if (mariadb_) {
      // MariaDB has no COM_BINLOG_DUMP_GTID: its dispatcher answers
      // ER_UNKNOWN_COM_ERROR and keeps the connection.
      return ClientError(absl::StatusCode::kUnimplemented, kUnknownCommand, "Unknown command",
                         "08S01");
    }
    BR_RETURN_IF_ERROR(InitMysqlGtid(files));
  } else if (mariadb_) {
    MariaDumpStart start;
    start.binlog_state = ctx_.store->committed().gtid_state().maria();
    start.files = files;
    start.server_id = ctx_.server_id;
    start.may_be_behind = may_be_behind;
    if (ctx_.source != nullptr) {
      start.own_slave_pos = ctx_.source->Variable("gtid_slave_pos").value_or("");
    }
    std::string gtid_file;
    BR_ASSIGN_OR_RETURN(maria_, MariaDumpFilter::Create(settings, request_.flags, start,
                                                        &gtid_file));
    if (maria_->using_gtid()) {
      mode_ = Mode::kMariaGtid;
      start_ = {gtid_file, 4};
    } else {
      BR_RETURN_IF_ERROR(InitFilePosition(files, may_be_behind));
    }
  } else {
    BR_RETURN_IF_ERROR(InitFilePosition(files, may_be_behind));
  }
  auto reader = replication::StoreReader::Open(ctx_.store, start_);
  if (!reader.ok()) return Fatal(SV(reader.status().message()));  // purged meanwhile
  reader_ = *std::move(reader);
  BR_RETURN_IF_ERROR(reader_->PeekAt(4).status());
  pin_ = ctx_.store->Pin(start_, absl::StrCat("replica ", request_.peer, " server_id ",
                                              request_.server_id));
  DumpInfo info;
  info.peer = request_.peer;
  info.server_id = request_.server_id;
  info.connection_id = request_.connection_id;
  info.mode = mode_ == Mode::kFilePosition ? "file/position"
              : mode_ == Mode::kMariaGtid  ? "mariadb gtid"
                                           : "mysql gtid";
  info.position = start_;
  info.connected = absl::Now();
  registry_id_ = ctx_.registry->Add(std::move(info), this);
  return absl::OkStatus();
}

absl::Status BinlogSender::InitMysqlGtid(const std::vector<replication::StoreFileEntry>& files) {
  mode_ = Mode::kMysqlGtid;
  auto text = protocol::DecodeGtidSetText(request_.encoded_gtid_set);
  if (!text.ok()) {
    return Fatal(absl::StrCat("Malformed GTID set in COM_BINLOG_DUMP_GTID: ",
                              text.status().message()));
  }
  auto executed = replication::MysqlGtidSet::Parse(*text);
  if (!executed.ok()) {
    return Fatal(absl::StrCat("Malformed GTID set in COM_BINLOG_DUMP_GTID: ",
                              executed.status().message()));
  }
  mysql_executed_ = *std::move(executed);
  std::string file = files.front().name;
  if (!text->empty()) {
    auto found = ctx_.store->FileForGtid(replication::SourceGtids(mysql_executed_));
    if (!found.ok()) {
      return Fatal(absl::StrCat(
          "Cannot replicate because the source purged required binary logs: ",
          Holdings(files), ", which does not reach back to the replica's executed set '", *text,
          "'"));
    }
    file = *found;
  }
  start_ = {file, 4};
  return absl::OkStatus();
}

absl::Status BinlogSender::InitFilePosition(const std::vector<replication::StoreFileEntry>& files,
                                            bool may_be_behind) {
  start_ = {request_.file.empty() ? files.front().name : request_.file, request_.position};
  // The name a replica asks for is the source's (what binrelay's ROTATEs
  // sent it), or a stored name with its era (store_era.h). After a failover
  // the store may hold a file of that name from each source followed: then
  // the position is ambiguous and the replica is told how to connect.
  const std::vector<const replication::StoreFileEntry*> named =
      replication::FilesNamed(files, start_.file);
  // A plain name that a later era holds once, but that the source before
  // that era may have used too (a file purged since): just as ambiguous.
  bool earlier_era_may_hold_it = false;
  if (named.size() == 1 && replication::SplitStoredName(start_.file).era == 0) {
    if (const uint32_t era = replication::SplitStoredName(named.front()->name).era; era > 0) {
      auto entry = replication::ReadEraEntry(ctx_.store->dir(), era);
      earlier_era_may_hold_it =
          !entry.ok() || entry->previous_last_file.empty() ||
          replication::CompareBinlogNames(start_.file, entry->previous_last_file) <= 0;
    }
  }
  if (named.size() > 1 || earlier_era_may_hold_it) {
    std::string which;
    for (const auto* f : named) absl::StrAppend(&which, which.empty() ? "" : ", ", f->name);
    return Fatal(absl::StrCat(
        "binlog '", start_.file, "' may name a file of more than one source binrelay followed "
        "across a failover (stored: ", which, named.size() == 1 ? "; the earlier source's may "
        "have been purged" : "", "): a file and position cannot say which. Connect by GTID (",
        mariadb_ ? "MASTER_USE_GTID = slave_pos" : "SOURCE_AUTO_POSITION = 1",
        "). A one-off read (mysqlbinlog) may name the stored file with its era"));
  }
  auto it = named.empty() ? files.end() : files.begin() + (named.front() - files.data());
  if (it != files.end()) start_.file = it->name;
  const replication::StoreFileEntry& newest = files.back();
  if (it == files.end()) {
    if (may_be_behind &&
        IsLaterFileOfSequence(start_.file, replication::SourceNameOf(newest.name))) {
      // The source may hold it already (binrelay is catching up, or was just
      // put in front of it): the replica retries.
      return Retryable(absl::StrCat("binrelay has not stored ", start_.file, " yet (its store "
                                    "ends at ", newest.name, ":", newest.size,
                                    "); it is behind the source, retry shortly"));
    }
    std::string why;
    std::string_view base, oldest_base;
    uint64_t n = 0, oldest = 0;
    if (SplitBinlogName(start_.file, &base, &n) &&
        SplitBinlogName(replication::SourceNameOf(files.front().name), &oldest_base, &oldest) &&
        base == oldest_base &&
        n < oldest) {
      why = absl::StrCat("binlog '", start_.file, "' was purged from binrelay's store (",
                         Holdings(files), "; [store] retention_hours, retention_bytes and "
                         "retention_hard_cap_bytes decide what is kept): point the replica at "
                         "a stored file, or reseed it");
    } else {
      why = absl::StrCat("binlog '", start_.file, "' is not in binrelay's store (",
                         Holdings(files), ")");
    }
    // The source's words first: clients match them.
    return Fatal(absl::StrCat("Could not find first log file name in binary log index file (",
                              why, ")"));
  }
  if (start_.offset < 4 || start_.offset > it->size) {
    if (start_.offset > it->size && it->name == newest.name && !ctx_.store->IsClosed(newest.name) &&
        may_be_behind) {
      return Retryable(absl::StrCat("binrelay has not stored ", start_.ToString(), " yet (its "
                                    "store ends at ", newest.name, ":", newest.size,
                                    "); it is behind the source, retry shortly"));
    }
    file_opened_ = true;
    last_event_start_ = 4;
    std::string pos = absl::StrCat(start_.offset);
    return Fatal(absl::StrCat(
        mariadb_ ? "Client requested master to start replication from impossible position"
        : start_.offset < 4 ? "Client requested source to start replication from position < 4"
                            : "Client requested source to start replication from position > "
                              "file size",
        "; the first event '", start_.file, "' at ", pos, ", the last event read from '",
        start_.file, "' at 4, the last byte read from '", start_.file, "' at 4."));
  }
  return absl::OkStatus();
}

std::string BinlogSender::WithReadPositions(std::string_view message) const {
  if (!file_opened_ || reader_ == nullptr) return std::string(message);
  const replication::BinlogPosition& at = reader_->position();
  return absl::StrCat(AV(message), "; the first event '", request_.file, "' at ",
                      request_.position, ", the last event read from '", at.file, "' at ",
                      last_event_start_, ", the last byte read from '", at.file, "' at ",
                      at.offset, ".");
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

absl::Status BinlogSender::SendFde(const protocol::EventView& fde, bool mid_file_start,
                                   std::string* out) {
  file_opened_ = true;
  const protocol::FormatDescription& format = reader_->format();
  if (format.events_have_crc() && !client_checksum_aware_) {
    return Fatal(mariadb_ ? "Slave can not handle replication events with the checksum that "
                            "master is configured to log"
                          : "Replica can not handle replication events with the checksum that "
                            "source is configured to log");
  }
  if (mid_file_start) {
    // The replica must not move its position by this FDE, nor take it for a
    // restart of the source (log_pos 0, created 0).
    BR_ASSIGN_OR_RETURN(std::string e, protocol::RewriteFdeForMidFileStart(fde.bytes,
                                                                           fde.has_checksum));
    AppendEvent(out, e);
  } else if (maria_ && maria_->using_gtid() && !maria_->position_reached()) {
    // A GTID replica that has not reached its position keeps its temporary
    // tables: no `created`.
    BR_ASSIGN_OR_RETURN(std::string e, protocol::RewriteFdeWithoutCreated(fde.bytes,
                                                                          fde.has_checksum));
    AppendEvent(out, e);
  } else {
    AppendEvent(out, protocol::FdeWithoutInUse(fde.bytes));
  }
  // From here clients parse every event, invented ones included, with this
  // FDE's algorithm (real senders switch the same way).
  client_crc_ = format.events_have_crc();
  if (maria_) maria_->OnFileStart();
  return absl::OkStatus();
}

absl::Status BinlogSender::RouteMysqlGtid(const protocol::EventView& ev, std::string* out,
                                          bool* skip) {
  if (!skip_group_ &&
      (ev.type() == protocol::kGtidEvent || ev.type() == protocol::kGtidTaggedEvent)) {
    BR_ASSIGN_OR_RETURN(protocol::MysqlGtid g, protocol::ParseMysqlGtid(ev));
    // Every GTID of the dump is checked (the set may have gaps).
    if (mysql_executed_.Contains(uuid_text_.Of(g.sid), g.tag, static_cast<uint64_t>(g.gno))) {
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
    const bool v2 = (request_.flags & kDumpFlagSecond) != 0;
    const std::string_view file = replication::SourceNameOf(reader_->position().file);
    AppendEvent(out, v2 ? protocol::BuildHeartbeatV2(ctx_.server_id, file, ev.offset, client_crc_)
                        : protocol::BuildHeartbeat(ctx_.server_id, file, ev.offset, client_crc_));
  }
  return absl::OkStatus();
}

absl::Status BinlogSender::Route(const protocol::EventView& ev, std::string* out,
                                 bool* finished) {
  last_event_start_ = ev.offset;
  if (ev.type() == protocol::kFormatDescriptionEvent) return SendFde(ev, false, out);
  const bool crc = reader_->format().events_have_crc();
  if (maria_) {
    BR_ASSIGN_OR_RETURN(MariaDumpFilter::Action action, maria_->OnEvent(ev, crc, &scratch_));
    if (action == MariaDumpFilter::Action::kSend) AppendEvent(out, ev.bytes);
    if (action == MariaDumpFilter::Action::kSendRewritten) AppendEvent(out, scratch_);
    std::vector<protocol::MariaGtidList::Entry> entries;
    uint32_t flags = 0;
    const uint64_t end = reader_->position().offset;
    if (maria_->TakeFakeGtidList(&entries, &flags)) {
      // The replica has logically passed everything up to here.
      AppendEvent(out, protocol::BuildFakeGtidList(ctx_.server_id, entries, end, client_crc_,
                                                   flags));
    }
    if (maria_->UntilReached(ev, crc, &entries, &flags)) {
      AppendEvent(out, protocol::BuildFakeGtidList(ctx_.server_id, entries, end, client_crc_,
                                                   flags));
      *finished = true;
    }
    return absl::OkStatus();
  }
  bool skip = false;
  if (mode_ == Mode::kMysqlGtid) BR_RETURN_IF_ERROR(RouteMysqlGtid(ev, out, &skip));
  if (!skip) AppendEvent(out, ev.bytes);
  return absl::OkStatus();
}

absl::StatusOr<DumpStream::Progress> BinlogSender::Fill(std::string* out, size_t budget) {
  {
    absl::MutexLock l(&end_mu_);
    if (!end_.ok()) return end_;
  }
  if (!started_) {
    started_ = true;
    // MariaDB names the requested position (4 for a GTID dump); MySQL too.
    const uint64_t rotate_pos = mode_ == Mode::kFilePosition ? start_.offset : 4;
    // Names on the wire are the source's, never a store era's.
    AppendEvent(out, protocol::BuildFakeRotate(ctx_.server_id,
                                               replication::SourceNameOf(start_.file), rotate_pos,
                                               client_crc_));
    if (start_.offset > 4) {
      BR_ASSIGN_OR_RETURN(protocol::EventView fde, reader_->PeekAt(4));
      last_event_start_ = 4;
      BR_RETURN_IF_ERROR(SendFde(fde, true, out));
    }
  }
  if (pin_.lost()) {
    // Retention's hard cap removed files this dump still needed.
    return Fatal(pin_.lost_reason());
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
        AppendEvent(out, protocol::BuildFakeRotate(
                             ctx_.server_id, replication::SourceNameOf(reader_->position().file),
                             4, client_crc_));
        break;
      case replication::StoreReader::Step::kEvent: {
        bool finished = false;
        BR_RETURN_IF_ERROR(Route(ev, out, &finished));
        if (finished) {
          // START SLAVE UNTIL reached: the source ends the dump with EOF.
          ctx_.registry->Update(registry_id_, reader_->position(), false);
          protocol::AppendFramedPacket(out, protocol::BuildEofPacket(), &seq_);
          return Progress::kFinished;
        }
        break;
      }
    }
  }
  ctx_.registry->Update(registry_id_, reader_->position(), false);
  return Progress::kMore;
}

void BinlogSender::AppendHeartbeat(std::string* out) {
  const auto& pos = reader_->position();
  const std::string_view file = replication::SourceNameOf(pos.file);
  const bool v2 = !mariadb_ && (request_.flags & kDumpFlagSecond) != 0;
  AppendEvent(out, v2 ? protocol::BuildHeartbeatV2(ctx_.server_id, file, pos.offset, client_crc_)
                      : protocol::BuildHeartbeat(ctx_.server_id, file, pos.offset, client_crc_));
}

void BinlogSender::AppendError(std::string* out, const absl::Status& error) {
  protocol::ServerError e = ClientErrorFor(error, kMasterFatalReadingBinlog);
  // MySQL closes a replaced dump without a word; MariaDB says why.
  if (e.code == protocol::server_error::kSlaveSameId && !mariadb_) return;
  // Both tell where reading stopped with a fatal read error and with
  // ER_SLAVE_SAME_ID.
  if (e.code == kMasterFatalReadingBinlog || e.code == protocol::server_error::kSlaveSameId) {
    e.message = WithReadPositions(e.message);
  }
  protocol::AppendFramedPacket(out, protocol::BuildErrPacket(e.code, e.sql_state, e.message),
                               &seq_);
}

void BinlogSender::RequestEnd(absl::Status why) {
  std::function<void()> wake;
  {
    absl::MutexLock l(&end_mu_);
    if (end_.ok()) end_ = std::move(why);
    wake = wake_;
  }
  if (wake) wake();
}

bool BinlogSender::ArmWake(std::function<void()> wake) {
  DisarmWake();
  {
    absl::MutexLock l(&end_mu_);
    wake_ = wake;
    if (!end_.ok()) return false;
  }
  wake_id_ = ctx_.signal->Add(std::move(wake));
  if (ctx_.store->committed_sequence() != reader_->seen_sequence()) {
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
