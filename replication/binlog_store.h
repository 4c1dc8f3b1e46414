// BinlogStore: the durable local copy of the source's binlog. A directory of
// files with the SAME names and byte offsets as the source's: `\xFEbin`, then
// every non-artificial event exactly as received. It is a StreamConsumer, so
// an UpstreamSession feeds it directly.
//
// Files follow the source: a real ROTATE (or STOP) is its file's last event
// and closes it; the next file starts at that file's FDE (offset 4).
// Artificial events (fake ROTATE, heartbeats, MariaDB's fake GTID_LIST, an
// FDE re-sent with log_pos 0) arrive with end.offset 0 and are not stored.
// The re-sent FDE of a dump resuming inside the open file must match the
// stored one (server_id, timestamp, server version): otherwise the address
// reaches another server, or the source ran RESET MASTER, and its events
// would be spliced onto another binlog (Unavailable, retried). Likewise a
// new file whose FDE names another server_id than the stored file before
// it (refused before the file is created).
// Every stored event must start exactly at the file's current size (its
// log_pos is the size after it): anything else is DataLoss naming file:pos,
// and nothing is written (never a gap).
//
// BINLOG_IN_USE: the source sets the flag in its open file's FDE and clears it
// in place on close; the dump stream always sends it cleared. The store does
// the same, so the open file is a prefix of the source's open file and a
// closed file is byte-identical to the source's closed file.
//
// Durability (SyncPolicy): appends go to a buffer and are written in large
// pwrites. kEveryTransaction writes and fdatasyncs at each transaction end,
// except that transactions arriving in one burst (StreamEvent::more_buffered)
// share the fdatasync of the burst's last one (group commit; a background
// flusher bounds the wait by sync_interval);
// kInterval fdatasyncs at most every sync_interval; kOff writes where
// kEveryTransaction would sync (at a burst's last transaction) and never
// syncs. New files and index rewrites also fsync the directory (not with
// kOff). After each durable point the committed end
// (file, offset, GTID state) is published for readers.
//
// Recovery (Open): the newest file is cut after its last complete
// transaction; resume_position() is where the source must be read from.
// A failed write (disk full: ResourceExhausted naming dir and file) undoes
// its partial bytes and recovers the same way; OnEvent then keeps failing
// until OnStreamRestart (a new stream from resume_position()).
//
// Thread safety: OnEvent/OnStreamRestart/Flush from one writer thread; all
// other methods from any thread.
// Lifetime: returned values own their data; a StorePin must not outlive its
// store.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "replication/binlog_position.h"
#include "replication/gtid_state.h"
#include "replication/maria_binlog_state.h"
#include "replication/store_era.h"
#include "replication/store_index.h"
#include "replication/store_read_side.h"
#include "replication/stream_consumer.h"
#include "replication/switch_target.h"

namespace binrelay::replication {

enum class SyncPolicy { kEveryTransaction, kInterval, kOff };

struct BinlogStoreOptions {
  SyncPolicy sync = SyncPolicy::kEveryTransaction;
  // kInterval: longest time a transaction stays not durable.
  // kEveryTransaction and kOff: longest a burst's transactions wait for its
  // end to be written (and synced), i.e. to become visible to readers.
  std::chrono::milliseconds sync_interval{10};
  size_t buffer_bytes = 1 << 20;  // a write is issued when this much is buffered
  // Replaces ::pwrite (tests inject disk-full errors with it).
  std::function<ssize_t(int fd, const void* data, size_t n, off_t offset)> pwrite_fn;
};


// Which files Purge removes: the oldest ones, while any limit wants them
// gone, never the newest file, never a file a pin needs (but see
// hard_cap_bytes).
struct PurgeOptions {
  std::optional<std::chrono::system_clock::duration> older_than;  // by last modification
  std::optional<uint64_t> max_total_bytes;                        // keep at most this much
  // PURGE BINARY LOGS TO: every file before this one (not itself). NotFound,
  // removing nothing, if the store does not hold it.
  std::optional<std::string> before_file;
  // Last resort for the disk: while the store holds more than this, files
  // are removed even if a pin needs them (still never the newest file). Each
  // such pin becomes lost() and its consumer must end (see StorePin).
  std::optional<uint64_t> hard_cap_bytes;
};

struct PurgeResult {
  std::vector<std::string> removed;
  // The oldest file that the limits wanted gone but a pin keeps (or ""), and
  // the consumer and position of that pin ("replica 7 at binlog.000002:197").
  std::string kept_for_pin;
  std::string kept_for_consumer;
  // hard_cap_bytes: files removed although a pin needed them, and the
  // consumers whose pins were lost because of it.
  std::vector<std::string> removed_pinned;
  std::vector<std::string> lost_consumers;
};

class BinlogStore : public StreamConsumer, public StoreReadSide, public SwitchTarget {
 public:
  // Opens (creating the directory if needed) and recovers the store.
  static absl::StatusOr<std::unique_ptr<BinlogStore>> Open(const std::string& dir,
                                                           BinlogStoreOptions options = {});
  ~BinlogStore() override;  // Close(), errors logged

  // Where the source must be read from: after the last complete stored
  // transaction; nullopt for an empty store.
  std::optional<BinlogPosition> resume_position() const;
  // The session start: resume_position() if the store holds events, else
  // `configured`, which must then begin at a file's first byte (earliest,
  // current with UpstreamOptions::whole_files, or FILE:4).
  absl::StatusOr<StartSpec> StartFor(const StartSpec& configured) const;

  absl::Status OnEvent(const StreamEvent& e) override;
  void OnStreamRestart(const BinlogPosition& resume) override;
  // resume_position(): what is on disk after a failed write.
  std::optional<BinlogPosition> ResumeAfterFailure() const override { return resume_position(); }
  bool ResumeVerified() const override;

  // Continues the store on another source after a failover (store_era.h).
  // The open file is closed as the old source left it, without the
  // partial transaction at its end; a new era begins whose entry is the
  // stored GTID state, and the next file stored must be `first_file` (the
  // new source's, from offset 4: its SwitchPoint), kept as
  // era-N/<first_file>. The transactions of that file the store already
  // holds leave the GTID state alone. resume_position() is then
  // first_file:4. Writer thread, between streams. FailedPrecondition on an
  // empty store or one whose stream carries no GTIDs (nothing could tell
  // which transactions the new source repeats). Returns the era.
  // `server_id`: the new source's; the era's first file must carry it.
  // `address`: how it was reached ("host:port"), kept in the era's entry
  // for a restart to follow (CurrentEraEntry).
  // `left_address`: the server followed until now (the entry also keeps
  // the server_id of the newest stored file as the one left).
  absl::StatusOr<uint32_t> BeginEra(std::string_view first_file, uint32_t server_id,
                                    std::string_view address = "",
                                    std::string_view left_address = "");
  // The entry of the era new files go to (NotFound in era 0).
  absl::StatusOr<EraEntry> CurrentEraEntry() const;
  // The era new files go to (0 until a switch).
  uint32_t era() const override;
  // SwitchTarget: the writer's GTID state at its last complete transaction,
  // and BeginEra.
  SourceGtids ConsumedGtids() const override;
  absl::StatusOr<uint32_t> BeginSwitch(std::string_view first_file, uint32_t server_id,
                                       std::string_view address,
                                       std::string_view left_address) override;
  // Rewrites the current era's entry with `address` (no-op in era 0 or if
  // unchanged).
  absl::Status RecordSourceAddress(std::string_view address) override;

  // Writes, syncs (unless kOff) and publishes everything complete now.
  absl::Status Flush();
  // Flush, stop the background flusher, close the file. Idempotent.
  absl::Status Close();

  CommittedEnd committed() const override;
  // committed().sequence without copying the rest.
  uint64_t committed_sequence() const override;
  // MariaDB: the binlog state (every server's last GTID per domain) at the
  // committed end, which a dump checks a replica's GTID position against.
  // Waits until committed().sequence > after_sequence; false on timeout.
  bool WaitForCommitted(uint64_t after_sequence, absl::Duration timeout,
                        CommittedEnd* out) const override;

  // Called after every publication of the committed end, on the writer's
  // thread with store locks held: it must be quick and must not call into
  // the store (dumps only post a wake-up to their io thread).
  void SetCommitListener(std::function<void()> listener);
  // Called when a stored file is closed (the source rotated), on the
  // writer's thread under the store's lock: as quick and non-reentrant as
  // the commit listener. Retention runs a pass then, as MySQL expires its
  // binlogs at rotation.
  void SetFileClosedListener(std::function<void()> listener);

  std::vector<StoreFileEntry> Files() const;  // oldest first, with sizes
  // What readers may see: the files up to the committed end, the last one
  // with its committed size. A file the writer has started but not yet made
  // durable (even its FDE) is left out, so a dump never selects it early.
  std::vector<StoreFileEntry> CommittedFiles() const override;
  // True if `name` is stored and complete: it ended with a ROTATE or STOP
  // (or the source abandoned it), so nothing will ever be appended to it.
  bool IsClosed(const std::string& name) const override;
  // The committed file a dump from GTID position `gtid` starts in (index
  // lookup, no file scan); see FileForGtidPosition.
  absl::StatusOr<std::string> FileForGtid(const SourceGtids& position) const override;
  const std::string& dir() const override { return dir_; }

  // `consumer` names the reader in purge messages and status ("replica
  // 10.0.0.7:51234 server_id 7").
  StorePin Pin(const BinlogPosition& position, std::string consumer = "") override;
  void SyncPromptlyFor(absl::Duration d) override;
  absl::StatusOr<PurgeResult> Purge(const PurgeOptions& options);
  std::vector<PinInfo> Pins() const;  // oldest pin first
  // Counters since Open, for status: files removed by Purge (any reason),
  // and pins lost to the hard cap.
  uint64_t purged_files() const { return purged_files_.load(std::memory_order_relaxed); }
  uint64_t lost_pins() const { return lost_pins_.load(std::memory_order_relaxed); }

 private:
  friend class StorePin;
  enum class FileState { kNone, kOpen, kClosed };

  BinlogStore(std::string dir, BinlogStoreOptions options);
  absl::Status LoadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status StartFileLocked(const StreamEvent& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The FDE a dump re-sends (log_pos 0) when it resumes inside the open
  // file must be that file's: same server_id, timestamp and server
  // version. Unavailable (retried) otherwise.
  absl::Status CheckResumedFileLocked(const StreamEvent& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status AppendLocked(const StreamEvent& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CloseFileLocked(bool clean) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops the bytes of a transaction not stored whole (the stream ended
  // inside it).
  absl::Status CutToSafePointLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The GTIDs stored before `stored_name`'s era (kNone in era 0).
  absl::StatusOr<SourceGtids> EraFloor(const std::string& stored_name) const;
  // The newest file is `source_name` of the current era.
  bool IsNewestLocked(std::string_view source_name) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteLocked(std::string_view data, uint64_t offset)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteBufferLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status FlushLocked(bool sync) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status FailLocked(absl::Status s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteIndexLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PublishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FlusherLoop();
  std::string PathOf(const std::string& name) const { return dir_ + "/" + name; }
  bool durable() const { return options_.sync != SyncPolicy::kOff; }

  const std::string dir_;
  const BinlogStoreOptions options_;

  mutable absl::Mutex mu_;  // the writer state
  std::vector<StoreFileEntry> files_ ABSL_GUARDED_BY(mu_);
  FileState state_ ABSL_GUARDED_BY(mu_) = FileState::kNone;
  std::optional<std::string> rotate_to_ ABSL_GUARDED_BY(mu_);  // after a closing ROTATE
  int fd_ ABSL_GUARDED_BY(mu_) = -1;
  uint64_t size_ ABSL_GUARDED_BY(mu_) = 0;        // logical size: written + buffered
  std::string buf_ ABSL_GUARDED_BY(mu_);          // bytes from buf_offset_ on
  uint64_t buf_offset_ ABSL_GUARDED_BY(mu_) = 0;  // file offset of buf_[0]
  bool in_txn_ ABSL_GUARDED_BY(mu_) = false;
  // The last re-sent format description was compared with the open stored
  // file's and matched (ResumeVerified).
  bool resume_verified_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t safe_offset_ ABSL_GUARDED_BY(mu_) = 0;  // end of the last complete transaction
  GtidState gtids_ ABSL_GUARDED_BY(mu_);
  // The server_id in the newest stored file's FDE (0: none): a next file
  // written by another server is refused (StartFileLocked).
  uint32_t fde_server_id_ ABSL_GUARDED_BY(mu_) = 0;
  // The era new files go to; pending_era_ is set from BeginEra until the
  // era's first file is started.
  uint32_t era_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<EraEntry> pending_era_ ABSL_GUARDED_BY(mu_);
  bool unpublished_ ABSL_GUARDED_BY(mu_) = false;   // a safe point newer than committed
  absl::Time first_unpublished_ ABSL_GUARDED_BY(mu_);
  // SyncPromptlyFor: until when the flusher publishes at once, and a count
  // of requests that wakes it from its interval's wait.
  absl::Time prompt_until_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  uint64_t prompt_requests_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t prompt_seen_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status failed_ ABSL_GUARDED_BY(mu_);        // sticky until OnStreamRestart
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;
  std::function<void()> file_closed_listener_ ABSL_GUARDED_BY(mu_);
  std::thread flusher_;

  mutable absl::Mutex commit_mu_;
  CommittedEnd committed_ ABSL_GUARDED_BY(commit_mu_);
  std::function<void()> commit_listener_ ABSL_GUARDED_BY(commit_mu_);

  struct PinState {
    BinlogPosition position;
    std::string consumer;
    std::string lost_reason;  // non-empty: lost to a hard-cap purge
    absl::Time expires = absl::InfiniteFuture();  // a lingering pin ends here
  };
  // Drops lingering pins whose time is up.
  void ExpirePinsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(pin_mu_);
  // Lock order: mu_ before pin_mu_ (Purge holds both).
  mutable absl::Mutex pin_mu_ ABSL_ACQUIRED_AFTER(mu_);
  std::map<uint64_t, PinState> pins_ ABSL_GUARDED_BY(pin_mu_);
  uint64_t next_pin_ ABSL_GUARDED_BY(pin_mu_) = 1;
  std::atomic<uint64_t> purged_files_{0};
  std::atomic<uint64_t> lost_pins_{0};
};

}  // namespace binrelay::replication
