// ChangeSink: what the change decoder delivers, row by row, transaction by
// transaction. Rows arrive between a transaction's start and OnCommit; after
// OnRestart, rows received since the last OnCommit must be discarded (the
// upstream session re-sends that transaction in full).
//
// Thread safety: called from the decoder's thread only.
// Lifetime: every view in RowChange is valid only during the OnRow call.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "protocol/column_def.h"
#include "protocol/event_header.h"
#include "protocol/format_description.h"

namespace binrelay::apply {

enum class RowOp : uint8_t { kInsert, kUpdate, kDelete };

struct RowChange {
  RowOp op = RowOp::kInsert;
  const protocol::TableDef* table = nullptr;
  std::string_view file;
  uint64_t pos = 0;          // end offset of the rows event in `file`
  std::string_view gtid;     // empty: none (anonymous / no GTIDs)
  uint32_t timestamp = 0;    // event timestamp
  // JSON object text of each image, `{"col":value,...}`; empty = absent.
  std::string_view before;
  std::string_view after;
  bool partial = false;      // an image lacks columns (binlog_row_image != FULL)
  // For a sink that wants_images(): the binlog's bytes of each image
  // (protocol/row_image.h) instead of JSON; empty = absent.
  std::string_view before_image;
  std::string_view after_image;
};

// A statement (not BEGIN/COMMIT) seen in the stream: DDL or administration.
struct StatementSeen {
  std::string_view db;     // the session's default database
  std::string_view query;  // the statement text
  std::string_view file;
  uint64_t pos = 0;        // end offset of the QUERY event
};

class ChangeSink {
 public:
  virtual ~ChangeSink() = default;
  virtual absl::Status OnRow(const RowChange& row) = 0;
  // The transaction holding the rows since the last commit is complete.
  virtual absl::Status OnCommit() = 0;
  // Drop rows received since the last OnCommit.
  virtual void OnRestart() = 0;
  // True: rows carry raw images (before_image/after_image), never JSON.
  virtual bool wants_images() const { return false; }
  // Every DDL or other non-transactional statement, before the decoder
  // drops its cached table maps for it.
  virtual absl::Status OnStatement(const StatementSeen&) { return absl::OkStatus(); }
  // Every event, in stream order and before the decoder handles it,
  // including the inner events of a MySQL TRANSACTION_PAYLOAD (which a
  // reader of the outer stream never sees): for sinks that follow
  // transaction structure themselves (XA, apply/xa_holds.h).
  virtual absl::Status OnEvent(const protocol::EventView&, const protocol::FormatDescription&) {
    return absl::OkStatus();
  }
};

std::string_view RowOpName(RowOp op);

}  // namespace binrelay::apply
