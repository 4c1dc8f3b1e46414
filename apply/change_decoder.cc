#include "apply/change_decoder.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "protocol/column_type.h"
#include "protocol/event_type.h"
#include "protocol/rows_event.h"
#include "protocol/status_macros.h"
#include "protocol/gtid_events.h"
#include "protocol/query_event.h"
#include "protocol/transaction_payload.h"

namespace binrelay::apply {
namespace {

bool IsRowsEvent(uint8_t type) {
  using namespace protocol;
  switch (type) {
    case kPreGaWriteRowsEvent: case kPreGaUpdateRowsEvent: case kPreGaDeleteRowsEvent:
    case kWriteRowsEventV1: case kUpdateRowsEventV1: case kDeleteRowsEventV1:
    case kWriteRowsEvent: case kUpdateRowsEvent: case kDeleteRowsEvent:
    case kPartialUpdateRowsEvent:
    case kWriteRowsCompressedEventV1: case kUpdateRowsCompressedEventV1:
    case kDeleteRowsCompressedEventV1: case kWriteRowsCompressedEvent:
    case kUpdateRowsCompressedEvent: case kDeleteRowsCompressedEvent:
      return true;
    default:
      return false;
  }
}

RowOp OpFor(protocol::RowsKind kind) {
  switch (kind) {
    case protocol::RowsKind::kWrite: return RowOp::kInsert;
    case protocol::RowsKind::kUpdate: return RowOp::kUpdate;
    case protocol::RowsKind::kDelete: return RowOp::kDelete;
  }
  return RowOp::kInsert;
}

// Old-format temporal columns with no precision known (see SchemaCache).
bool HasUnsizedMariaTemporal(const protocol::TableDef& def) {
  for (const protocol::ColumnDef& c : def.columns) {
    if ((c.type == protocol::kTypeTimestamp || c.type == protocol::kTypeTime ||
         c.type == protocol::kTypeDatetime) &&
        c.meta == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

absl::Status ChangeDecoder::OnEvent(const replication::StreamEvent& e) {
  BR_RETURN_IF_ERROR(Dispatch(e.event, e.format, e.end));
  if (!e.ends_transaction) return absl::OkStatus();
  ++stats_.transactions;
  if (rolled_back_ && delivered_in_transaction_ > 0) {
    // The server logs a transaction it rolled back only when it also
    // changed a non-transactional table (MySQL manual, "Binary Logging
    // Options": mixing transactional and nontransactional tables); its rows
    // are then a mix of kept and undone ones, and the ones passed on cannot
    // be taken back.
    return absl::FailedPreconditionError(absl::StrCat(
        "the transaction ending at ", e.end.ToString(), " was rolled back after ",
        delivered_in_transaction_, " of its rows of subscribed tables were passed on (the "
        "server logs a rolled-back transaction when it also changed a non-transactional "
        "table): which of them the source kept cannot be told from the binlog; compare the "
        "tables with the source"));
  }
  if (!rolled_back_) BR_RETURN_IF_ERROR(DeliverStaged());
  ResetTransaction();
  if (tables_.size() > kCachedTablesAfterCommit) tables_.clear();
  gtid_kind_ = GtidKind::kNone;
  gtid_.clear();
  return sink_->OnCommit();
}

void ChangeDecoder::OnStreamRestart(const replication::BinlogPosition&) {
  sink_->OnRestart();
  ResetTransaction();
  gtid_kind_ = GtidKind::kNone;
  gtid_.clear();
}

size_t ChangeDecoder::StagedSize(const StagedRow& r) {
  return sizeof(StagedRow) + r.file.size() + r.before.size() + r.after.size();
}

void ChangeDecoder::ResetTransaction() {
  savepoints_.clear();
  staged_.clear();
  staged_bytes_ = 0;
  delivered_in_transaction_ = 0;
  rolled_back_ = false;
}

absl::Status ChangeDecoder::Deliver(uint64_t table_id, const RowChange& change) {
  if (savepoints_.empty() && staged_.empty()) {
    ++delivered_in_transaction_;
    ++stats_.rows;
    return sink_->OnRow(change);
  }
  // After a SAVEPOINT (and, to keep the order, for the rest of the
  // transaction): held until the transaction ends.
  const bool images = sink_->wants_images();
  StagedRow& r = staged_.emplace_back();
  r.op = change.op;
  r.table_id = table_id;
  r.file.assign(change.file);
  r.pos = change.pos;
  r.timestamp = change.timestamp;
  r.partial = change.partial;
  r.before.assign(images ? change.before_image : change.before);
  r.after.assign(images ? change.after_image : change.after);
  r.has_before = !r.before.empty();
  r.has_after = !r.after.empty();
  staged_bytes_ += StagedSize(r);
  if (staged_bytes_ <= kMaxStagedBytes) return absl::OkStatus();
  BR_RETURN_IF_ERROR(DeliverStaged());
  for (Savepoint& sp : savepoints_) sp.staged = kPassedOn;
  return absl::OkStatus();
}

absl::Status ChangeDecoder::DeliverStaged() {
  const bool images = sink_->wants_images();
  for (const StagedRow& r : staged_) {
    auto it = tables_.find(r.table_id);
    if (it == tables_.end()) {
      return absl::InternalError(absl::StrCat("a row staged after a savepoint at ", r.file, ":",
                                              r.pos, " lost its TABLE_MAP"));
    }
    RowChange change;
    change.op = r.op;
    change.table = &it->second.map.def;
    change.file = r.file;
    change.pos = r.pos;
    change.gtid = GtidText();
    change.timestamp = r.timestamp;
    change.partial = r.partial;
    std::string_view before = r.has_before ? std::string_view(r.before) : std::string_view();
    std::string_view after = r.has_after ? std::string_view(r.after) : std::string_view();
    if (images) {
      change.before_image = before;
      change.after_image = after;
    } else {
      change.before = before;
      change.after = after;
    }
    ++delivered_in_transaction_;
    ++stats_.rows;
    BR_RETURN_IF_ERROR(sink_->OnRow(change));
  }
  staged_.clear();
  staged_bytes_ = 0;
  return absl::OkStatus();
}

namespace {

// The savepoint name that ends `query` (SAVEPOINT `s`, ROLLBACK TO `s`,
// RELEASE SAVEPOINT `s`): unquoted, `` as `.
std::string SavepointName(std::string_view query) {
  std::string_view q = query;
  while (!q.empty() && (absl::ascii_isspace(static_cast<unsigned char>(q.back())) || q.back() == ';')) {
    q.remove_suffix(1);
  }
  std::string name;
  if (!q.empty() && q.back() == '`') {
    // Walk back to the opening quote, `` being a quote inside the name.
    size_t i = q.size() - 1;
    while (i > 0) {
      --i;
      if (q[i] == '`') {
        if (i > 0 && q[i - 1] == '`') {
          --i;
          continue;
        }
        break;
      }
    }
    for (size_t k = i + 1; k + 1 < q.size(); ++k) {
      name.push_back(q[k]);
      if (q[k] == '`') ++k;  // the second quote of ``
    }
    return name;
  }
  const size_t space = q.find_last_of(" \t\n\r");
  return std::string(space == std::string_view::npos ? q : q.substr(space + 1));
}

}  // namespace

absl::Status ChangeDecoder::OnSavepointStatement(std::string_view query,
                                                 const replication::BinlogPosition& end) {
  // MariaDB and MySQL log SAVEPOINT and ROLLBACK TO inside a transaction
  // whose rows after the savepoint stay in the binlog although undone (the
  // transaction also touched a non-transactional table). Semantics as in
  // sql/transaction.cc: a name set again moves; ROLLBACK TO keeps the
  // savepoint and drops later ones; RELEASE drops it and later ones.
  // Savepoint names are case-insensitive.
  const std::string name = SavepointName(query);
  auto find = [&]() -> std::vector<Savepoint>::iterator {
    for (auto it = savepoints_.end(); it != savepoints_.begin();) {
      --it;
      if (absl::EqualsIgnoreCase(it->name, name)) return it;
    }
    return savepoints_.end();
  };
  const absl::string_view text = absl::StripLeadingAsciiWhitespace(AV(query));
  if (absl::StartsWithIgnoreCase(text, "SAVEPOINT")) {
    if (auto it = find(); it != savepoints_.end()) savepoints_.erase(it);
    savepoints_.push_back(Savepoint{name, staged_.size()});
    return absl::OkStatus();
  }
  auto it = find();
  if (it == savepoints_.end()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "'", AV(query.substr(0, 200)), "' at ", end.ToString(), " names a savepoint no "
        "SAVEPOINT of this transaction set: which rows it undid cannot be told; compare the "
        "tables with the source"));
  }
  if (absl::StartsWithIgnoreCase(text, "RELEASE")) {
    savepoints_.erase(it, savepoints_.end());
    return absl::OkStatus();
  }
  // ROLLBACK [WORK] TO [SAVEPOINT] name
  if (it->staged == kPassedOn) {
    return absl::FailedPreconditionError(absl::StrCat(
        "'", AV(query.substr(0, 200)), "' at ", end.ToString(), " undoes rows that were "
        "already passed on (more than ", kMaxStagedBytes >> 20, " MiB of rows followed the "
        "savepoint, and rows are held that long only): compare the tables with the source"));
  }
  for (size_t k = it->staged; k < staged_.size(); ++k) {
    staged_bytes_ -= StagedSize(staged_[k]);
  }
  staged_.resize(it->staged);
  savepoints_.erase(it + 1, savepoints_.end());
  return absl::OkStatus();
}

absl::Status ChangeDecoder::Dispatch(const protocol::EventView& event,
                                     const protocol::FormatDescription& fde,
                                     const replication::BinlogPosition& end) {
  BR_RETURN_IF_ERROR(sink_->OnEvent(event, fde));
  uint8_t type = event.type();
  if (type == protocol::kTableMapEvent) return OnTableMap(event, fde, end);
  if (IsRowsEvent(type)) return OnRows(event, fde, end);
  switch (type) {
    case protocol::kQueryEvent:
    case protocol::kQueryCompressedEvent:
      return OnQuery(event, fde, end);
    case protocol::kGtidEvent:
    case protocol::kAnonymousGtidEvent:
    case protocol::kGtidTaggedEvent: {
      BR_ASSIGN_OR_RETURN(mysql_gtid_, protocol::ParseMysqlGtid(event));
      gtid_kind_ = mysql_gtid_.anonymous ? GtidKind::kNone : GtidKind::kMysql;
      gtid_.clear();
      return absl::OkStatus();
    }
    case protocol::kMariaGtidEvent: {
      BR_ASSIGN_OR_RETURN(maria_gtid_, protocol::ParseMariaGtid(event));
      gtid_kind_ = GtidKind::kMaria;
      gtid_.clear();
      return absl::OkStatus();
    }
    case protocol::kTransactionPayloadEvent:
      return OnPayload(event, fde, end);
    default:
      return absl::OkStatus();
  }
}

std::string_view ChangeDecoder::GtidText() {
  // Formatted on the first row of a transaction only: transactions of
  // unsubscribed tables never pay for it.
  if (gtid_.empty()) {
    if (gtid_kind_ == GtidKind::kMaria) gtid_ = maria_gtid_.ToString();
    if (gtid_kind_ == GtidKind::kMysql) gtid_ = mysql_gtid_.ToString();
  }
  return gtid_;
}

absl::Status ChangeDecoder::OnTableMap(const protocol::EventView& event,
                                       const protocol::FormatDescription& fde,
                                       const replication::BinlogPosition& end) {
  BR_ASSIGN_OR_RETURN(protocol::TableMapIds ids, protocol::PeekTableMapIds(event, fde));
  if (tables_.size() >= kCachedTablesAfterCommit + kMaxTablesPerTransaction &&
      !tables_.contains(ids.table_id)) {
    return absl::DataLossError(absl::StrCat(
        "TABLE_MAP at ", end.ToString(), ": the transaction maps more than ",
        kMaxTablesPerTransaction, " tables; the stream is damaged or hostile"));
  }
  CachedTable& entry = tables_[ids.table_id];
  // Every transaction repeats its TABLE_MAPs; an identical one needs no work.
  if (!entry.raw.empty() && entry.raw == event.body) return absl::OkStatus();
  entry.raw.clear();
  entry.subscribed = subscription_->Matches(ids.db, ids.table);
  if (entry.subscribed) {
    BR_ASSIGN_OR_RETURN(entry.map, protocol::ParseTableMap(event, fde));
    if (schema_ != nullptr) {
      if (!entry.map.has_optional(protocol::kOptColumnName)) {
        BR_RETURN_IF_ERROR(Annotate(schema_->Enrich(&entry.map.def),
                                    absl::StrCat("TABLE_MAP at ", end.ToString())));
      } else if (fde.is_mariadb && replication::SchemaCache::MayHoldFixedBinary(entry.map.def)) {
        BR_RETURN_IF_ERROR(Annotate(schema_->MarkFixedBinary(&entry.map.def),
                                    absl::StrCat("TABLE_MAP at ", end.ToString())));
      }
    }
  }
  entry.raw.assign(event.body);
  return absl::OkStatus();
}

absl::Status ChangeDecoder::OnRows(const protocol::EventView& event,
                                   const protocol::FormatDescription& fde,
                                   const replication::BinlogPosition& end) {
  BR_ASSIGN_OR_RETURN(uint64_t table_id, protocol::PeekRowsTableId(event, fde));
  auto it = tables_.find(table_id);
  if (it == tables_.end()) {
    return absl::DataLossError(absl::StrCat(
        AV(protocol::EventTypeName(event.type())), " event at ", end.ToString(), " uses table id ",
        table_id, " with no TABLE_MAP before it in this transaction"));
  }
  if (!it->second.subscribed) {
    ++stats_.rows_events_skipped;
    return absl::OkStatus();
  }
  const protocol::TableDef& def = it->second.map.def;
  BR_ASSIGN_OR_RETURN(protocol::RowsEventView rows, protocol::ParseRowsEvent(event, fde));
  ++stats_.rows_events_decoded;
  RowChange change;
  change.op = OpFor(rows.kind);
  change.table = &def;
  change.file = end.file;
  change.pos = end.offset;
  change.gtid = GtidText();
  change.timestamp = event.header.timestamp;
  if (sink_->wants_images()) {
    return image_splitter_.Split(rows, def, [&](const protocol::RawRowImages& r) {
      change.before_image = r.before;
      change.after_image = r.after;
      change.partial = !r.before_full || !r.after_full;
      return Deliver(table_id, change);
    });
  }
  // Decode errors already name the event type, offset, table and column.
  absl::Status s = row_decoder_.Decode(rows, def, [&](const protocol::DecodedRow& r) {
    change.before = r.has_before ? r.before_json : std::string_view();
    change.after = r.has_after ? r.after_json : std::string_view();
    change.partial = r.before_partial || r.after_partial;
    return Deliver(table_id, change);
  });
  if (!s.ok() && fde.is_mariadb && HasUnsizedMariaTemporal(def)) {
    return Annotate(s, absl::StrCat(
        "table ", def.db, ".", def.table, " has MariaDB pre-10.1 TIMESTAMP/TIME/DATETIME "
        "columns whose fractional precision is not in the binlog; decode with --source (the "
        "schema supplies it), or convert them on the source with ALTER TABLE ... FORCE"));
  }
  return s;
}

absl::Status ChangeDecoder::OnQuery(const protocol::EventView& event,
                                    const protocol::FormatDescription& fde,
                                    const replication::BinlogPosition& end) {
  BR_ASSIGN_OR_RETURN(protocol::QueryEvent q, protocol::ParseQueryEvent(event, fde, &scratch_));
  protocol::StatementKind kind = protocol::ClassifyStatement(q.query);
  if (kind == protocol::StatementKind::kSavepoint) return OnSavepointStatement(q.query, end);
  if (kind == protocol::StatementKind::kRollback &&
      absl::StartsWithIgnoreCase(absl::StripLeadingAsciiWhitespace(AV(q.query)), "ROLLBACK")) {
    rolled_back_ = true;  // not XA ROLLBACK: the sink follows XA itself
  }
  if (kind != protocol::StatementKind::kDdl && kind != protocol::StatementKind::kOther) {
    return absl::OkStatus();
  }
  BR_RETURN_IF_ERROR(sink_->OnStatement(StatementSeen{q.db, q.query, end.file, end.offset}));
  // Any other statement in a row-based binlog is DDL or administration.
  // Drop cached schemas and table maps so the next TABLE_MAP re-reads them;
  // DDL is rare, and a precise parse of every statement form (RENAME across
  // schemas, multi-table DROP) is not worth the risk of a stale entry.
  if (schema_ != nullptr) schema_->InvalidateAll();
  for (auto& [id, entry] : tables_) entry.raw.clear();
  return absl::OkStatus();
}

absl::Status ChangeDecoder::OnPayload(const protocol::EventView& event,
                                      const protocol::FormatDescription& fde,
                                      const replication::BinlogPosition& end) {
  // A compressed transaction (MySQL binlog_transaction_compression): the
  // inner events have no CRC and no log_pos; their rows report the
  // payload's own end position, the only place a reader can resume from.
  BR_ASSIGN_OR_RETURN(protocol::TransactionPayload tp, protocol::ParseTransactionPayload(event));
  BR_RETURN_IF_ERROR(protocol::DecompressTransactionPayload(tp, &payload_));
  protocol::PayloadEventIterator it(payload_, event.offset);
  protocol::EventView inner;
  while (true) {
    BR_ASSIGN_OR_RETURN(bool more, it.Next(&inner));
    if (!more) break;
    // Only data events matter inside a payload; its commit is the payload's
    // end (TransactionBoundary treats the whole payload as a transaction).
    BR_RETURN_IF_ERROR(Dispatch(inner, fde, end));
  }
  return absl::OkStatus();
}

}  // namespace binrelay::apply
