// StoreReadSide: what a reader of the local store sees of it. Readers are
// StoreReader (the events), dumps (proxy/binlog_sender.h) and apply
// pipelines (apply/pipeline.h); they take this interface, not BinlogStore,
// so none of them can write, purge or reconfigure the store, and a test can
// hand them a store of its own. BinlogStore, the one writer, implements it
// and publishes its committed end to every reader alike. (ripple's
// BinlogReader declares its BinlogInterface the same way: the reader owns
// the contract it needs.)
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "replication/binlog_position.h"
#include "replication/source_gtids.h"
#include "replication/store_index.h"

namespace binrelay::replication {

// The end of the last durable transaction, for readers.
struct CommittedEnd {
  BinlogPosition position;  // empty file name: the store is empty
  // GTID state after it (null: none known); shared, since every reader
  // copies this struct per wake-up and a published state never changes.
  std::shared_ptr<const SourceGtids> gtids;
  uint64_t sequence = 0;    // +1 per publication
  uint64_t epoch = 0;       // +1 whenever stored bytes were cut (truncate)

  // The state, kNone when none is known.
  const SourceGtids& gtid_state() const {
    static const SourceGtids kNone;
    return gtids ? *gtids : kNone;
  }
};

// A pin as status output shows it.
struct PinInfo {
  std::string consumer;
  BinlogPosition position;
  std::string lost_reason;  // "" unless a hard-cap purge removed its file
};

class BinlogStore;

// A reader's claim on every file from `position` on; Purge never removes
// them unless PurgeOptions::hard_cap_bytes forces it, which marks the pin
// lost: the reader must then end its consumer with lost_reason(). A lost pin
// holds nothing back; a pin on a file no longer stored holds every stored
// file (they all come after it). Move-only; released on destruction.
class StorePin {
 public:
  StorePin() = default;
  StorePin(StorePin&& other) noexcept { *this = std::move(other); }
  StorePin& operator=(StorePin&& other) noexcept;
  ~StorePin() { Release(); }
  // The reader went away but may come back (a replica reconnecting): the
  // claim stays in the store for `grace`, then ends by itself. This object
  // no longer holds it. A non-empty `from` moves the claim back there first
  // (what the consumer may really have received, if less than was sent).
  void Linger(absl::Duration grace, const BinlogPosition& from = {});
  void Advance(const BinlogPosition& position);  // the reader moved on
  void Release();
  bool active() const { return store_ != nullptr; }
  // A hard-cap purge removed a file this pin still needed. The reason reads
  // "binrelay purged FILE you still needed because
  // retention_hard_cap_bytes=N was reached; reconnect from a newer position".
  bool lost() const;
  std::string lost_reason() const;

 private:
  friend class BinlogStore;
  StorePin(BinlogStore* store, uint64_t id) : store_(store), id_(id) {}
  BinlogStore* store_ = nullptr;
  uint64_t id_ = 0;
};

class StoreReadSide {
 public:
  virtual ~StoreReadSide() = default;

  virtual CommittedEnd committed() const = 0;
  // committed().sequence without copying the rest.
  virtual uint64_t committed_sequence() const = 0;
  // Waits until committed().sequence > after_sequence; false on timeout.
  // `out` (may be null) receives the committed end seen.
  virtual bool WaitForCommitted(uint64_t after_sequence, absl::Duration timeout,
                                CommittedEnd* out) const = 0;
  // What readers may see: the files up to the committed end, oldest first,
  // the last one with its committed size. A file the writer has started but
  // not yet made durable (even its FDE) is left out.
  virtual std::vector<StoreFileEntry> CommittedFiles() const = 0;
  // True if `name` is stored and complete: it ended with a ROTATE or STOP
  // (or the source abandoned it), so nothing will ever be appended to it.
  virtual bool IsClosed(const std::string& name) const = 0;
  // The committed file a dump from GTID position `position` starts in
  // (index lookup, no file scan; see FileForGtidPosition).
  virtual absl::StatusOr<std::string> FileForGtid(const SourceGtids& position) const = 0;
  // The directory holding the files (a reader opens them itself).
  virtual const std::string& dir() const = 0;
  // The store era the current source's files go to (store_era.h): a
  // position the source reports names its file without it.
  virtual uint32_t era() const = 0;
  // A claim on every file from `position` on (see StorePin). `consumer`
  // names the reader in purge messages and status ("replica 10.0.0.7:51234
  // server_id 7", "apply pipeline orders").
  virtual StorePin Pin(const BinlogPosition& position, std::string consumer = "") = 0;
  // For the next `d`, each transaction is synced and published as soon as
  // it is stored, and so is what is stored unpublished now, whatever the
  // sync interval: for a reader that needs the newest events at once (a
  // move's cutover, which holds the source's tables locked until they are
  // applied). No effect when every transaction is published at once anyway.
  virtual void SyncPromptlyFor(absl::Duration d) = 0;
};

}  // namespace binrelay::replication
