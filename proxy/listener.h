// Listener: accepts TCP connections on [listen] and runs one C++20 coroutine
// per connection, each on its own strand, driving a ServerSession: it writes
// the greeting, then reads bytes into the session, writes its replies, runs
// its deferred work on the WorkerPool, and closes the socket when the
// session closes.
//
// Limits (every one a documented [listen] setting):
// - max_connections: one more connection gets ER_CON_COUNT_ERROR (1040)
//   instead of a greeting, and a log line (at most one per 10 s);
// - auth_timeout: from accept to authenticated, whatever the client sends
//   (a byte every few seconds does not extend it); then ER_HANDSHAKE_ERROR
//   (1043) and close;
// - read_timeout: a packet, once started, must arrive whole, and a write
//   must make progress, within it (a stalled or half-open client holds
//   nothing for longer);
// - idle_timeout: an authenticated connection may wait this long between
//   commands (MySQL's wait_timeout);
// - read buffers start small (ServerSessionOptions::read_buffer) and grow
//   only while a large packet lasts.
// Deadlines are checked by one ticking watchdog per connection rather than a
// timer re-armed per operation (re-arming woke the reactor thread, a context
// switch per write). When accept fails (EMFILE: no descriptors left) the
// accept loop backs off instead of spinning.
//
// TLS: with a tls_context, CLIENT_SSL is announced; a client's SSLRequest
// switches the connection to an ssl::stream over the same socket (bytes the
// client sent early are handed to the TLS handshake), and authentication
// continues encrypted.
//
// A session whose dump the DumpHandler accepted hands its DumpStream to the
// connection, which streams it: it writes what the stream fills, and when the
// stream has caught up waits for a commit wake-up or the replica's heartbeat
// period (never polling). A reader runs beside the writer (as in Asio's
// chat_server example), so a replica that closed its end is noticed at once,
// not at the next commit, and its pin and registration go. On Stop, dumps
// get ER_SERVER_SHUTDOWN (1053) before the close. KILL (ConnectionControl)
// ends a dump with ER_QUERY_INTERRUPTED or ER_CONNECTION_KILLED, or closes
// an idle connection.
//
// Thread safety: Start/Stop/port may be called from any thread; the
// io_context may run on several threads. The handlers must be thread-safe
// (admin_handler.h).
// Lifetime: the Listener, the handlers, the pool and the io_context must
// outlive the accept loop and every connection: call Stop() and let the
// io_context run until its work is done (or stop it) before destroying them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "proxy/admin_handler.h"
#include "proxy/asio.h"
#include "protocol/worker_pool.h"
#include "proxy/connection_registry.h"
#include "proxy/query_forwarder.h"
#include "proxy/server_session.h"

namespace binrelay::proxy {

struct ListenerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port (see Listener::port())
  std::chrono::milliseconds read_timeout{std::chrono::seconds(60)};
  std::chrono::milliseconds auth_timeout{std::chrono::seconds(10)};
  std::chrono::milliseconds idle_timeout{std::chrono::hours(8)};
  size_t max_connections = 512;
  // Set: TLS is offered to clients (MakeServerTlsContext).
  std::shared_ptr<asio::ssl::context> tls_context;
  // Template for every connection; connection_id and the peer host are
  // filled in per connection.
  ServerSessionOptions session;
  // Set: the greeting's version per connection (it may follow the source);
  // the greeting's auth plugin then follows it too (GreetingPluginFor).
  std::function<std::string()> server_version;
  // Where deferred work runs; null: it is refused with an error.
  WorkerPool* pool = nullptr;
  // Null: nothing is forwarded to the source.
  QueryForwarder* forwarder = nullptr;
  // Set: asked before each greeting; an error is sent instead of it as
  // ER_SERVER_SHUTDOWN (1053, which clients retry) with the error's message.
  std::function<absl::Status()> ready;
};

// A TLS server context from PEM files; errors name the file.
absl::StatusOr<std::shared_ptr<asio::ssl::context>> MakeServerTlsContext(
    const std::string& cert_file, const std::string& key_file);

class Listener {
 public:
  // Binds and listens (errors: the address or port is unusable). Accepting
  // starts with Start().
  static absl::StatusOr<std::unique_ptr<Listener>> Create(asio::io_context& ioc,
                                                          ListenerOptions options,
                                                          AdminHandler* admin, DumpHandler* dump);
  ~Listener();

  void Start();
  // Stops accepting and closes every open connection (asynchronously, on
  // their strands). Idempotent.
  void Stop();
  uint16_t port() const { return port_; }
  size_t open_connections() const { return connections_.size(); }
  // SHOW PROCESSLIST and KILL for admin statements.
  ConnectionControl* connections() { return &connections_; }
  // Connections refused because max_connections were open.
  uint64_t refused_connections() const { return refused_.load(); }

 private:
  struct Connection;
  Listener(asio::io_context& ioc, ListenerOptions options, AdminHandler* admin,
           DumpHandler* dump);
  asio::awaitable<void> AcceptLoop();
  // The first packet to a connection over max_connections, then close.
  asio::awaitable<void> Refuse(tcp::socket socket);
  asio::awaitable<void> Serve(std::shared_ptr<Connection> conn);
  // Closes the connection when a read or write outlives its deadline.
  asio::awaitable<void> Watch(std::shared_ptr<Connection> conn);
  // Streams one dump.
  asio::awaitable<absl::Status> StreamDump(std::shared_ptr<Connection> conn, DumpStream& dump);
  // Reads what a dumping client sends (nothing, normally) until it closes.
  asio::awaitable<void> DumpReader(std::shared_ptr<Connection> conn);
  // Runs the session's deferred work on the pool and waits for it.
  asio::awaitable<DeferredResult> RunDeferred(std::shared_ptr<Connection> conn,
                                              DeferredWork work);
  asio::awaitable<absl::Status> Write(std::shared_ptr<Connection> conn, const std::string& out);

  asio::io_context& ioc_;
  ListenerOptions options_;
  AdminHandler* admin_;
  DumpHandler* dump_;
  asio::strand<asio::io_context::executor_type> accept_strand_;
  tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  ConnectionRegistry connections_;
  std::atomic<bool> stopped_{false};
  std::atomic<uint64_t> refused_{0};
};

}  // namespace binrelay::proxy
