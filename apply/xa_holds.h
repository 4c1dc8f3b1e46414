// XaHolds: row changes of XA transactions, held until the source decides.
//
// A source logs an XA transaction's rows when it is prepared (XA PREPARE),
// and its outcome later, as a statement of its own: XA COMMIT or XA
// ROLLBACK with the xid (MariaDB sql/handler.cc / sql/xa.cc, MySQL
// sql/xa.cc; the xid is printed as X'gtrid',X'bqual',formatID, xid_t
// serialize). Applying rows at PREPARE would leave rows on the target that
// a later ROLLBACK removes from the source, so a pipeline stages an XA
// group's rows here, holds them per xid at its PREPARE, and buffers them
// only at its COMMIT (or drops them at ROLLBACK). XA COMMIT ... ONE PHASE
// commits the staged rows at once.
//
// While a transaction is held, the pipeline's checkpoint stays at or
// before the position its group started from (earliest()), so a restart
// reads the group again and holds it again.
//
// Thread safety: none; the pipeline's reader thread owns it.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apply/change_sink.h"
#include "protocol/control_events.h"
#include "replication/binlog_position.h"

namespace binrelay::apply {

struct ApplyTable;

struct HeldRow {
  ApplyTable* table = nullptr;
  RowOp op = RowOp::kInsert;
  std::string before_image;
  std::string after_image;
};

class XaHolds {
 public:
  // An XA group starts (MariaDB: a GTID flagged PREPARED_XA; MySQL: XA
  // START); `from` is where the last whole transaction before it ended.
  void BeginGroup(const replication::BinlogPosition& from);
  bool in_group() const { return in_group_; }
  // A row of the open group.
  void Stage(HeldRow row);
  // XA PREPARE of the open group: its rows are held under `xid`.
  void Prepare(const std::string& xid);
  // The open group's rows, ending it (one-phase commit).
  std::vector<HeldRow> TakeStaged();
  // XA COMMIT `xid`: its held rows (none if it held no rows or was prepared
  // before this pipeline started reading: *seen says whether its PREPARE
  // was read). Until EndTransaction(), earliest() still counts the
  // committed transaction's group start: its rows may be handed off in
  // parts, and none of them is on the target before all of them are.
  std::vector<HeldRow> Commit(const std::string& xid, bool* seen);
  // The transaction that carried a COMMIT ended.
  void EndTransaction() { committing_from_.reset(); }
  // XA ROLLBACK `xid` (or of the open group): its rows are dropped.
  void Rollback(const std::string& xid);

  // Where the oldest held transaction's group started from; nullopt when
  // nothing is held.
  std::optional<replication::BinlogPosition> earliest() const;
  size_t held() const { return held_.size(); }
  // Image bytes staged and held, for the soft limit.
  size_t bytes() const { return bytes_; }

 private:
  struct Held {
    replication::BinlogPosition from;
    std::vector<HeldRow> rows;
    size_t bytes = 0;
  };
  bool in_group_ = false;
  replication::BinlogPosition group_from_;
  std::vector<HeldRow> staged_;
  size_t staged_bytes_ = 0;
  std::map<std::string, Held> held_;
  // xids prepared since reading began, with or without rows of ours.
  std::map<std::string, bool> prepared_;
  std::optional<replication::BinlogPosition> committing_from_;
  size_t bytes_ = 0;
};

// The xid of an XA_PREPARE event, in the form XaQueryXid returns.
std::string XaEventXid(const protocol::XaPrepareEvent& ev);

// What an XA statement does: "XA START ...", "XA PREPARE X'6131',X'',1",
// "XA COMMIT X'6131',X'',1 [ONE PHASE]" or "XA ROLLBACK X'6131',X'',1" as
// the binlog holds them. kind is kOther for XA END and anything
// unrecognised.
struct XaStatement {
  enum class Kind { kStart, kPrepare, kCommit, kCommitOnePhase, kRollback, kOther };
  Kind kind = Kind::kOther;
  std::string xid;  // normalised: lower-case hex "gtrid,bqual,format"
};
XaStatement ParseXaStatement(std::string_view query);

}  // namespace binrelay::apply
