// ChangeReader's read-back of XA transactions prepared before a read
// began: their XA PREPARE (and rows) lie before the read's start, their XA
// COMMIT after it. The first commit that needs one scans the store from its
// oldest file up to the start, once per read, keeping every group still
// undecided there.
#include <memory>

#include "absl/strings/str_cat.h"
#include "apply/change_decoder.h"
#include "apply/change_reader.h"
#include "apply/change_reader_sink.h"
#include "protocol/status_macros.h"
#include "replication/store_index.h"
#include "replication/store_reader.h"
#include "replication/transaction_boundary.h"
#include "spdlog/spdlog.h"

namespace binrelay::apply {

absl::Status ChangeReader::ScanForXa() {
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
  host_->SetActivity(PipelineState::kPreparing,
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
    while (!host_->stopping() && replication::PositionBefore(reader->position(), read_start_)) {
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
  host_->SetState(PipelineState::kRunning);
  if (host_->stopping()) return absl::CancelledError("stopping");
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

absl::StatusOr<std::vector<HeldRow>> ChangeReader::ReadBackXa(const std::string& xid) {
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
        checkpoint_path_, "), or copy the tables again"));
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

}  // namespace binrelay::apply
