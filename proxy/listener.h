// Listener: accepts TCP connections on [listen] and runs one C++20 coroutine
// per connection, each on its own strand, driving a ServerSession: it writes
// the greeting, then reads bytes into the session, writes its replies, and
// closes the socket when the session closes. A watchdog timer closes a
// connection that sends nothing for `read_timeout` (a stalled or half-open
// client must not hold a session forever).
//
// TLS: with a tls_context, CLIENT_SSL is announced; a client's SSLRequest
// switches the connection to an ssl::stream over the same socket (bytes the
// client sent early are handed to the TLS handshake), and authentication
// continues encrypted.
// A session whose dump the DumpHandler accepted hands its DumpStream to the
// connection, which streams it: it writes what the stream fills, and when the
// stream has caught up waits for a commit wake-up or the replica's heartbeat
// period (never polling). A write that makes no progress for `read_timeout`
// closes the connection, so a stalled replica holds nothing but its own
// socket. On Stop, dumps get ER_SERVER_SHUTDOWN (1053) before the close.
//
// Thread safety: Start/Stop/port may be called from any thread; the
// io_context may run on several threads. The handlers must be thread-safe
// (admin_handler.h).
// Lifetime: the Listener, the handlers and the io_context must outlive the
// accept loop and every connection: call Stop() and let the io_context run
// until its work is done (or stop it) before destroying them.
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
#include "proxy/connection_registry.h"
#include "proxy/server_session.h"

namespace binrelay::proxy {

struct ListenerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port (see Listener::port())
  std::chrono::milliseconds read_timeout{std::chrono::seconds(60)};
  // Set: TLS is offered to clients (MakeServerTlsContext).
  std::shared_ptr<asio::ssl::context> tls_context;
  // Template for every connection; connection_id and the peer host are
  // filled in per connection.
  ServerSessionOptions session;
  // Set: the greeting's version per connection (it may follow the source).
  std::function<std::string()> server_version;
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

 private:
  struct Connection;
  Listener(asio::io_context& ioc, ListenerOptions options, AdminHandler* admin,
           DumpHandler* dump);
  asio::awaitable<void> AcceptLoop();
  asio::awaitable<void> Serve(std::shared_ptr<Connection> conn);
  // Closes the connection when a read or write outlives its deadline.
  asio::awaitable<void> Watch(std::shared_ptr<Connection> conn);
  // Streams one dump. True: a non-blocking dump ended (command phase again).
  asio::awaitable<absl::StatusOr<bool>> StreamDump(std::shared_ptr<Connection> conn,
                                                   DumpStream& dump);
  asio::awaitable<absl::Status> Write(std::shared_ptr<Connection> conn, const std::string& out);

  asio::io_context& ioc_;
  ListenerOptions options_;
  AdminHandler* admin_;
  DumpHandler* dump_;
  tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::atomic<uint32_t> next_connection_id_{1};
  ConnectionRegistry connections_;
  std::atomic<bool> stopped_{false};
};

}  // namespace binrelay::proxy
