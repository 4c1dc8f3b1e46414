// UpstreamSession: binrelay's replica connection to a source. It connects,
// runs the preflight, registers as a replica (COM_REGISTER_SLAVE), negotiates
// checksums and heartbeats, dumps from a file:position or GTID state, verifies
// the CRC32 of every event, and hands each event to a StreamConsumer.
//
// A lost or dead connection (no event or heartbeat within the read timeout)
// is re-established with exponential backoff, resuming right after the last
// complete transaction; the consumer is told to discard what it holds of the
// interrupted transaction first. Nothing is skipped or delivered twice.
//
// Thread safety: Run() on one thread; RequestStop() from any thread.
// Lifetime: event views passed to the consumer are valid only during the call.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "protocol/client_connection.h"
#include "protocol/event_framer.h"
#include "protocol/event_header.h"
#include "protocol/format_description.h"
#include "replication/binlog_position.h"
#include "replication/connection_sql_source.h"
#include "replication/preflight.h"
#include "replication/sql_source.h"
#include "replication/stream_consumer.h"
#include "replication/switch_target.h"
#include "replication/upstream_state.h"
#include "replication/transaction_boundary.h"

namespace binrelay::replication {

// How often a lost source's failover candidates are probed once
// failover_after has passed: a promotion is noticed within this.
inline constexpr std::chrono::milliseconds kFailoverProbeEvery{500};

struct UpstreamOptions {
  protocol::ConnectOptions connect;
  uint32_t server_id = 0;
  StartSpec start;
  bool until_end = false;                  // stop at the end of binlog as of connect
  // A kCurrent start begins at offset 4 of the current file: a local store
  // (BinlogStore) must hold whole files from their first byte.
  bool whole_files = false;
  bool require_full_row_image = false;
  std::chrono::milliseconds heartbeat_period{2000};
  std::chrono::milliseconds reconnect_timeout{60000};  // give up after this long
  std::chrono::milliseconds max_backoff{5000};
  // Read the source's SHOW GLOBAL VARIABLES at every connect (for a relay
  // that answers variable queries of its own clients).
  bool read_source_variables = false;
  // Retry a first connection that fails for a reason retrying can fix (the
  // source unreachable, or without a binlog yet), as later ones are; else
  // Run() returns its error at once, unless the source had already
  // authenticated it: a connection lost after that is the network's doing,
  // not the configuration's, and is retried within reconnect_timeout.
  bool retry_first_connect = false;
  // Ask the source for semi-synchronous replication and acknowledge each
  // transaction it flags once the consumer has it durably (the event that
  // needs the ACK is delivered with more_buffered = false, so a store
  // syncs it first). A source without semi-sync enabled streams as usual.
  bool semi_sync = false;
  // Lets a CHANGE MASTER TO with MASTER_USE_GTID / SOURCE_AUTO_POSITION
  // follow another server into the same consumer (null: refused).
  SwitchTarget* switch_target = nullptr;
  // Automatic failover (needs switch_target): once the source has been lost
  // for `failover_after` (zero: never), the candidates are probed
  // (ProbeCandidate) and ChooseSource's pick is followed by GTID, as a
  // by-GTID Repoint would; a refusal is logged and shown in last_error(),
  // the old source retried, and the probe repeated every
  // kFailoverProbeEvery (failover_after if shorter), however long the
  // source has been gone: a promotion is followed within that.
  // `candidates` lists the servers of the topology, the configured source
  // among them (same credentials and TLS).
  std::chrono::milliseconds failover_after{0};
  std::vector<protocol::ConnectOptions> candidates;
  bool follow_read_only = false;
  // Servers a switch before this run left ("host:port"): never chosen by
  // a failover (FollowStoredSource fills these from the store's eras).
  std::vector<std::string> left;
  std::vector<uint32_t> left_server_ids;
  // `connect` is the server the store followed before this run, not the
  // configured one (FollowStoredSource): an error it causes stops the
  // upstream, as after CHANGE MASTER TO, instead of ending binrelay.
  bool source_from_store = false;
  // Switches before this run, and when the last began (status only).
  uint64_t switches_before = 0;
  absl::Time last_switch_before = absl::InfinitePast();
};

struct UpstreamStats {
  std::atomic<uint64_t> events{0};
  std::atomic<uint64_t> semi_sync_acks{0};  // transactions acknowledged to the source
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> reconnects{0};
  std::atomic<uint64_t> source_switches{0};  // servers followed by GTID after the first
};

class UpstreamSession {
 public:
  UpstreamSession(UpstreamOptions options, StreamConsumer* consumer);
  ~UpstreamSession();

  // Streams until the end (until_end), a RequestStop(), or an error that
  // retrying cannot fix (bad credentials, unsuitable settings, purged binlog,
  // a consumer error, or a source unreachable for reconnect_timeout).
  absl::Status Run();
  // Async-signal-safe (an atomic store): serve and tail call it from their
  // SIGINT/SIGTERM handlers.
  void RequestStop() { stop_.store(true); }
  // STOP SLAVE / STOP REPLICA: the session leaves the stream at the next
  // packet (a transaction cut there is dropped by the consumer, as after a
  // lost connection), disconnects and waits in state kPaused; Resume (START
  // SLAVE) connects again and continues after the last complete
  // transaction. Both return at once; each is a no-op when already so.
  void Pause();
  void Resume();
  bool paused() const { return paused_.load(std::memory_order_relaxed); }
  // CHANGE MASTER TO, while paused: Resume connects with `connect`, runs the
  // preflight again and resumes after the last complete transaction (the
  // consumer checks that it is still the same binlog). An error that
  // retrying cannot fix (a wrong password, a missing binlog) then pauses
  // the session again with that error, instead of ending it.
  // `change` edits the options (those of an earlier Repoint not yet applied,
  // or those in use) under the session's lock. FailedPrecondition unless
  // paused and parked (state kPaused).
  // `by_gtid` (MASTER_USE_GTID = slave_pos, SOURCE_AUTO_POSITION = 1): the
  // server reached may be another one, holding every transaction consumed
  // so far; Resume continues on it from its binlog file that the consumed
  // GTIDs have passed (FindSwitchPoint), the consumer skipping what it has
  // (SwitchTarget). Unset: unchanged from an earlier Repoint.
  absl::Status Repoint(absl::FunctionRef<void(protocol::ConnectOptions*)> change,
                       std::optional<bool> by_gtid = std::nullopt);
  // The connection options in use, or those Repoint set (any thread): what
  // SHOW SLAVE STATUS names, as a server does right after CHANGE MASTER TO.
  protocol::ConnectOptions connect_options() const;
  // The server whose files the store holds now (any thread): the one the
  // session started with, then, after a Repoint or a failover, the new one
  // only once the store accepted an event of its binlog. What the rest of
  // binrelay means by the source (apply's metadata reads and moves, the
  // query forwarder, SHOW RELAY SOURCES): a server chosen but not switched
  // to yet, or refused by the store, is not where the stored tables live.
  protocol::ConnectOptions followed_options() const;
  // The servers switched away from (by address, by server_id): never
  // chosen by a failover. Any thread.
  std::pair<std::vector<std::string>, std::vector<uint32_t>> left_sources() const;

  // The preflight's facts; only from the thread that runs Run().
  const SourceInfo& source_info() const { return info_; }
  // The same from any thread (empty until the first preflight succeeded).
  SourceInfo source_info_snapshot() const;
  const UpstreamStats& stats() const { return stats_; }

  // For status output, from any thread.
  using State = UpstreamState;
  State state() const { return state_.load(std::memory_order_relaxed); }
  // End of the last complete transaction received (updated per transaction).
  BinlogPosition received() const;
  std::string last_error() const;
  // When the last event that was not a heartbeat arrived (InfinitePast: none).
  absl::Time last_event_time() const;
  // When the session last began following another server by GTID
  // (InfinitePast: never).
  absl::Time last_switch_time() const;
  // The source's global variables as of the last connect (lower-case names,
  // sorted by name); null unless read_source_variables (and connected once).
  // Shared and immutable: a reader copies a pointer, not the list.
  using VariableList = std::vector<std::pair<std::string, std::string>>;
  std::shared_ptr<const VariableList> source_variables() const;

 private:
  absl::Status ConnectAndPrepare(bool first);
  absl::Status ResolveStart();
  // The switch a by-GTID Repoint asked for, on the server now connected.
  absl::Status SwitchByGtid(SqlSource& sql);
  // The source is lost: probe the candidates and, if one may be followed,
  // re-point at it with a switch pending. Returns why none was ("" when one
  // was, or the source itself answers again).
  std::string TryFailover();
  absl::Status ReadSourceVariables(SqlSource& sql);
  absl::Status StartDump();
  absl::Status SendSemiSyncAck();
  absl::Status Stream();
  absl::Status HandleEvent(std::string_view bytes);
  absl::Status Command(std::string_view payload, std::string_view what);
  std::string Where() const;
  bool ReachedEnd(const BinlogPosition& pos) const;

  UpstreamOptions options_;
  StreamConsumer* consumer_;
  std::unique_ptr<protocol::ClientConnection> conn_;
  SourceInfo info_;
  UpstreamStats stats_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> paused_{false};
  absl::Mutex pause_mu_;  // for waking a paused Run (Resume, RequestStop)
  absl::CondVar pause_cv_;
  std::atomic<State> state_{State::kConnecting};
  mutable absl::Mutex status_mu_;
  BinlogPosition received_ ABSL_GUARDED_BY(status_mu_);
  std::string last_error_ ABSL_GUARDED_BY(status_mu_);
  std::shared_ptr<const VariableList> source_variables_ ABSL_GUARDED_BY(status_mu_);
  SourceInfo info_snapshot_ ABSL_GUARDED_BY(status_mu_);
  protocol::ConnectOptions connect_snapshot_ ABSL_GUARDED_BY(status_mu_);
  protocol::ConnectOptions followed_snapshot_ ABSL_GUARDED_BY(status_mu_);
  // Run thread: options_.connect is followed_snapshot_ (false from a
  // Repoint or failover taking effect until the store accepts an event).
  bool followed_published_ = true;
  void PublishFollowed();
  std::optional<protocol::ConnectOptions> repoint_ ABSL_GUARDED_BY(status_mu_);
  bool repoint_by_gtid_ ABSL_GUARDED_BY(status_mu_) = false;
  absl::Time last_switch_ ABSL_GUARDED_BY(status_mu_) = absl::InfinitePast();
  // Why the last automatic failover probe followed no candidate (cleared
  // once streaming again); last_error() carries it.
  std::string failover_refusal_ ABSL_GUARDED_BY(status_mu_);
  // left_ and left_server_ids_ as of the last switch, for other threads.
  std::vector<std::string> left_snapshot_ ABSL_GUARDED_BY(status_mu_);
  std::vector<uint32_t> left_ids_snapshot_ ABSL_GUARDED_BY(status_mu_);
  // Run thread: the next connect switches by GTID.
  bool switch_pending_ = false;
  // Run thread: addresses (host:port) switched away from; never followed
  // again by an automatic failover (an old primary that flaps back).
  std::vector<std::string> left_;
  // Run thread: server_ids switched away from (the same server under
  // another address is still left).
  std::vector<uint32_t> left_server_ids_;
  // Run thread: the address of the server whose files the store continues
  // (the last one streamed from, or the configured one before that).
  std::string followed_address_;
  // Run thread: a Repoint took effect and has not streamed yet.
  bool repointed_ = false;
  // Run thread: what was last logged, for logging a repeated failure
  // rarely.
  std::string last_logged_failure_;
  std::chrono::steady_clock::time_point last_logged_at_{};
  std::string last_logged_refusal_;
  std::chrono::steady_clock::time_point refusal_logged_at_{};
  bool rerun_preflight_ = false;
  // Run thread: Stream returned because the session was paused (the flag
  // may be cleared again by the time Run looks).
  bool left_for_pause_ = false;
  std::atomic<int64_t> last_event_ns_{0};  // absl::ToUnixNanos; 0: none yet

  // Stream state.
  protocol::EventFramer framer_;
  protocol::FormatDescription no_format_;  // passed along before the first FDE
  BinlogPosition current_;     // file being streamed, end of the last event
  BinlogPosition artificial_;  // current file, offset 0: for artificial events
  TransactionBoundary boundary_;
  std::optional<BinlogPosition> end_;  // until_end target
  // Positions were counted (end_log_pos 0) since the last real one.
  bool counted_positions_ = false;
  // This dump has delivered an event with a real end_log_pos: counting from
  // current_ is sound only after one.
  bool positioned_since_dump_ = false;
  bool position_trusted_ = false;      // last_boundary() may be used to resume
  bool semi_sync_active_ = false;      // this dump's events carry the semi-sync header
  bool force_durable_ = false;         // the event being handled needs an ACK
  bool done_ = false;
};

}  // namespace binrelay::replication
