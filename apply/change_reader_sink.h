// ChangeReader::Sink: the reader's ChangeSink. Receives the
// decoder's raw row images for the subscribed tables and puts each change
// into its table's buffer (through a move's copy gate where there is one),
// keeps prepared XA transactions' rows aside until the source decides them
// (xa_holds.h), and turns a DDL or a statement-logged change of a
// subscribed table into the pipeline's stop. A second kind of sink only
// collects XA rows read back from the store (ChangeReader::ReadBackXa).
//
// Internal to change_reader*.cc: it is part of ChangeReader and works on the
// reader thread's state.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "apply/change_decoder.h"
#include "apply/ddl_tables.h"
#include "apply/ordered_key.h"
#include "apply/change_reader.h"
#include "apply/copy_gate.h"
#include "apply/row_key.h"
#include "apply/table_key.h"
#include "apply/xa_holds.h"
#include "protocol/control_events.h"
#include "protocol/event_type.h"
#include "protocol/gtid_events.h"
#include "protocol/query_event.h"
#include "protocol/statement_redaction.h"
#include "protocol/status_macros.h"

namespace binrelay::apply {

// Receives the decoder's raw row images for the subscribed tables.
class ChangeReader::Sink : public ChangeSink {
 public:
  explicit Sink(ChangeReader* p) : p_(p), xa_(&p->xa_) {}
  // A sink that only collects prepared XA transactions' rows into `holds`
  // (ChangeReader::ReadBackXa): nothing reaches the buffers, no statement
  // stops the pipeline and no live table state changes. A group whose rows
  // cannot be applied today (logged before a DDL, partial images) is noted
  // in `unusable` under its xid instead of failing the scan.
  Sink(ChangeReader* p, XaHolds* holds, ReadBack* out)
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
          ours = ours || (p_->rules_->lower_case_table_names != 0
                              ? absl::EqualsIgnoreCase(table->source.db, t.db)
                              : table->source.db == t.db);
        }
      } else {
        ours = p_->rules_->NamesOurs(t.db, t.table);
      }
      if (!ours) continue;
      // Quoted in /status and the log: a credential in it is hidden.
      std::string text = protocol::RedactedStatement(s.query, 300);
      if (!t.unlogged_action.empty()) {
        // Adds a foreign key only: rows keep their shape, but from here on
        // the source changes this table without logging it.
        if (!p_->rules_->cascades_unlogged) continue;
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
    if (p_->buffered_bytes_ + p_->host_->InflightBytes() >= p_->options_.soft_limit_bytes) {
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
    if (p_->buffered_bytes_ + p_->host_->InflightBytes() >= p_->options_.soft_limit_bytes) {
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

  ChangeReader* p_;
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


}  // namespace binrelay::apply
