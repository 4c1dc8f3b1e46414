#include "apply/pipeline.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "apply/change_decoder.h"
#include "apply/ddl_tables.h"
#include "apply/ordered_key.h"
#include "apply/row_key.h"
#include "apply/sql_literal.h"
#include "apply/xa_holds.h"
#include "protocol/control_events.h"
#include "protocol/event_type.h"
#include "protocol/gtid_events.h"
#include "protocol/query_event.h"
#include "protocol/statement_redaction.h"
#include "protocol/status_macros.h"
#include "replication/binlog_status.h"
#include "replication/connection_sql_source.h"
#include "replication/store_index.h"
#include "replication/gtid_start.h"
#include "replication/store_reader.h"
#include "replication/transaction_boundary.h"
#include "spdlog/spdlog.h"

namespace binrelay::apply {
namespace {

std::string TableKey(std::string_view db, std::string_view table) {
  return absl::StrCat(AV(db), absl::string_view("\0", 1), AV(table));
}

// A SqlSource over a TargetSession, for the shape check.
class SessionSqlSource : public replication::SqlSource {
 public:
  explicit SessionSqlSource(TargetSession* s) : s_(s) {}
  absl::StatusOr<std::vector<replication::SqlRow>> Query(std::string_view sql) override {
    BR_ASSIGN_OR_RETURN(protocol::QueryResult r, s_->Query(sql));
    return std::move(r.rows);
  }
  std::string Peer() const override { return s_->peer(); }

 private:
  TargetSession* s_;
};

}  // namespace

struct ApplyPipeline::Drain {
  std::vector<std::pair<const ApplyTable*, DrainedTable>> tables;
  // No change in the drain lies before `since` (the checkpoint the drain
  // before carried); everything before `checkpoint` is in this drain or an
  // earlier one.
  replication::BinlogPosition since;
  replication::BinlogPosition checkpoint;
  uint32_t checkpoint_ts = 0;
  size_t bytes = 0;
};

// Receives the decoder's raw row images for the subscribed tables.
class ApplyPipeline::Sink : public ChangeSink {
 public:
  explicit Sink(ApplyPipeline* p) : p_(p), xa_(&p->xa_) {}
  // A sink that only collects prepared XA transactions' rows into `holds`
  // (ApplyPipeline::ReadBackXa): nothing reaches the buffers, no statement
  // stops the pipeline and no live table state changes. A group whose rows
  // cannot be applied today (logged before a DDL, partial images) is noted
  // in `unusable` under its xid instead of failing the scan.
  Sink(ApplyPipeline* p, XaHolds* holds, ReadBack* out)
      : p_(p), xa_(holds), read_back_(true), out_(out) {}
  bool wants_images() const override { return true; }
  void OnRestart() override {}
  // A transaction ended (called before the reader moves last_commit_): an
  // XA group still open ended as a plain commit.
  absl::Status OnCommit() override {
    xa_->EndTransaction();
    if (!xa_->in_group()) return absl::OkStatus();
    std::vector<HeldRow> rows = xa_->TakeStaged();
    return read_back_ ? absl::OkStatus() : BufferAll(std::move(rows));
  }

  absl::Status OnStatement(const StatementSeen& s) override {
    if (read_back_) return absl::OkStatus();
    for (const DdlTarget& t : DdlTables(s.db, s.query)) {
      if (t.db == p_->options_.checkpoint_schema) continue;
      bool ours = false;
      if (t.table.empty()) {
        for (const auto& [key, table] : p_->tables_) {
          ours = ours || (p_->lower_case_table_names_ != 0
                              ? absl::EqualsIgnoreCase(table->source.db, t.db)
                              : table->source.db == t.db);
        }
      } else {
        ours = p_->DdlNamesOurs(t.db, t.table);
      }
      if (!ours) continue;
      // Quoted in /status and the log: a credential in it is hidden.
      std::string text = protocol::RedactedStatement(s.query, 300);
      if (!t.unlogged_action.empty()) {
        // Adds a foreign key only: rows keep their shape, but from here on
        // the source changes this table without logging it.
        if (!p_->cascades_unlogged_) continue;
        p_->ddl_stop_ = absl::FailedPreconditionError(absl::StrCat(
            "subscribed table ", t.db, ".", t.table, " gained a foreign key with ",
            t.unlogged_action, " at ", AV(s.file), ":", s.pos, ": ", text,
            "; the source makes those changes without logging them, so the target would "
            "keep rows the source removes or changes. Drop the key or make it RESTRICT on the "
            "source, compare the table with the target (rows its actions changed since are "
            "not in the binlog), then restart binrelay; or leave the table out of `tables`"));
        return absl::OkStatus();
      }
      if (t.dml) {
        p_->ddl_stop_ = absl::FailedPreconditionError(absl::StrCat(
            "a row change to subscribed table ", t.db, ".", t.table, " was logged as a "
            "statement at ", AV(s.file), ":", s.pos, " (binlog_format=STATEMENT in that "
            "session): its rows are not in the binlog and cannot be applied: ", text,
            "; apply it to the target by hand, then restart binrelay"));
        return absl::OkStatus();
      }
      // Not an error yet: the reader first flushes every transaction before
      // the statement and checkpoints past it, so a restart after the
      // operator's fix resumes with rows of the new shape.
      p_->ddl_stop_ = absl::FailedPreconditionError(absl::StrCat(
          "DDL on subscribed table ", t.db, ".", t.table.empty() ? "*" : t.table, " at ",
          AV(s.file), ":", s.pos, ": ",
          text, s.query.size() > 300 ? "..." : "",
          "; run this statement (or one to the same effect) on the target table, then "
          "restart binrelay: the pipeline resumes after it"));
      return absl::OkStatus();
    }
    return absl::OkStatus();
  }

  absl::Status OnRow(const RowChange& row) override {
    if (read_back_) return ReadBackRow(row);
    const protocol::TableDef& map = *row.table;
    ApplyTable* t = Lookup(map);
    if (t == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "rows for ", map.db, ".", map.table, " at ", AV(row.file), ":", row.pos,
          " match tables = ", p_->options_.tables,
          " but the table was not there when the pipeline checked its tables; restart "
          "binrelay to check it"));
    }
    if (!SameTableMap(map, *t)) {
      if (t->def_ready) {
        return absl::FailedPreconditionError(absl::StrCat(
            "the column types of ", t->Name(), " changed at ", AV(row.file), ":", row.pos,
            " without a DDL the pipeline saw; make the target match and restart binrelay"));
      }
      BR_RETURN_IF_ERROR(MergeTableMap(map, t));
    }
    if (row.partial) {
      return absl::FailedPreconditionError(absl::StrCat(
          "row images of ", t->Name(), " at ", AV(row.file), ":", row.pos,
          " lack columns: the source must log full images (binlog_row_image=FULL); rows "
          "applied from partial images would lose the missing columns"));
    }
    p_->changes_read_.fetch_add(1, std::memory_order_relaxed);
    ++p_->changes_since_handoff_;
    if (xa_->in_group()) {
      // Not the target's until the source commits it (xa_holds.h).
      xa_->Stage(HeldRow{t, row.op, std::string(row.before_image),
                         std::string(row.after_image)});
      if (xa_->bytes() >= p_->options_.soft_limit_bytes) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "apply pipeline ", p_->options_.name, ": prepared XA transactions hold ",
            xa_->bytes(), " bytes of rows of subscribed tables at ", AV(row.file), ":",
            row.pos, ", more than soft_limit_bytes = ", p_->options_.soft_limit_bytes,
            "; raise soft_limit_bytes, or commit or roll back the XA transactions on the "
            "source (XA RECOVER lists them)"));
      }
      return absl::OkStatus();
    }
    return Buffer(t, row.op, row.before_image, row.after_image);
  }

  // The XA bookkeeping of each event (inner events of compressed
  // transactions included), before the decoder handles it.
  absl::Status OnEvent(const protocol::EventView& ev,
                       const protocol::FormatDescription& fde) override {
    XaHolds& xa = *xa_;
    switch (ev.type()) {
      case protocol::kMariaGtidEvent: {
        BR_ASSIGN_OR_RETURN(protocol::MariaGtid g, protocol::ParseMariaGtid(ev));
        if (g.flags2 & protocol::kMariaGtidPreparedXa) {
          xa.BeginGroup(p_->last_commit_);
          group_problem_.clear();
        }
        return absl::OkStatus();
      }
      case protocol::kQueryEvent:
      case protocol::kQueryCompressedEvent: {
        BR_ASSIGN_OR_RETURN(protocol::QueryEvent q,
                            protocol::ParseQueryEvent(ev, fde, &query_scratch_));
        // XA START/COMMIT/ROLLBACK classify as BEGIN/COMMIT/ROLLBACK for
        // transaction boundaries; here each XA form matters.
        XaStatement st = ParseXaStatement(q.query);
        switch (st.kind) {
          case XaStatement::Kind::kStart:
            xa.BeginGroup(p_->last_commit_);
            group_problem_.clear();
            return absl::OkStatus();
          case XaStatement::Kind::kPrepare:
            Prepare(st.xid);
            return absl::OkStatus();
          case XaStatement::Kind::kCommitOnePhase: {
            std::vector<HeldRow> rows = xa.TakeStaged();
            return read_back_ ? absl::OkStatus() : BufferAll(std::move(rows));
          }
          case XaStatement::Kind::kCommit: {
            bool seen = false;
            std::vector<HeldRow> rows = xa.Commit(st.xid, &seen);
            if (read_back_) {
              out_->unusable.erase(st.xid);  // decided before the read began
              return absl::OkStatus();
            }
            // Prepared before this read began (a pipeline started, or a
            // checkpoint taken, while it was undecided): its rows are read
            // back from the store.
            if (!seen) {
              BR_ASSIGN_OR_RETURN(rows, p_->ReadBackXa(st.xid));
            }
            return BufferAll(std::move(rows));
          }
          case XaStatement::Kind::kRollback:
            xa.Rollback(st.xid);
            if (read_back_) {
              out_->unusable.erase(st.xid);
            } else if (p_->read_back_) {
              p_->read_back_->holds.Rollback(st.xid);  // read back, never needed
              p_->read_back_->unusable.erase(st.xid);
            }
            return absl::OkStatus();
          case XaStatement::Kind::kOther:
            return absl::OkStatus();
        }
        return absl::OkStatus();
      }
      case protocol::kXaPrepareEvent: {
        BR_ASSIGN_OR_RETURN(protocol::XaPrepareEvent x, protocol::ParseXaPrepare(ev));
        if (x.one_phase) {
          std::vector<HeldRow> rows = xa.TakeStaged();
          return read_back_ ? absl::OkStatus() : BufferAll(std::move(rows));
        }
        Prepare(XaEventXid(x));
        return absl::OkStatus();
      }
      default:
        return absl::OkStatus();
    }
  }


 private:
  ApplyTable* Lookup(const protocol::TableDef& map) {
    if (last_ != nullptr && last_id_ == map.table_id && last_->source.db == map.db &&
        last_->source.table == map.table) {
      return last_;
    }
    auto it = p_->tables_.find(TableKey(map.db, map.table));
    if (it == p_->tables_.end()) return nullptr;
    last_ = it->second.get();
    last_id_ = map.table_id;
    return last_;
  }

  // One change into its table's buffer (keyed: by primary key).
  absl::Status Buffer(ApplyTable* t, RowOp op, std::string_view before_image,
                      std::string_view after_image) {
    if (t->gate != nullptr) return BufferGated(t, op, before_image, after_image);
    TableBuffer* buffer = p_->buffers_[t].get();
    const size_t before_bytes = buffer->bytes();
    switch (op) {
      case RowOp::kInsert:
        if (buffer->keyed()) {
          BR_RETURN_IF_ERROR(keys_.Encode(after_image, t->def, t->def.primary_key, &key_));
        } else {
          key_.clear();
        }
        buffer->Upsert(key_, after_image);
        break;
      case RowOp::kDelete:
        if (buffer->keyed()) {
          BR_RETURN_IF_ERROR(keys_.Encode(before_image, t->def, t->def.primary_key, &key_));
        }
        buffer->Delete(key_, before_image);
        break;
      case RowOp::kUpdate:
        BR_RETURN_IF_ERROR(keys_.Encode(before_image, t->def, t->def.primary_key, &key_));
        BR_RETURN_IF_ERROR(keys_.Encode(after_image, t->def, t->def.primary_key, &after_key_));
        // A new primary key: the old row goes, the new one comes.
        if (key_ != after_key_) buffer->Delete(key_, before_image);
        buffer->Upsert(after_key_, after_image);
        break;
    }
    p_->buffered_bytes_ = p_->buffered_bytes_ + buffer->bytes() - before_bytes;
    if (p_->buffered_bytes_ + p_->inflight_bytes_ >= p_->options_.soft_limit_bytes) {
      BR_RETURN_IF_ERROR(p_->HandOff());
    }
    return absl::OkStatus();
  }

  // A table a move's copier is copying: each change (each side of a key
  // change) is first offered to its gate, which drops what the copier will
  // read later (copy_watermarks.h).
  absl::Status BufferGated(ApplyTable* t, RowOp op, std::string_view before_image,
                           std::string_view after_image) {
    TableCopyGate& gate = *t->gate;
    auto admit = [&](std::string_view image) -> absl::StatusOr<bool> {
      if (!gate.exact_order()) return gate.Admit({});
      BR_RETURN_IF_ERROR(EncodeOrderedKey(image, t->def, t->def.primary_key, &ordered_scratch_,
                                          &ordered_));
      return gate.Admit(ordered_);
    };
    TableBuffer* buffer = p_->buffers_[t].get();
    const size_t before_bytes = buffer->bytes();
    if (op == RowOp::kUpdate) {
      BR_RETURN_IF_ERROR(keys_.Encode(before_image, t->def, t->def.primary_key, &key_));
      BR_RETURN_IF_ERROR(keys_.Encode(after_image, t->def, t->def.primary_key, &after_key_));
      if (key_ != after_key_) {
        BR_ASSIGN_OR_RETURN(bool keep_old, admit(before_image));
        if (keep_old) Put(buffer, true, key_, before_image);
      }
      BR_ASSIGN_OR_RETURN(bool keep, admit(after_image));
      if (keep) Put(buffer, false, after_key_, after_image);
    } else {
      const std::string_view image = op == RowOp::kDelete ? before_image : after_image;
      BR_ASSIGN_OR_RETURN(bool keep, admit(image));
      if (keep) {
        if (buffer->keyed()) {
          BR_RETURN_IF_ERROR(keys_.Encode(image, t->def, t->def.primary_key, &key_));
        } else {
          key_.clear();
        }
        Put(buffer, op == RowOp::kDelete, key_, image);
      }
    }
    p_->buffered_bytes_ = p_->buffered_bytes_ + buffer->bytes() - before_bytes;
    if (p_->buffered_bytes_ + p_->inflight_bytes_ >= p_->options_.soft_limit_bytes) {
      BR_RETURN_IF_ERROR(p_->HandOff());
    }
    return absl::OkStatus();
  }
  static void Put(TableBuffer* buffer, bool is_delete, std::string_view key,
                  std::string_view image) {
    if (is_delete) {
      buffer->Delete(key, image);
    } else {
      buffer->Upsert(key, image);
    }
  }

  void Prepare(const std::string& xid) {
    xa_->Prepare(xid);
    if (read_back_ && !group_problem_.empty()) out_->unusable[xid] = group_problem_;
  }

  // A row while reading back: staged if its group is an XA group and the
  // table can take it as it is now. The shape a table not yet seen live
  // would take is kept aside (ReadBack::shapes), never written to the table.
  absl::Status ReadBackRow(const RowChange& row) {
    if (!xa_->in_group()) return absl::OkStatus();
    const protocol::TableDef& map = *row.table;
    ApplyTable* t = Lookup(map);
    if (t == nullptr) return absl::OkStatus();  // the decoder passes checked tables only
    const ApplyTable* shape = t;
    if (!t->def_ready) {
      auto [it, fresh] = out_->shapes.try_emplace(t, *t);
      if (fresh && !MergeTableMap(map, &it->second).ok()) it->second.def_ready = false;
      shape = &it->second;
    }
    std::string problem;
    if (!SameTableMap(map, *shape)) {
      problem = absl::StrCat("its rows of ", t->Name(), " at ", AV(row.file), ":", row.pos,
                             " were logged with other column types than the table has now "
                             "(a DDL since)");
    } else if (row.partial) {
      problem = absl::StrCat("its row images of ", t->Name(), " at ", AV(row.file), ":",
                             row.pos, " lack columns (binlog_row_image was not FULL)");
    }
    if (!problem.empty()) {
      if (group_problem_.empty()) group_problem_ = std::move(problem);
      return absl::OkStatus();
    }
    xa_->Stage(HeldRow{t, row.op, std::string(row.before_image), std::string(row.after_image)});
    if (xa_->bytes() >= p_->options_.soft_limit_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "apply pipeline ", p_->options_.name, ": XA transactions prepared before ",
          p_->read_start_.ToString(), " and read back from the store hold ", xa_->bytes(),
          " bytes of rows of subscribed tables at ", AV(row.file), ":", row.pos,
          ", more than soft_limit_bytes = ", p_->options_.soft_limit_bytes,
          "; raise soft_limit_bytes"));
    }
    return absl::OkStatus();
  }

  absl::Status BufferAll(std::vector<HeldRow> rows) {
    for (const HeldRow& r : rows) {
      BR_RETURN_IF_ERROR(Buffer(r.table, r.op, r.before_image, r.after_image));
    }
    return absl::OkStatus();
  }

  ApplyPipeline* p_;
  XaHolds* xa_;
  bool read_back_ = false;
  ReadBack* out_ = nullptr;
  std::string group_problem_;  // read back: why the open group cannot be applied
  KeyEncoder keys_;
  std::string query_scratch_;
  std::string key_;
  std::string after_key_;
  std::string ordered_, ordered_scratch_;  // BufferedGated
  ApplyTable* last_ = nullptr;
  uint64_t last_id_ = 0;
};

ApplyPipeline::ApplyPipeline(PipelineOptions options, replication::StoreReadSide* store,
                             protocol::ConnectOptions source, CopyGate* gate)
    : options_(std::move(options)),
      store_(store),
      source_(std::move(source)),
      gate_(gate),
      cur_concurrency_(options_.concurrency),
      cur_batch_rows_(options_.batch_rows) {
  auto pattern = Subscription::Parse(options_.tables);
  if (pattern.ok()) pattern_ = *pattern;
  status_.name = options_.name;
  status_.state = PipelineState::kPreparing;
  status_.target = absl::StrCat(options_.target.host, ":", options_.target.port);
  status_.tables = options_.tables;
  status_.concurrency = cur_concurrency_;
  status_.batch_rows = cur_batch_rows_;
}

ApplyPipeline::~ApplyPipeline() { Stop(); }

std::string ApplyPipeline::LocalCheckpointPath() const {
  return absl::StrCat(store_->dir(), "/.apply/", options_.name);
}

absl::Status ApplyPipeline::WriteLocalCheckpoint(const replication::BinlogPosition& at) {
  const std::string dir = absl::StrCat(store_->dir(), "/.apply");
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", std::strerror(errno)));
  }
  const std::string path = LocalCheckpointPath();
  const std::string tmp = path + ".tmp";
  const std::string text = absl::StrCat(at.file, ":", at.offset, "\n");
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot write ", tmp, ": ", std::strerror(errno)));
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            ::fdatasync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status ApplyPipeline::ForgetLocalCheckpoint() {
  const std::string path = LocalCheckpointPath();
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return absl::InternalError(absl::StrCat("cannot remove ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<replication::BinlogPosition> ApplyPipeline::ResolveGtidStart() const {
  auto at = replication::FirstTransactionNotIn(*store_, options_.start.gtid_set);
  if (!at.ok()) {
    return Annotate(at.status(), absl::StrCat("apply pipeline ", options_.name,
                                              ": start = gtid:", options_.start.gtid_set));
  }
  return *at;
}

absl::Status ApplyPipeline::Restore() {
  BR_RETURN_IF_ERROR(Subscription::Parse(options_.tables).status());
  std::ifstream in(LocalCheckpointPath());
  std::string line;
  if (in && std::getline(in, line)) {
    auto spec = replication::ParseStartSpec(line);
    if (!spec.ok() || spec->kind != replication::StartSpec::Kind::kPosition) {
      return absl::DataLossError(absl::StrCat("apply pipeline ", options_.name, ": ",
                                              LocalCheckpointPath(), " holds '", line,
                                              "', not FILE:POS; remove it to start over"));
    }
    position_ = spec->position;
  } else {
    switch (options_.start.kind) {
      case replication::StartSpec::Kind::kPosition:
        position_ = options_.start.position;
        break;
      case replication::StartSpec::Kind::kEarliest: {
        auto files = store_->CommittedFiles();
        position_ = files.empty() ? replication::BinlogPosition{} :
                                    replication::BinlogPosition{files.front().name, 4};
        break;
      }
      case replication::StartSpec::Kind::kCurrent:
        position_ = store_->committed().position;
        break;
      case replication::StartSpec::Kind::kGtid: {
        // Every transaction the position holds is on the target already;
        // reading starts at the first stored one it does not hold.
        // An empty store cannot say yet, and a position the store cannot
        // place (its files purged, a domain it lacks) must not stop the
        // whole relay: Prepare resolves it again after reading the target's
        // checkpoint, retrying with a clear error. Until then the claim
        // holds everything stored.
        if (store_->CommittedFiles().empty()) break;
        if (auto at = ResolveGtidStart(); at.ok()) {
          position_ = *at;
        } else {
          spdlog::warn("{}; the pipeline will retry once running", SV(at.status().message()));
        }
        break;
      }
    }
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    status_.flushed = position_;  // what the claim holds, before the target answers
    status_.read = position_;
  }
  // An empty position (empty store) pins everything that will be stored.
  pin_ = store_->Pin(position_.file.empty() ? replication::BinlogPosition{"", 4} : position_,
                     absl::StrCat("apply pipeline ", options_.name));
  return absl::OkStatus();
}

void ApplyPipeline::Start() {
  drainer_ = std::thread([this] { DrainLoop(); });
  reader_ = std::thread([this] { Run(); });
}

void ApplyPipeline::Stop() {
  std::lock_guard<std::mutex> once(stop_mu_);  // two threads may stop it at once
  {
    // Under the lock: a waiter between testing its predicate and blocking
    // would otherwise miss this wake-up.
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (reader_.joinable()) reader_.join();
  if (drainer_.joinable()) drainer_.join();
  // A stopped pipeline (a finished move's, say, in a serve that runs on)
  // must not hold retention back; a restart pins again from its checkpoint.
  pin_.Release();
}

PipelineStatus ApplyPipeline::Status() const {
  std::lock_guard<std::mutex> l(mu_);
  PipelineStatus s = status_;
  s.changes_read = changes_read_.load(std::memory_order_relaxed);
  s.rows_written = rows_written_.load(std::memory_order_relaxed);
  s.xa_held = xa_held_.load(std::memory_order_relaxed);
  // Lag: how far the flushed position is behind what the store holds.
  replication::CommittedEnd end = store_->committed();
  if (!s.flushed.file.empty() && !end.position.file.empty()) {
    if (s.flushed.file == end.position.file) {
      s.lag_bytes = end.position.offset > s.flushed.offset ? end.position.offset - s.flushed.offset : 0;
    } else {
      uint64_t bytes = 0;
      for (const auto& f : store_->CommittedFiles()) {
        int c = replication::CompareBinlogNames(f.name, s.flushed.file);
        if (c == 0) bytes += f.size > s.flushed.offset ? f.size - s.flushed.offset : 0;
        if (c > 0) bytes += f.size;
      }
      s.lag_bytes = bytes;
    }
  }
  if (s.lag_bytes > 0 && flushed_ts_ != 0) {
    s.lag_seconds = std::max<double>(0, absl::ToUnixSeconds(absl::Now()) - flushed_ts_);
  }
  return s;
}

std::string PipelineStatus::StateText() const {
  if (paused_at) return absl::StrCat("paused at ", paused_at->ToString());
  if (!activity.empty()) return activity;
  return std::string(PipelineStateName(state));
}

void ApplyPipeline::SetActivity(PipelineState state, std::string activity) {
  std::lock_guard<std::mutex> l(mu_);
  status_.state = state;
  status_.activity = std::move(activity);
}

void ApplyPipeline::SetState(PipelineState state, std::string error) {
  std::lock_guard<std::mutex> l(mu_);
  status_.state = state;
  status_.activity.clear();
  if (!error.empty()) status_.last_error = std::move(error);
}

bool ApplyPipeline::Sleep(absl::Duration d) {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait_for(l, absl::ToChronoMilliseconds(d), [&] { return stopping_.load(); });
  return !stopping_;
}

void ApplyPipeline::Run() {
  while (!stopping_) {
    absl::Status s = Prepare();
    if (!s.ok()) {
      if (stopping_) break;
      spdlog::error("apply pipeline {}: {} (retrying in 5 s)", options_.name, SV(s.message()));
      SetState(PipelineState::kRetrying, std::string(s.message()));
      if (!Sleep(absl::Seconds(5))) break;
      continue;
    }
    spdlog::info("apply pipeline {}: {} table(s) checked; applying to {} from {}",
                 options_.name, tables_.size(), status_.target, position_.ToString());
    s = ReadLoop();
    if (s.ok() || stopping_) {
      // Stopping: what is buffered is re-read from the checkpoint next time.
      break;
    }
    // Let a drain in flight finish (it holds whole earlier transactions).
    (void)WaitForDrain();
    spdlog::error("apply pipeline {} stopped: {}", options_.name, SV(s.message()));
    SetState(PipelineState::kError, std::string(s.message()));
    break;
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
    reader_done_ = true;
  }
  cv_.notify_all();
}

absl::Status ApplyPipeline::Prepare() {
  SetState(PipelineState::kPreparing);
  if (sessions_.empty()) {
    for (size_t i = 0; i < options_.concurrency; ++i) {
      sessions_.push_back(
          std::make_unique<TargetSession>(options_.target, options_.lock_wait_timeout_seconds));
    }
  }
  TargetSession& target = *sessions_[0];
  const std::string where = absl::StrCat("apply pipeline ", options_.name, ", target ",
                                         target.peer());
  std::string schema;
  AppendIdentifier(options_.checkpoint_schema, &schema);
  BR_RETURN_IF_ERROR(Annotate(target.Execute(absl::StrCat("CREATE DATABASE IF NOT EXISTS ", schema)),
                              where));
  BR_RETURN_IF_ERROR(Annotate(
      target.Execute(absl::StrCat(
          "CREATE TABLE IF NOT EXISTS ", schema, ".`apply_checkpoint` ("
          "pipeline VARCHAR(64) NOT NULL PRIMARY KEY, "
          "binlog_file VARCHAR(255) NOT NULL, "
          "binlog_pos BIGINT UNSIGNED NOT NULL, "
          "tables TEXT NOT NULL, "
          "updated_at TIMESTAMP(6) NOT NULL) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4")),
      where));
  std::string select = absl::StrCat("SELECT binlog_file, binlog_pos FROM ", schema,
                                    ".`apply_checkpoint` WHERE pipeline = ");
  AppendQuotedString(options_.name, &select);
  BR_ASSIGN_OR_RETURN(protocol::QueryResult cp, target.Query(select));
  if (!cp.rows.empty() && cp.rows[0].size() == 2 && cp.rows[0][0] && cp.rows[0][1]) {
    replication::BinlogPosition at{*cp.rows[0][0], 4};
    if (!absl::SimpleAtoi(*cp.rows[0][1], &at.offset)) {
      return absl::DataLossError(absl::StrCat(where, ": checkpoint row holds binlog_pos '",
                                              *cp.rows[0][1], "'"));
    }
    position_ = at;  // the target's checkpoint is the truth
  }
  if (position_.file.empty()) {
    auto files = store_->CommittedFiles();
    if (files.empty()) return absl::UnavailableError("the store holds no binlog yet");
    if (options_.start.kind == replication::StartSpec::Kind::kGtid) {
      BR_ASSIGN_OR_RETURN(position_, ResolveGtidStart());
    } else {
      position_ = options_.start.kind == replication::StartSpec::Kind::kCurrent
                      ? store_->committed().position
                      : replication::BinlogPosition{files.front().name, 4};
    }
  }
  pin_.Advance(position_);

  // The tables: every source table the pattern matches, checked against
  // the target's.
  bool bulk = false;
  std::string why_text = options_.bulk_replace ? "" : " (bulk_replace = off)";
  if (options_.bulk_replace) {
    BR_ASSIGN_OR_RETURN(bulk, target.SupportsBulk());
    if (!bulk) why_text = " (the target has no bulk commands)";
  }
  if (bulk) {
    // A bulk command is logged by the statement it prepared, markers and
    // all, when the target writes a STATEMENT-format binlog (MariaDB only
    // switches bulk operations to row format under MIXED; sql_class.cc
    // THD::decide_logging_format): its replicas could not run that. Where
    // the session could not switch to ROW (TargetSession), REPLACE text.
    if (target.logs_statements()) {
      bulk = false;
      why_text = " (the target logs statements: binlog_format is STATEMENT)";
    }
  }
  bulk_ = bulk;
  {
    std::lock_guard<std::mutex> l(mu_);
    status_.upsert_protocol = bulk ? "bulk" : absl::StrCat("text", why_text);
  }
  BR_ASSIGN_OR_RETURN(const size_t max_statement, target.MaxStatementBytes());
  // A DDL the source ran after the checkpoint: information_schema shows the
  // table as it is after it, but the rows stored before it were logged
  // under its earlier definition, and a MariaDB binlog with the default
  // binlog_row_metadata=NO_LOG carries no signedness or character set to
  // tell them apart. The target table still has that earlier definition
  // (the pipeline stops at every DDL until the operator changes it), so
  // those rows are read with the target's; the pipeline then stops at the
  // statement as it does when it meets one live. The store is scanned for
  // such statements only when something needs explaining: a table whose
  // source and target definitions differ, or one the target has and the
  // source no longer has (dropped or renamed since). Where the two agree,
  // either reads the rows alike.
  replication::ConnectionSqlSource source(source_);
  // InnoDB carries out referential actions below the binlog (MariaDB's
  // "Replication and Foreign Keys": cascaded changes are not logged). MySQL
  // 9.7 can carry them out in the server instead, innodb_native_foreign_keys
  // = OFF: the child table's changes are then logged as row events (MySQL
  // 9.7 manual, "Replication and Foreign Keys").
  {
    auto native = source.Query("SHOW GLOBAL VARIABLES LIKE 'innodb_native_foreign_keys'");
    if (!native.ok()) return Annotate(native.status(), "reading the source's foreign key handling");
    cascades_unlogged_ = native->empty() || native->front().size() < 2 ||
                         !absl::EqualsIgnoreCase(native->front()[1].value_or("ON"), "OFF");
    auto lctn = source.Query("SELECT @@GLOBAL.lower_case_table_names");
    if (!lctn.ok()) return Annotate(lctn.status(), "reading the source's lower_case_table_names");
    lower_case_table_names_ = 0;
    if (!lctn->empty() && !lctn->front().empty() && lctn->front()[0].has_value()) {
      (void)absl::SimpleAtoi(*lctn->front()[0], &lower_case_table_names_);
    }
  }
  std::optional<absl::flat_hash_map<std::string, DdlAhead>> ddl_ahead;
  auto ddl_at = [&](const std::string& db,
                    const std::string& table) -> absl::StatusOr<const DdlAhead*> {
    if (!ddl_ahead) {
      // The definitions just read may already show a DDL the store has not
      // received: the scan must reach the source's position first.
      BR_ASSIGN_OR_RETURN(replication::BinlogPosition now, replication::ReadBinlogStatus(source));
      replication::BinlogPosition stored = store_->committed().position;
      // Usually a moment: binrelay has just started and its upstream
      // session is catching up. Waiting here (state "waiting for the store")
      // reads better than a failed start retried every 5 s.
      const absl::Time give_up = absl::Now() + absl::Seconds(60);
      if (replication::PositionBefore(stored, now)) {
        SetActivity(PipelineState::kPreparing,
                    absl::StrCat("waiting for the store to reach ", now.ToString()));
      }
      while (replication::PositionBefore(stored, now) && absl::Now() < give_up) {
        if (!Sleep(absl::Milliseconds(100))) return absl::CancelledError("stopping");
        stored = store_->committed().position;
      }
      SetState(PipelineState::kPreparing);
      if (replication::PositionBefore(stored, now)) {
        return absl::UnavailableError(absl::StrCat(
            "the definitions of ", db, ".", table, " differ between source and target, and "
            "binrelay's store (at ", stored.ToString(), ") has not reached the source's "
            "position ", now.ToString(), " after 60 s, to find the DDL that may explain it; "
            "check the upstream session (SHOW SLAVE STATUS on binrelay's port)"));
      }
      BR_ASSIGN_OR_RETURN(auto found, FindDdlAhead(position_));
      ddl_ahead = std::move(found);
    }
    auto it = ddl_ahead->find(DdlKey(db, table));
    if (it == ddl_ahead->end()) it = ddl_ahead->find(DdlKey(db, ""));
    return it == ddl_ahead->end() ? nullptr : &it->second;
  };
  auto listed = ListTables(source);
  if (!listed.ok()) return Annotate(listed.status(), "listing the source's tables");
  absl::flat_hash_set<std::string> on_source;
  for (const auto& [db, table] : *listed) on_source.insert(TableKey(db, table));
  std::vector<std::pair<std::string, std::string>> all = *listed;
  SessionSqlSource target_sql(&target);
  if (options_.target_schema.empty()) {
    // Subscribed tables a later DDL dropped or renamed are still to be read
    // up to that statement.
    auto on_target = ListTables(target_sql);
    if (!on_target.ok()) return Annotate(on_target.status(), where);
    for (auto& name : *on_target) {
      if (!pattern_.Matches(name.first, name.second) || name.first == options_.checkpoint_schema ||
          on_source.contains(TableKey(name.first, name.second))) {
        continue;
      }
      BR_ASSIGN_OR_RETURN(const DdlAhead* ahead, ddl_at(name.first, name.second));
      if (ahead != nullptr && ahead->redefines) all.push_back(std::move(name));
    }
  }
  tables_.clear();
  buffers_.clear();
  std::vector<std::string> exact;
  for (const auto& [db, table] : all) {
    if (!pattern_.Matches(db, table) || db == options_.checkpoint_schema) continue;
    if (!options_.target_schema.empty() && db == options_.target_schema) continue;
    const std::string target_db = options_.target_schema.empty() ? db : options_.target_schema;
    auto tgt = LoadTableShape(target_sql, target_db, table);
    if (!tgt.ok()) {
      if (absl::IsNotFound(tgt.status()) && options_.target_schema.empty()) {
        BR_ASSIGN_OR_RETURN(const DdlAhead* ahead, ddl_at(db, table));
        if (ahead != nullptr && ahead->appears) {
          // Created (or renamed into place) after the checkpoint: no row of
          // it under this name comes before that statement, where the
          // pipeline stops.
          spdlog::info("apply pipeline {}: {}.{} is not on the target yet; it was created at "
                       "{}, after the checkpoint, where the pipeline will stop",
                       options_.name, db, table, ahead->at);
          continue;
        }
      }
      return absl::FailedPreconditionError(absl::StrCat(
          where, ": ", tgt.status().message(), "; create it with the source's definition "
          "(SHOW CREATE TABLE ", db, ".", table, ") and load its rows first"));
    }
    TableShape src;
    const DdlAhead* ahead = nullptr;
    const std::string target_name = absl::StrCat(where, " table ", target_db, ".", table);
    if (on_source.contains(TableKey(db, table))) {
      BR_ASSIGN_OR_RETURN(src, LoadTableShape(source, db, table));
      absl::Status same = CheckTargetShape(src, *tgt, target_name);
      if (!same.ok()) {
        BR_ASSIGN_OR_RETURN(ahead, ddl_at(db, table));
        // Only a statement that can change the definition explains a
        // difference (not TRUNCATE or an index).
        if (ahead == nullptr || !ahead->redefines) return same;
      }
    } else {
      BR_ASSIGN_OR_RETURN(ahead, ddl_at(db, table));  // how it got into `all`
      if (ahead == nullptr) continue;
    }
    if (ahead != nullptr) {
      spdlog::warn("apply pipeline {}: {}.{} was changed by a DDL at {}, after the checkpoint "
                   "{}: rows before that statement are applied with the target table's "
                   "definition (the source's before it), and the pipeline stops at the "
                   "statement for the target to be changed to match",
                   options_.name, db, table, ahead->at, position_.ToString());
      src = *tgt;
      src.db = db;
      src.table = table;
      // The target's own definition must still be one rows can be applied
      // to (a primary key, among others).
      BR_RETURN_IF_ERROR(CheckTargetShape(src, *tgt, target_name));
    }
    // ON DELETE/UPDATE CASCADE or SET NULL: InnoDB makes those changes
    // below the binlog, so they would never reach the target. (A table the
    // source no longer has is read only up to the DDL that removed it.)
    if (cascades_unlogged_ && on_source.contains(TableKey(db, table))) {
      std::string show = "SHOW CREATE TABLE ";
      AppendIdentifier(db, &show);
      show.push_back('.');
      AppendIdentifier(table, &show);
      BR_ASSIGN_OR_RETURN(auto created, source.Query(show));
      const std::string text =
          !created.empty() && created[0].size() >= 2 ? created[0][1].value_or("") : "";
      std::vector<UnloggedForeignKey> keys = UnloggedForeignKeys(text);
      if (!keys.empty()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "apply pipeline ", options_.name, ": source table ", db, ".", table,
            " has foreign key ", keys[0].name, " with ", keys[0].action,
            ": the server makes those changes without logging them, so the target would keep "
            "rows the source removed or changed; leave the table out of `tables` or make the "
            "key RESTRICT"));
      }
    }
    const std::string target_key = TableKey(target_db, table);
    for (const auto& [key, other] : tables_) {
      if (TableKey(other->target.db, other->target.table) == target_key) {
        return absl::FailedPreconditionError(absl::StrCat(
            "apply pipeline ", options_.name, ": source tables ", other->Name(), " and ", db,
            ".", table, " would both be written to ", target_db, ".", table,
            " (target_schema); give them separate pipelines or targets"));
      }
    }
    auto t = std::make_unique<ApplyTable>(MakeApplyTable(std::move(src), std::move(*tgt)));
    t->max_statement_bytes = max_statement;
    if (image_pool_ == nullptr) {
      // A quarter of the limit, at most 64 MiB, kept beyond it for reuse.
      image_pool_ = std::make_unique<ImageArena::Pool>(
          std::min<size_t>(options_.soft_limit_bytes / 4, size_t{64} << 20));
    }
    if (gate_ != nullptr) t->gate = gate_->ForTable(db, table);
    buffers_[t.get()] = std::make_unique<TableBuffer>(t->keyed, image_pool_.get());
    exact.push_back(absl::StrCat(db, ".", table));
    tables_[TableKey(db, table)] = std::move(t);
  }
  if (tables_.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "apply pipeline ", options_.name, ": no source table matches tables = ",
        options_.tables));
  }
  BR_ASSIGN_OR_RETURN(exact_, Subscription::Parse(absl::StrJoin(exact, ",")));
  // Fence: statements an earlier binrelay process (killed while a drain ran)
  // still has running on these tables must not commit after ours.
  BR_ASSIGN_OR_RETURN(protocol::QueryResult self, target.Query("SELECT CONNECTION_ID(), USER()"));
  if (!self.rows.empty() && self.rows[0][0]) {
    BR_ASSIGN_OR_RETURN(
        protocol::QueryResult running,
        target.Query(absl::StrCat("SELECT ID, INFO FROM information_schema.PROCESSLIST WHERE "
                                  "ID <> CONNECTION_ID() AND USER = SUBSTRING_INDEX(USER(), '@', "
                                  "1) AND INFO IS NOT NULL")));
    for (const auto& row : running.rows) {
      if (row.size() < 2 || !row[0] || !row[1]) continue;
      for (const auto& [key, t] : tables_) {
        if (absl::StartsWith(*row[1], t->replace_head.substr(0, t->replace_head.find('('))) ||
            absl::StartsWith(*row[1], t->delete_head)) {
          uint32_t id = 0;
          if (absl::SimpleAtoi(*row[0], &id)) {
            spdlog::warn("apply pipeline {}: killing connection {} on {}, a statement of an "
                         "earlier run still writing {}", options_.name, id, target.peer(),
                         t->Name());
            BR_RETURN_IF_ERROR(target.KillConnection(id));
          }
          break;
        }
      }
    }
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    status_.flushed = position_;
    status_.read = position_;
  }
  return absl::OkStatus();
}

bool ApplyPipeline::DdlNamesOurs(std::string_view db, std::string_view table) const {
  return lower_case_table_names_ != 0 ? pattern_.MatchesIgnoringCase(db, table)
                                      : pattern_.Matches(db, table);
}

std::string ApplyPipeline::DdlKey(std::string_view db, std::string_view table) const {
  std::string key = TableKey(db, table);
  if (lower_case_table_names_ != 0) absl::AsciiStrToLower(&key);
  return key;
}

absl::StatusOr<absl::flat_hash_map<std::string, ApplyPipeline::DdlAhead>>
ApplyPipeline::FindDdlAhead(const replication::BinlogPosition& from) {
  absl::flat_hash_map<std::string, DdlAhead> found;
  const replication::BinlogPosition end = store_->committed().position;
  if (!replication::PositionBefore(from, end)) return found;
  SetActivity(PipelineState::kPreparing,
              absl::StrCat("reading the store from ", from.ToString(), " to ", end.ToString(),
                           " for DDL on subscribed tables"));
  BR_ASSIGN_OR_RETURN(std::unique_ptr<replication::StoreReader> reader,
                      replication::StoreReader::Open(store_, from));
  // The file's format first: without it a statement's text would run on
  // into the event's checksum.
  BR_RETURN_IF_ERROR(reader->PeekAt(4).status());
  // Statements only, framed and nothing else decoded: this runs at every
  // start over everything past the checkpoint. DDL is never inside a
  // MySQL transaction payload, which holds one DML transaction.
  std::string scratch;
  while (!stopping_ && replication::PositionBefore(reader->position(), end)) {
    protocol::EventView event;
    BR_ASSIGN_OR_RETURN(replication::StoreReader::Step step, reader->Next(&event));
    if (step == replication::StoreReader::Step::kNextFile) continue;
    if (step == replication::StoreReader::Step::kCaughtUp) break;
    if (event.type() != protocol::kQueryEvent && event.type() != protocol::kQueryCompressedEvent) {
      continue;
    }
    BR_ASSIGN_OR_RETURN(protocol::QueryEvent q,
                        protocol::ParseQueryEvent(event, reader->format(), &scratch));
    const protocol::StatementKind kind = protocol::ClassifyStatement(q.query);
    if (kind != protocol::StatementKind::kDdl && kind != protocol::StatementKind::kOther) continue;
    for (const DdlTarget& t : DdlTables(q.db, q.query)) {
      // A foreign key added: no row's shape changed (the reader stops there
      // live, when it meets the statement).
      if (t.dml || !t.unlogged_action.empty() || t.db == options_.checkpoint_schema) continue;
      if (!t.table.empty() && !DdlNamesOurs(t.db, t.table)) continue;
      found.try_emplace(DdlKey(t.db, t.table),
                        DdlAhead{absl::StrCat(reader->position().file, ":",
                                              reader->position().offset),
                                 t.redefines, t.appears});
    }
  }
  if (stopping_) return absl::CancelledError("stopping");
  return found;
}

absl::Status ApplyPipeline::ScanForXa() {
  read_back_.emplace();
  ReadBack& rb = *read_back_;
  std::vector<replication::StoreFileEntry> files = store_->CommittedFiles();
  if (files.empty() || !replication::PositionBefore({files.front().name, 4}, read_start_)) {
    rb.missing = "binrelay's store holds nothing before it";
    return absl::OkStatus();
  }
  const replication::BinlogPosition from{files.front().name, 4};
  // Retention must not purge what is being read.
  replication::StorePin pin =
      store_->Pin(from, absl::StrCat("apply pipeline ", options_.name, " (reading back XA)"));
  SetActivity(PipelineState::kPreparing,
              absl::StrCat("reading the store from ", from.ToString(), " to ",
                           read_start_.ToString(), " for XA transactions prepared before it"));
  spdlog::info("apply pipeline {}: reading the store from {} to {} for the rows of XA "
               "transactions prepared before this pipeline started reading",
               options_.name, from.ToString(), read_start_.ToString());
  Sink sink(this, &rb.holds, &rb);
  absl::Status s = [&]() -> absl::Status {
    BR_ASSIGN_OR_RETURN(std::unique_ptr<replication::StoreReader> reader,
                        replication::StoreReader::Open(store_, from));
    BR_RETURN_IF_ERROR(reader->PeekAt(4).status());
    ChangeDecoder decoder(&*exact_, nullptr, &sink);
    replication::TransactionBoundary boundary;
    boundary.Reset(from);
    // Up to where the reading began: everything after it is being read now.
    while (!stopping_ && replication::PositionBefore(reader->position(), read_start_)) {
      if (pin.lost()) return absl::DataLossError(pin.lost_reason());
      protocol::EventView event;
      BR_ASSIGN_OR_RETURN(replication::StoreReader::Step step, reader->Next(&event));
      if (step == replication::StoreReader::Step::kNextFile) continue;
      if (step == replication::StoreReader::Step::kCaughtUp) break;
      const replication::BinlogPosition& end = reader->position();
      BR_ASSIGN_OR_RETURN(bool ends, boundary.OnEvent(event, reader->format(), end));
      BR_RETURN_IF_ERROR(
          decoder.OnEvent(replication::StreamEvent{event, reader->format(), end, ends}));
    }
    return absl::OkStatus();
  }();
  SetState(PipelineState::kRunning);
  if (stopping_) return absl::CancelledError("stopping");
  if (absl::IsResourceExhausted(s)) return s;
  if (!s.ok()) {
    // Unreadable (purged meanwhile, damaged): as if not stored.
    rb.holds = XaHolds();
    rb.unusable.clear();
    rb.missing = absl::StrCat("reading the store for it failed: ", s.message());
    return absl::OkStatus();
  }
  spdlog::info("apply pipeline {}: {} XA transaction(s) with rows of subscribed tables were "
               "undecided at {}",
               options_.name, rb.holds.held(), read_start_.ToString());
  return absl::OkStatus();
}

absl::StatusOr<std::vector<HeldRow>> ApplyPipeline::ReadBackXa(const std::string& xid) {
  // One scan per read, on the first commit that needs one: it keeps every
  // XA transaction still undecided where the read began.
  if (!read_back_) BR_RETURN_IF_ERROR(ScanForXa());
  ReadBack& rb = *read_back_;
  if (auto it = rb.unusable.find(xid); it != rb.unusable.end()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "apply pipeline ", options_.name, ": XA COMMIT ", xid, " after ", last_commit_.ToString(),
        " commits an XA transaction prepared before ", read_start_.ToString(),
        " (where this pipeline started reading) that cannot be applied: ", it->second,
        "; apply its changes to the target by hand, then move the checkpoint past this XA "
        "COMMIT (UPDATE ", options_.checkpoint_schema, ".apply_checkpoint and remove ",
        LocalCheckpointPath(), "), or copy the tables again"));
  }
  bool seen = false;
  std::vector<HeldRow> rows = rb.holds.Commit(xid, &seen);
  rb.holds.EndTransaction();
  if (!seen) {
    std::string why = rb.missing.empty() ? "the store does not hold its XA PREPARE" : rb.missing;
    spdlog::warn("apply pipeline {}: XA COMMIT {} after {}: its XA PREPARE came before {}, "
                 "where this pipeline started reading, and {}; if it changed subscribed "
                 "tables, those rows are not on the target (compare the tables, or copy them "
                 "again)",
                 options_.name, xid, last_commit_.ToString(), read_start_.ToString(), why);
    return rows;
  }
  // Tables not yet seen live take the shape their rows were read with, as
  // the live reader would have from their first TABLE_MAP.
  for (const HeldRow& r : rows) {
    if (r.table->def_ready) continue;
    auto it = rb.shapes.find(r.table);
    if (it != rb.shapes.end() && it->second.def_ready) {
      r.table->def = it->second.def;
      r.table->def_ready = true;
    }
  }
  spdlog::info("apply pipeline {}: XA {}: {} row change(s) of subscribed tables read back",
               options_.name, xid, rows.size());
  return rows;
}

absl::Status ApplyPipeline::ReadLoop() {
  std::unique_ptr<replication::StoreReader> reader;
  while (true) {
    auto opened = replication::StoreReader::Open(store_, position_);
    if (opened.ok()) {
      reader = std::move(*opened);
      break;
    }
    // A start the store has not reached yet (binrelay just started, or the
    // checkpoint is ahead of what was stored before a crash of the store's
    // host) is waited for; a file older than the store's is gone for good.
    auto files = store_->CommittedFiles();
    const bool ahead =
        files.empty() || replication::CompareBinlogNames(position_.file, files.back().name) > 0 ||
        (position_.file == files.back().name && position_.offset > files.back().size);
    if (!ahead) {
      // The store may have received the file between Open's look at it and
      // this one (the first dump at binrelay's start): ask once more.
      auto again = replication::StoreReader::Open(store_, position_);
      if (!again.ok()) return again.status();
      reader = std::move(*again);
      break;
    }
    SetActivity(PipelineState::kPreparing,
                absl::StrCat("waiting for the store to reach ", position_.ToString()));
    if (!Sleep(absl::Milliseconds(200))) return absl::OkStatus();
  }
  BR_RETURN_IF_ERROR(reader->PeekAt(4).status());  // the file's format
  Sink sink(this);
  xa_ = XaHolds();  // what a previous read held is read again from position_
  read_start_ = position_;
  read_back_.reset();
  ChangeDecoder decoder(&*exact_, nullptr, &sink);
  replication::TransactionBoundary boundary;
  boundary.Reset(position_);
  last_commit_ = position_;
  handed_checkpoint_ = position_;
  last_drain_checkpoint_ = position_;
  SetState(PipelineState::kRunning);
  ddl_stop_ = absl::OkStatus();
  bool caught_up_state = false;
  // A lost pin or a failed drain is noticed within this many events (both
  // checks take a lock: not once per event), and at every file change and
  // every wait at the end of the store.
  constexpr uint32_t kCheckEvery = 256;
  uint32_t until_check = 0;
  while (!stopping_) {
    if (until_check-- == 0) {
      until_check = kCheckEvery;
      if (pin_.lost()) return absl::DataLossError(pin_.lost_reason());
      std::lock_guard<std::mutex> l(mu_);
      if (!drain_error_.ok()) return drain_error_;
    }
    protocol::EventView event;
    BR_ASSIGN_OR_RETURN(replication::StoreReader::Step step, reader->Next(&event));
    if (step == replication::StoreReader::Step::kNextFile) {
      until_check = 0;
      continue;
    }
    if (step == replication::StoreReader::Step::kCaughtUp) {
      until_check = 0;
      if (hold_wanted_.load(std::memory_order_relaxed) && !boundary.in_transaction()) {
        BR_RETURN_IF_ERROR(MaybeHold(boundary.last_boundary()));
        if (stopping_) break;
      }
      const bool have_rows = buffered_bytes_ > 0;
      const bool moved = !(last_commit_ == handed_checkpoint_);
      if (have_rows || (moved && absl::Now() - last_handoff_ >= absl::FromChrono(options_.flush_interval))) {
        bool busy;
        {
          std::unique_lock<std::mutex> l(mu_);
          // Rows are buffered and nothing more is stored yet: the drain
          // thread's end is the next thing worth waking for (not the
          // store's next 100 ms tick, which left the target idle for up
          // to that long after every drain of a catch-up).
          if (have_rows && draining_) {
            cv_.wait_for(l, std::chrono::milliseconds(100),
                         [&] { return !draining_ || stopping_; });
          }
          busy = draining_;
        }
        if (!busy && !stopping_) BR_RETURN_IF_ERROR(HandOff());
      }
      if (!caught_up_state && buffered_bytes_ == 0) {
        SetState(PipelineState::kCaughtUp);
        caught_up_state = true;
      }
      store_->WaitForCommitted(reader->seen_sequence(), absl::Milliseconds(100), nullptr);
      continue;
    }
    if (caught_up_state) {
      SetState(PipelineState::kRunning);
      caught_up_state = false;
    }
    const replication::BinlogPosition& end = reader->position();
    BR_ASSIGN_OR_RETURN(bool ends, boundary.OnEvent(event, reader->format(), end));
    replication::StreamEvent e{event, reader->format(), end, ends};
    BR_RETURN_IF_ERROR(decoder.OnEvent(e));  // the sink's OnEvent and OnCommit
    if (!ends) {
      // Events outside transactions (a rotation, a checkpoint) move the
      // boundary too: a snapshot's position may be just after one.
      if (hold_wanted_.load(std::memory_order_relaxed) && !boundary.in_transaction()) {
        BR_RETURN_IF_ERROR(MaybeHold(boundary.last_boundary()));
      }
      continue;
    }
    last_commit_ = end;
    last_commit_ts_ = event.header.timestamp;
    if (!ddl_stop_.ok() && xa_.held() > 0) {
      // The checkpoint cannot pass the DDL without dropping the held rows,
      // and a restart from before them would meet the DDL again.
      ddl_stop_ = absl::FailedPreconditionError(absl::StrCat(
          ddl_stop_.message(), "; but ", xa_.held(), " prepared XA transaction(s) on subscribed "
          "tables, logged before it, are still undecided there, and the pipeline keeps its "
          "checkpoint before them: it cannot resume past this DDL by itself. Once they are "
          "decided, apply their outcome and the DDL to the target, then set the checkpoint "
          "past the DDL and their XA COMMIT or XA ROLLBACK (a commit read from a checkpoint "
          "before it is read back in the old shape and refused) (UPDATE ",
          options_.checkpoint_schema, ".apply_checkpoint and remove ",
          LocalCheckpointPath(), "), or copy the tables again"));
    }
    if (!ddl_stop_.ok()) {
      // Everything before the DDL goes to the target, then the checkpoint
      // moves past it; only then does the pipeline stop.
      BR_RETURN_IF_ERROR(HandOff());
      BR_RETURN_IF_ERROR(WaitForDrain());
      return ddl_stop_;
    }
    xa_held_.store(xa_.held(), std::memory_order_relaxed);
    bool busy;
    {
      std::lock_guard<std::mutex> l(mu_);
      status_.read = end;
      status_.buffered_bytes = buffered_bytes_;
      busy = draining_;
    }
    // WorthDrainingEarly walks the buffers: only when the drain is idle.
    if (!busy && buffered_bytes_ > 0 &&
        (absl::Now() - last_handoff_ >= absl::FromChrono(options_.flush_interval) ||
         WorthDrainingEarly())) {
      BR_RETURN_IF_ERROR(HandOff());
    }
    if (hold_wanted_.load(std::memory_order_relaxed)) BR_RETURN_IF_ERROR(MaybeHold(end));
  }
  return absl::OkStatus();
}

// A drain thread left idle while the reader is still catching up is target
// time lost for good. Waiting out flush_interval pays only when changes
// collapse (a hot row rewritten many times is written once): so the buffer
// goes early once it holds a batch (rows or bytes) for every connection and
// its changes
// collapse less than 2 to 1 (bulk inserts, a pipeline far behind on mostly
// distinct rows). The drain thread's idle time before each drain of
// bench/apply_bench.sh insert-heavy (1M rows, about 2.5 s of drains) fell
// from 165 ms to 53 ms, most of it now binrelay's own start.
bool ApplyPipeline::WorthDrainingEarly() const {
  size_t keys = 0;
  for (const auto& [table, buffer] : buffers_) keys += buffer->entries();
  const bool enough = keys >= options_.batch_rows * options_.concurrency ||
                      buffered_bytes_ >= options_.batch_bytes * options_.concurrency;
  return enough && changes_since_handoff_ < 2 * keys;
}

absl::Status ApplyPipeline::WaitForDrain() {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [&] { return !draining_ || stopping_; });
  return drain_error_;
}

absl::Status ApplyPipeline::HandOff() {
  {
    std::unique_lock<std::mutex> l(mu_);
    if (draining_) ++status_.parked;
    cv_.wait(l, [&] { return !draining_ || stopping_; });
    if (stopping_) return absl::CancelledError("stopping");
    if (!drain_error_.ok()) return drain_error_;
    // Claimed now, in the same critical section as the wait: the drain
    // thread's own flush of held-back rows must not start meanwhile.
    draining_ = true;
  }
  auto drain = std::make_unique<Drain>();
  size_t keys = 0;
  for (auto& [table, buffer] : buffers_) {
    if (buffer->empty()) continue;
    keys += buffer->entries();
    drain->bytes += buffer->bytes();
    drain->tables.emplace_back(table, buffer->Take());
  }
  drain->checkpoint = last_commit_;
  // Not past a prepared XA transaction the source has not decided yet: a
  // restart must read its rows again.
  if (auto held = xa_.earliest(); held && replication::PositionBefore(*held, last_commit_)) {
    drain->checkpoint = *held;
  }
  drain->checkpoint_ts = last_commit_ts_;
  drain->since = last_drain_checkpoint_;
  last_drain_checkpoint_ = drain->checkpoint;
  handed_checkpoint_ = last_commit_;
  last_handoff_ = absl::Now();
  changes_since_handoff_ = 0;
  std::lock_guard<std::mutex> l(mu_);
  inflight_bytes_ = drain->bytes;
  buffered_bytes_ = 0;
  status_.buffered_bytes = drain->bytes;
  status_.buffered_keys = keys;
  pending_ = std::move(drain);
  cv_.notify_all();
  return absl::OkStatus();
}

void ApplyPipeline::DrainLoop() {
  while (true) {
    std::unique_ptr<Drain> drain;
    {
      std::unique_lock<std::mutex> l(mu_);
      if (deferred_.empty()) {
        cv_.wait(l, [&] { return pending_ != nullptr || stopping_; });
      } else {
        // Held-back changes go as soon as their chunk is copied, whether or
        // not the reader hands over anything new.
        cv_.wait_for(l, std::chrono::milliseconds(50),
                     [&] { return pending_ != nullptr || stopping_; });
      }
      if (stopping_ && pending_ == nullptr) return;
      if (pending_ != nullptr) {
        drain = std::move(pending_);
      } else {
        // The reader has claimed the slot and is building its drain, or the
        // reader stops after an error: nothing of ours now.
        if (draining_ || !drain_error_.ok()) continue;
        drain = std::make_unique<Drain>();
        drain->since = drained_to_;
        drain->checkpoint = drained_to_;
        drain->checkpoint_ts = flushed_ts_;
        draining_ = true;
      }
    }
    const absl::Time start = absl::Now();
    absl::Status s = Flush(*drain);
    std::lock_guard<std::mutex> l(mu_);
    if (s.ok()) {
      status_.flushed = drain->checkpoint;
      flushed_ts_ = drain->checkpoint_ts;
      status_.last_flush_seconds = absl::ToDoubleSeconds(absl::Now() - start);
      if (!drain->tables.empty()) ++status_.drains;
      status_.concurrency = cur_concurrency_;
      status_.batch_rows = cur_batch_rows_;
    } else if (!absl::IsCancelled(s)) {
      drain_error_ = s;
    }
    inflight_bytes_ = 0;
    status_.buffered_bytes = buffered_bytes_;
    status_.buffered_keys = 0;
    status_.deferred = deferred_.rows();
    draining_ = false;
    cv_.notify_all();
  }
}

absl::Status ApplyPipeline::MaybeHold(const replication::BinlogPosition& at) {
  uint64_t generation;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (hold_mode_ == HoldMode::kNone || held_at_) return absl::OkStatus();
    generation = hold_generation_;
    if (hold_mode_ == HoldMode::kAdvance) {
      if (replication::PositionBefore(at, hold_target_)) return absl::OkStatus();  // not yet
      // Past it with only events outside transactions since (a rotation, a
      // checkpoint) is the same state; a transaction ending past it means
      // it was no boundary of this stream.
      if (!hold_or_after_ && replication::PositionBefore(hold_target_, last_commit_)) {
        hold_error_ = absl::FailedPreconditionError(absl::StrCat(
            "apply pipeline ", options_.name, " read past ", hold_target_.ToString(),
            " (a transaction ends at ", last_commit_.ToString(), ")"));
        hold_mode_ = HoldMode::kNone;
        hold_wanted_ = false;
        cv_.notify_all();
        return absl::OkStatus();
      }
    }
  }
  // Everything read goes to the target, checkpoint and all.
  BR_RETURN_IF_ERROR(HandOff());
  BR_RETURN_IF_ERROR(WaitForDrain());
  std::unique_lock<std::mutex> l(mu_);
  // Asked for something else meanwhile (resumed, or a timed-out request
  // replaced): this pause is nobody's.
  if (hold_generation_ != generation || hold_mode_ == HoldMode::kNone) return absl::OkStatus();
  if (status_.deferred != 0) {
    // Changes still held for a copier are not on the target: no position
    // here means "everything before it is applied". Try again later.
    return absl::OkStatus();
  }
  held_at_ = at;
  held_commit_ = last_commit_;
  status_.paused_at = at;
  cv_.notify_all();
  cv_.wait(l, [&] { return stopping_ || hold_generation_ != generation; });
  held_at_.reset();
  status_.paused_at.reset();
  return absl::OkStatus();
}

absl::Status ApplyPipeline::WaitHeld(std::unique_lock<std::mutex>& l, absl::Duration timeout) {
  const bool done = cv_.wait_for(l, absl::ToChronoMilliseconds(timeout), [&] {
    return held_at_.has_value() || !hold_error_.ok() || reader_done_ || stopping_;
  });
  if (!hold_error_.ok()) return hold_error_;
  if (held_at_) return absl::OkStatus();
  if (reader_done_ || stopping_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "apply pipeline ", options_.name, " stopped: ",
        status_.last_error.empty() ? std::string("stopping") : status_.last_error));
  }
  (void)done;
  return absl::DeadlineExceededError(absl::StrCat(
      "apply pipeline ", options_.name, " did not reach a pause in ",
      absl::FormatDuration(timeout), " (state: ", status_.StateText(), ")"));
}

absl::StatusOr<replication::BinlogPosition> ApplyPipeline::Pause(absl::Duration timeout) {
  std::unique_lock<std::mutex> l(mu_);
  if (held_at_ && hold_mode_ != HoldMode::kNone) return *held_at_;
  hold_mode_ = HoldMode::kPause;
  ++hold_generation_;
  held_at_.reset();
  hold_error_ = absl::OkStatus();
  hold_wanted_ = true;
  cv_.notify_all();
  BR_RETURN_IF_ERROR(WaitHeld(l, timeout));
  return *held_at_;
}

absl::Status ApplyPipeline::AdvanceTo(const replication::BinlogPosition& at,
                                      absl::Duration timeout, bool or_after) {
  std::unique_lock<std::mutex> l(mu_);
  if (or_after && held_at_ && hold_mode_ != HoldMode::kNone &&
      !replication::PositionBefore(*held_at_, at)) {
    return absl::OkStatus();
  }
  // Paused at or past `at` with no transaction ending after it (only a
  // rotation or a checkpoint event): the same state as `at` itself.
  if (held_at_ && hold_mode_ != HoldMode::kNone && !replication::PositionBefore(*held_at_, at) &&
      !replication::PositionBefore(at, held_commit_)) {
    return absl::OkStatus();
  }
  if (held_at_ && replication::PositionBefore(at, *held_at_)) {
    return absl::OutOfRangeError(absl::StrCat(
        "apply pipeline ", options_.name, " is paused at ", held_at_->ToString(),
        ", already past ", at.ToString()));
  }
  hold_mode_ = HoldMode::kAdvance;
  hold_target_ = at;
  hold_or_after_ = or_after;
  ++hold_generation_;
  hold_error_ = absl::OkStatus();
  held_at_.reset();
  hold_wanted_ = true;
  cv_.notify_all();
  return WaitHeld(l, timeout);
}

void ApplyPipeline::Resume() {
  {
    std::lock_guard<std::mutex> l(mu_);
    hold_mode_ = HoldMode::kNone;
    ++hold_generation_;
    held_at_.reset();
    hold_wanted_ = false;
  }
  cv_.notify_all();
}

absl::Status ApplyPipeline::Execute(TargetSession& session, std::string_view sql, size_t rows) {
  uint16_t warnings = 0;
  BR_RETURN_IF_ERROR(
      RunWithRetry(session, sql, rows, [&] { return session.Execute(sql, &warnings); }));
  if (warnings > 0) NoteWarnings(session, sql, warnings);
  return absl::OkStatus();
}

void ApplyPipeline::NoteWarnings(TargetSession& session, std::string_view what,
                                 uint16_t warnings) {
  {
    std::lock_guard<std::mutex> l(mu_);
    ++status_.target_warnings;
    if (warnings_logged_ >= 10) return;
    ++warnings_logged_;
  }
  std::string shown;
  auto w = session.Query("SHOW WARNINGS LIMIT 3");
  if (w.ok()) {
    for (const auto& row : w->rows) {
      if (row.size() < 3) continue;
      absl::StrAppend(&shown, shown.empty() ? "" : "; ", row[1].value_or(""), " ",
                      row[2].value_or(""));
    }
  }
  spdlog::warn("apply pipeline {}: target {} ran {} with {} warning(s): {}", options_.name,
               session.peer(), what.substr(0, 120), warnings, shown);
}

absl::Status ApplyPipeline::RunWithRetry(TargetSession& session, std::string_view what,
                                         size_t rows, absl::FunctionRef<absl::Status()> run) {
  for (int attempt = 0;; ++attempt) {
    absl::Status s = run();
    ErrorClass c = Classify(s);
    if (c == ErrorClass::kNone) {
      rows_written_.fetch_add(rows, std::memory_order_relaxed);
      if (attempt > 0) {
        std::lock_guard<std::mutex> l(mu_);
        if (status_.state == PipelineState::kRetrying) status_.state = PipelineState::kRunning;
      }
      return absl::OkStatus();
    }
    if (stopping_) return absl::CancelledError("stopping");
    if (c == ErrorClass::kHard) {
      // 1665: a STATEMENT-format binlog the applier may not switch to ROW.
      const char* hint = ServerErrorCode(s) != 1665 ? ""
                         : "; grant the applier BINLOG ADMIN (binrelay then logs its writes "
                           "as rows) or set binlog_format = MIXED or ROW on the target";
      return Annotate(s, absl::StrCat("apply pipeline ", options_.name, ", target ",
                                      session.peer(), ", statement ",
                                      std::string(what.substr(0, 200)),
                                      what.size() > 200 ? "..." : "", hint));
    }
    const int code = ServerErrorCode(s) != 0 ? ServerErrorCode(s) : 2013;
    {
      std::lock_guard<std::mutex> l(mu_);
      ++status_.retries[code];
      if (c == ErrorClass::kConnection) {
        status_.state = PipelineState::kRetrying;
        status_.last_error = absl::StrCat("target ", session.peer(), ": ", s.message());
      }
    }
    if (c == ErrorClass::kContention) {
      contention_ = true;
    } else if (attempt == 0) {
      spdlog::warn("apply pipeline {}: target {} unavailable ({}); retrying", options_.name,
                   session.peer(), SV(s.message()));
    }
    if (!Sleep(RetryWait(c, attempt))) return absl::CancelledError("stopping");
  }
}

absl::Status ApplyPipeline::Replace(TargetSession& session, const ApplyTable& t,
                                    const BufferedRow* const* rows, size_t n, size_t max_rows,
                                    size_t max_bytes) {
  size_t applied = 0;  // rows[0, applied) are on the target
  auto text = [&] {
    return BuildReplaces(t, rows + applied, n - applied, max_rows, max_bytes,
                         [&](std::string_view sql, size_t k) { return Execute(session, sql, k); });
  };
  // A table whose columns are all generated has nothing to bind.
  if (!bulk_ || t.bulk_params == 0) return text();
  // One command in flight on the session: each is sent, the next is built
  // while the target runs it, and its reply is read before the next is sent
  // (so batches still reach the target in order, one at a time).
  protocol::BulkExecuteBuilder bulk, inflight;
  size_t inflight_rows = 0;
  bool sent = false;  // `inflight` went out; its reply is unread
  auto finish = [&]() -> absl::Status {
    if (inflight_rows == 0) return absl::OkStatus();
    uint16_t warnings = 0;
    bool pending = sent;
    absl::Status s = RunWithRetry(session, t.bulk_replace, inflight_rows, [&] {
      if (pending) {
        pending = false;
        absl::Status r = session.FinishBulk(&warnings);
        // 1243: the handle was gone (FinishBulk forgot it): prepare again.
        if (ServerErrorCode(r) != 1243) return r;
      }
      return session.ExecuteBulk(t.bulk_replace, inflight, &warnings);  // a retry: whole
    });
    const size_t done = inflight_rows;
    inflight_rows = 0;
    sent = false;
    BR_RETURN_IF_ERROR(s);
    applied += done;
    if (warnings > 0) NoteWarnings(session, t.bulk_replace, warnings);
    return absl::OkStatus();
  };
  absl::Status s = BuildBulkReplaces(t, rows, n, max_rows, max_bytes, &bulk, [&](size_t k) {
    BR_RETURN_IF_ERROR(finish());
    // BuildBulkReplaces starts the next command in `bulk`, reusing the
    // buffer of the one just finished.
    std::swap(bulk, inflight);
    inflight_rows = k;
    // A send that fails is retried whole (or classified) by finish().
    sent = session.SendBulk(t.bulk_replace, inflight).ok();
    return absl::OkStatus();
  });
  // The last command, or the one in flight when building failed: its reply
  // must be read before the session runs anything else.
  absl::Status last = finish();
  if (s.ok()) s = last;
  if (s.ok() || absl::IsCancelled(s) || Classify(s) != ErrorClass::kHard) return s;
  // The target refused a bulk command (one it does not support, too many
  // prepared statements, a server that lost the capability, or a value it
  // will not take that way). Nothing of that command was applied (it is one
  // statement), and REPLACE text is authoritative: the rest of this run
  // uses it, starting with the refused command's rows (those before it are
  // on the target), and a real problem with the rows fails there with
  // their values in the message.
  if (bulk_.exchange(false)) {
    spdlog::warn("apply pipeline {}: target {} refused a bulk command for {} ({}); using "
                 "REPLACE text from now on",
                 options_.name, session.peer(), t.Name(), SV(s.message()));
    std::lock_guard<std::mutex> l(mu_);
    status_.upsert_protocol = absl::StrCat("text (bulk refused: ", s.message(), ")");
  }
  return text();
}

absl::Status ApplyPipeline::RunJobs(
    std::vector<std::function<absl::Status(TargetSession&)>>& jobs) {
  if (jobs.empty()) return absl::OkStatus();
  const size_t n = std::min(jobs.size(), std::max<size_t>(1, cur_concurrency_));
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex err_mu;
  absl::Status first;
  auto work = [&](size_t w) {
    for (size_t i; !failed && (i = next.fetch_add(1)) < jobs.size();) {
      absl::Status s = jobs[i](*sessions_[w]);
      if (!s.ok()) {
        std::lock_guard<std::mutex> l(err_mu);
        if (first.ok()) first = s;
        failed = true;
      }
    }
  };
  if (n == 1) {
    work(0);
  } else {
    std::vector<std::thread> threads;
    for (size_t w = 0; w < n; ++w) threads.emplace_back(work, w);
    for (auto& t : threads) t.join();
  }
  return first;
}

absl::Status ApplyPipeline::WriteCheckpoint(TargetSession& session,
                                            const replication::BinlogPosition& at) {
  std::string sql = "REPLACE INTO ";
  AppendIdentifier(options_.checkpoint_schema, &sql);
  sql.append(".`apply_checkpoint` (pipeline, binlog_file, binlog_pos, tables, updated_at) VALUES (");
  AppendQuotedString(options_.name, &sql);
  sql.push_back(',');
  AppendQuotedString(at.file, &sql);
  absl::StrAppend(&sql, ",", at.offset, ",");
  AppendQuotedString(options_.tables, &sql);
  sql.append(", UTC_TIMESTAMP(6))");
  BR_RETURN_IF_ERROR(Execute(session, sql, 0));
  BR_RETURN_IF_ERROR(WriteLocalCheckpoint(at));
  pin_.Advance(at);
  return absl::OkStatus();
}

absl::Status ApplyPipeline::Flush(Drain& drain) {
  contention_ = false;
  const size_t batch_rows = std::max<size_t>(1, cur_batch_rows_);
  const size_t batch_bytes = options_.batch_bytes;
  // Row pointers per table: upserts (and ordered tables) first, deletes last.
  struct TableRows {
    const ApplyTable* table;
    std::vector<const BufferedRow*> upserts, deletes, ordered;
  };
  std::vector<TableRows> per_table;
  auto add = [&](TableRows& r, bool keyed, const BufferedRow* row) {
    if (!keyed) {
      r.ordered.push_back(row);
    } else {
      (row->is_delete ? r.deletes : r.upserts).push_back(row);
    }
  };
  // Tables a move's copier is copying: changes whose chunk is in flight
  // are held back, and earlier held ones whose chunk is done join in.
  deferred_.BeginDrain();
  std::vector<const BufferedRow*> sifted;
  absl::flat_hash_set<const ApplyTable*> gated;
  for (auto& [table, drained] : drain.tables) {
    TableRows r{table, {}, {}, {}};
    if (table->gate != nullptr) {
      sifted.clear();
      BR_RETURN_IF_ERROR(
          deferred_.Sift(*table, *table->gate, &drained.rows, drain.since, &sifted));
      for (const BufferedRow* row : sifted) add(r, drained.keyed, row);
      gated.insert(table);
    } else {
      for (const BufferedRow& row : drained.rows) add(r, drained.keyed, &row);
    }
    per_table.push_back(std::move(r));
  }
  for (const auto& [table, gate] : deferred_.tables()) {
    if (gated.contains(table)) continue;
    TableRows r{table, {}, {}, {}};
    sifted.clear();
    BR_RETURN_IF_ERROR(deferred_.Sift(*table, *gate, nullptr, drain.since, &sifted));
    for (const BufferedRow* row : sifted) add(r, table->keyed, row);
    gated.insert(table);
    per_table.push_back(std::move(r));
  }
  using Job = std::function<absl::Status(TargetSession&)>;
  // Even and odd upsert batches of a table run in separate waves (see
  // PartitionUpserts), then every delete.
  std::vector<Job> upserts;
  std::vector<Job> odd_upserts;
  std::vector<Job> deletes;
  for (TableRows& r : per_table) {
    const ApplyTable* t = r.table;
    if (t->target.unique_keys.empty()) {
      // One contiguous run of the drain's rows per connection (first-change
      // order: key order for ascending inserts), each sent as batches in
      // order, the next built while the target runs the last. Batches
      // handed out in turn make every connection insert beside the others
      // at the same end of the primary key, contending for the same pages:
      // bench/apply_bench.sh insert-heavy (1M rows, 2 connections) took
      // 5.3-5.9 CPU seconds (binrelay and target) that way, 3.6-5.0 with runs.
      const size_t n = r.upserts.size();
      const size_t runs = std::min((n + batch_rows - 1) / batch_rows,
                                   std::max<size_t>(1, cur_concurrency_));
      for (size_t k = 0, at = 0; k < runs; ++k) {
        const size_t end = n * (k + 1) / runs;
        const BufferedRow* const* rows = r.upserts.data() + at;
        const size_t count = end - at;
        upserts.push_back([this, t, rows, count, batch_rows, batch_bytes](TargetSession& s) {
          return Replace(s, *t, rows, count, batch_rows, batch_bytes);
        });
        at = end;
      }
    }
    std::vector<std::pair<size_t, size_t>> batches;
    if (!t->target.unique_keys.empty()) {
      BR_ASSIGN_OR_RETURN(batches, PartitionUpserts(*t, &r.upserts, batch_rows));
    }
    for (size_t b = 0; b < batches.size(); ++b) {
      const size_t n = batches[b].second - batches[b].first;
      const BufferedRow* const* rows = r.upserts.data() + batches[b].first;
      const bool odd = b % 2 == 1 && !t->target.unique_keys.empty();
      (odd ? odd_upserts : upserts)
          .push_back([this, t, rows, n, batch_rows, batch_bytes](TargetSession& s) {
            return Replace(s, *t, rows, n, batch_rows, batch_bytes);
          });
    }
    for (size_t at = 0; at < r.deletes.size(); at += batch_rows) {
      const size_t n = std::min(batch_rows, r.deletes.size() - at);
      const BufferedRow* const* rows = r.deletes.data() + at;
      deletes.push_back([this, t, rows, n, batch_rows, batch_bytes](TargetSession& s) {
        return BuildDeletes(*t, rows, n, batch_rows, batch_bytes,
                            [&](std::string_view sql, size_t k) { return Execute(s, sql, k); });
      });
    }
    if (!r.ordered.empty()) {
      // Binlog order on one connection; runs of one kind share a statement.
      const std::vector<const BufferedRow*>* rows = &r.ordered;
      upserts.push_back([this, t, rows, batch_rows, batch_bytes](TargetSession& s) {
        size_t i = 0;
        while (i < rows->size()) {
          size_t j = i;
          const bool del = (*rows)[i]->is_delete;
          while (j < rows->size() && (*rows)[j]->is_delete == del) ++j;
          auto emit = [&](std::string_view sql, size_t k) { return Execute(s, sql, k); };
          BR_RETURN_IF_ERROR(del ? BuildDeletes(*t, rows->data() + i, j - i, batch_rows,
                                                batch_bytes, emit)
                                 : Replace(s, *t, rows->data() + i, j - i, batch_rows,
                                           batch_bytes));
          i = j;
        }
        return absl::OkStatus();
      });
    }
  }
  BR_RETURN_IF_ERROR(RunJobs(upserts));
  BR_RETURN_IF_ERROR(RunJobs(odd_upserts));
  BR_RETURN_IF_ERROR(RunJobs(deletes));
  drained_to_ = drain.checkpoint;
  // Not past a change still held back: it is not on the target.
  if (auto floor = deferred_.floor(); floor && replication::PositionBefore(*floor, drain.checkpoint)) {
    drain.checkpoint = *floor;
  }
  for (const ApplyTable* t : gated) t->gate->SetDeferred(deferred_.rows(t));
  if (!(drain.checkpoint == written_) || !drain.tables.empty()) {
    BR_RETURN_IF_ERROR(WriteCheckpoint(*sessions_[0], drain.checkpoint));
    written_ = drain.checkpoint;
  }
  // Additive increase after clean drains, multiplicative decrease on
  // contention.
  if (contention_) {
    cur_concurrency_ = std::max<size_t>(1, cur_concurrency_ / 2);
    cur_batch_rows_ = std::max<size_t>(1, cur_batch_rows_ / 2);
    clean_drains_ = 0;
  } else if (++clean_drains_ >= 3) {
    cur_concurrency_ = std::min(options_.concurrency, cur_concurrency_ + 1);
    cur_batch_rows_ = std::min(options_.batch_rows,
                               cur_batch_rows_ + std::max<size_t>(1, options_.batch_rows / 10));
    clean_drains_ = 0;
  }
  return absl::OkStatus();
}

}  // namespace binrelay::apply
