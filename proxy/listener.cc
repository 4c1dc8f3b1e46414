#include "proxy/listener.h"

#include <algorithm>
#include <exception>

#include "absl/strings/str_cat.h"
#include "protocol/server_error.h"
#include "protocol/status_macros.h"
#include "proxy/client_error.h"
#include "spdlog/spdlog.h"

namespace binrelay::proxy {

namespace {

// Completion handler of a detached coroutine: an exception escaping it is
// logged (coroutines return Status; this only catches the unexpected).
auto LogIfThrown(const char* what) {
  return [what](std::exception_ptr e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      spdlog::error("{} ended by exception: {}", what, ex.what());
    } catch (...) {
      spdlog::error("{} ended by a non-standard exception", what);
    }
  };
}

}  // namespace

// Everything one connection coroutine owns; shared with its watchdog timer
// handler, which may outlive the coroutine's current await.
struct Listener::Connection {
  Connection(tcp::socket s, asio::strand<asio::io_context::executor_type> st)
      : strand(st), socket(std::move(s)), timer(st), idle(st) {}
  asio::strand<asio::io_context::executor_type> strand;
  tcp::socket socket;
  asio::steady_timer timer;  // ticks the watchdog (Listener::Watch)
  asio::steady_timer idle;   // a caught-up dump waits on it
  std::unique_ptr<asio::ssl::stream<tcp::socket&>> tls;  // after an SSLRequest
  // When the current read or write must have finished (max: none). Checked
  // by a ticking watchdog rather than a timer re-armed per operation:
  // re-arming wakes the reactor thread, a context switch per write.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  bool finished = false;  // Serve returned: the watchdog ends
  uint64_t registry_id = 0;
  std::string peer;
  // Strand-only state of a dump.
  bool dumping = false;
  bool woken = false;     // a commit arrived since the dump last looked
  bool stopping = false;  // the listener is stopping: say so and close

  // The socket is closed unless the operation started now ends in time;
  // while stopping, nothing may take longer than the stop grace.
  void Arm(std::chrono::milliseconds timeout) {
    if (stopping) timeout = std::min<std::chrono::milliseconds>(timeout, kStopGrace);
    deadline = std::chrono::steady_clock::now() + timeout;
  }
  void Disarm() { deadline = std::chrono::steady_clock::time_point::max(); }
  static constexpr std::chrono::milliseconds kStopGrace{2000};

  asio::awaitable<size_t> ReadSome(asio::mutable_buffer b, boost::system::error_code& ec) {
    if (tls) co_return co_await tls->async_read_some(b, asio::redirect_error(asio::use_awaitable, ec));
    co_return co_await socket.async_read_some(b, asio::redirect_error(asio::use_awaitable, ec));
  }
  asio::awaitable<void> WriteAll(asio::const_buffer b, boost::system::error_code& ec) {
    if (tls) {
      co_await asio::async_write(*tls, b, asio::redirect_error(asio::use_awaitable, ec));
    } else {
      co_await asio::async_write(socket, b, asio::redirect_error(asio::use_awaitable, ec));
    }
  }
};

absl::StatusOr<std::shared_ptr<asio::ssl::context>> MakeServerTlsContext(
    const std::string& cert_file, const std::string& key_file) {
  auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
  boost::system::error_code ec;
  ctx->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                       asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                       asio::ssl::context::no_tlsv1_1,
                   ec);
  if (!ec) ctx->use_certificate_chain_file(cert_file, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat("[listen] ssl_cert '", cert_file,
                                                   "' is not a usable PEM certificate: ", ec.message()));
  }
  ctx->use_private_key_file(key_file, asio::ssl::context::pem, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat("[listen] ssl_key '", key_file,
                                                   "' is not a usable PEM key for ssl_cert: ",
                                                   ec.message()));
  }
  return ctx;
}

Listener::Listener(asio::io_context& ioc, ListenerOptions options, AdminHandler* admin,
                   DumpHandler* dump)
    : ioc_(ioc), options_(std::move(options)), admin_(admin), dump_(dump), acceptor_(ioc) {
  if (options_.tls_context) options_.session.auth.tls_available = true;
}

Listener::~Listener() { Stop(); }

absl::StatusOr<std::unique_ptr<Listener>> Listener::Create(asio::io_context& ioc,
                                                           ListenerOptions options,
                                                           AdminHandler* admin,
                                                           DumpHandler* dump) {
  boost::system::error_code ec;
  auto address = asio::ip::make_address(options.address, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("[listen] address '", options.address, "' is not an IP address: ", ec.message()));
  }
  tcp::endpoint endpoint(address, options.port);
  std::unique_ptr<Listener> l(new Listener(ioc, std::move(options), admin, dump));
  auto fail = [&](std::string_view what) {
    return absl::UnavailableError(absl::StrCat("cannot ", AV(what), " ", endpoint.address().to_string(),
                                               ":", endpoint.port(), ": ", ec.message()));
  };
  l->acceptor_.open(endpoint.protocol(), ec);
  if (ec) return fail("open a socket for");
  l->acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (ec) return fail("configure");
  l->acceptor_.bind(endpoint, ec);
  if (ec) return fail("bind");
  l->acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return fail("listen on");
  l->port_ = l->acceptor_.local_endpoint(ec).port();
  if (ec) return fail("read the local port of");
  return l;
}

void Listener::Start() {
  asio::co_spawn(ioc_, AcceptLoop(), LogIfThrown("proxy accept loop"));
}

void Listener::Stop() {
  if (stopped_.exchange(true)) return;
  asio::post(acceptor_.get_executor(), [this] {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
  });
  for (auto& close : connections_.CloseAll()) close();
}

asio::awaitable<void> Listener::AcceptLoop() {
  while (true) {
    boost::system::error_code ec;
    tcp::socket socket = co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
      // Transient (e.g. EMFILE): log and keep accepting.
      spdlog::warn("proxy accept on port {} failed: {}", port_, ec.message());
      continue;
    }
    auto strand = asio::make_strand(ioc_);
    auto conn = std::make_shared<Connection>(std::move(socket), strand);
    // The closer runs on the connection's strand: sockets are not thread-safe.
    std::weak_ptr<Connection> weak = conn;
    auto id = connections_.Add([weak] {
      if (auto c = weak.lock()) {
        asio::post(c->strand, [c] {
          c->stopping = true;
          if (c->dumping) {
            // The dump loop sends ER_SERVER_SHUTDOWN and closes; if it is
            // stuck writing to a stalled replica, the watchdog closes.
            c->idle.cancel();
            c->deadline = std::min(c->deadline, std::chrono::steady_clock::now() + Connection::kStopGrace);
            return;
          }
          boost::system::error_code ignored;
          c->socket.close(ignored);
          c->timer.cancel();
        });
      }
    });
    if (!id) co_return;  // stopping: the socket closes with `conn`
    conn->registry_id = *id;
    asio::co_spawn(strand, Watch(conn), asio::detached);
    asio::co_spawn(strand, Serve(conn), LogIfThrown("proxy connection"));
  }
}

asio::awaitable<void> Listener::Watch(std::shared_ptr<Connection> conn) {
  const auto tick = std::clamp<std::chrono::milliseconds>(
      options_.read_timeout / 4, std::chrono::milliseconds(10), std::chrono::seconds(1));
  boost::system::error_code ec;
  while (!conn->finished) {
    conn->timer.expires_after(tick);
    co_await conn->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (conn->finished) break;
    if (std::chrono::steady_clock::now() >= conn->deadline) {
      // The pending read or write fails, and Serve ends the connection.
      boost::system::error_code ignored;
      conn->socket.close(ignored);
      conn->Disarm();
    }
  }
}

asio::awaitable<void> Listener::Serve(std::shared_ptr<Connection> conn) {
  boost::system::error_code ec;
  auto remote = conn->socket.remote_endpoint(ec);
  std::string host = ec ? std::string("unknown") : remote.address().to_string();
  conn->peer = ec ? host : absl::StrCat(host, ":", remote.port());

  ServerSessionOptions opts = options_.session;
  opts.connection_id = next_connection_id_++;
  opts.auth.peer_host = host;
  if (options_.server_version) opts.server_version = options_.server_version();
  ServerSession session(std::move(opts), admin_, dump_);

  std::string out;
  absl::Status st = session.Start(&out);
  while (st.ok()) {
    if (!out.empty()) {
      st = co_await Write(conn, out);
      out.clear();
      if (!st.ok()) break;
    }
    if (session.state() == ServerSession::State::kDumpAccepted) {
      std::unique_ptr<DumpStream> dump = session.TakeDumpStream();
      absl::StatusOr<bool> ended = co_await StreamDump(conn, *dump);
      dump.reset();  // unpins the store and leaves the registry now
      if (!ended.ok()) {
        st = ended.status();
        break;
      }
      session.EndDump();
      continue;
    }
    if (session.state() == ServerSession::State::kStartTls) {
      std::string early = session.TakeTlsBytes();
      conn->tls = std::make_unique<asio::ssl::stream<tcp::socket&>>(conn->socket,
                                                                    *options_.tls_context);
      conn->Arm(options_.read_timeout);
      co_await conn->tls->async_handshake(asio::ssl::stream_base::server, asio::buffer(early),
                                          asio::redirect_error(asio::use_awaitable, ec));
      conn->Disarm();
      if (ec) {
        st = absl::UnavailableError(absl::StrCat("TLS handshake failed: ", ec.message()));
        break;
      }
      session.TlsStarted();
      continue;
    }
    if (session.state() != ServerSession::State::kAuth &&
        session.state() != ServerSession::State::kCommand) {
      break;
    }
    char* dst = nullptr;
    size_t room = session.PrepareRead(4096, &dst);
    conn->Arm(options_.read_timeout);
    size_t n = co_await conn->ReadSome(asio::buffer(dst, room), ec);
    conn->Disarm();
    if (ec) {
      st = ec == asio::error::eof
               ? absl::OkStatus()
               : absl::UnavailableError(absl::StrCat("read failed or timed out: ", ec.message()));
      break;
    }
    if (conn->stopping) break;
    session.CommitRead(n);
    st = session.Process(&out);
    if (!st.ok() && !out.empty()) {
      // Send the ERR that explains the close before closing.
      (void)co_await Write(conn, out);
    }
  }
  if (!st.ok()) {
    spdlog::info("proxy connection {} (user '{}') closed: {}", conn->peer, session.user(),
                 std::string(st.message()));
  }
  // SHOW SLAVE HOSTS lists a replica while it is connected, as MariaDB does.
  if (session.registration()) admin_->ReplicaDisconnected(session.registration()->server_id);
  conn->socket.shutdown(tcp::socket::shutdown_both, ec);
  conn->socket.close(ec);
  conn->finished = true;
  conn->timer.cancel();
  connections_.Remove(conn->registry_id);
}

asio::awaitable<absl::Status> Listener::Write(std::shared_ptr<Connection> conn,
                                              const std::string& out) {
  boost::system::error_code ec;
  conn->Arm(options_.read_timeout);
  co_await conn->WriteAll(asio::buffer(out), ec);
  conn->Disarm();
  if (ec) {
    co_return absl::UnavailableError(
        absl::StrCat("write to ", conn->peer, " failed or made no progress for ",
                     options_.read_timeout.count(), " ms: ", ec.message()));
  }
  co_return absl::OkStatus();
}

asio::awaitable<absl::StatusOr<bool>> Listener::StreamDump(std::shared_ptr<Connection> conn,
                                                           DumpStream& dump) {
  // About this much is written per async_write: large enough to amortise
  // the syscall, small enough to keep memory per replica bounded.
  constexpr size_t kBudget = 256 * 1024;
  conn->dumping = true;
  std::string out;
  std::weak_ptr<Connection> weak = conn;
  auto wake = [weak] {
    if (auto c = weak.lock()) {
      asio::post(c->strand, [c] {
        c->woken = true;
        c->idle.cancel();
      });
    }
  };
  while (true) {
    out.clear();
    if (conn->stopping) {
      dump.AppendError(&out, ClientError(absl::StatusCode::kCancelled,
                                         protocol::server_error::kServerShutdown,
                                         "binrelay is shutting down; reconnect when it is back",
                                         "08S01"));
      (void)co_await Write(conn, out);
      co_return absl::CancelledError("binrelay is stopping");
    }
    absl::StatusOr<DumpStream::Progress> progress = dump.Fill(&out, kBudget);
    if (!progress.ok()) {
      // Events already filled are whole and valid: send them, then the error.
      dump.AppendError(&out, progress.status());
      (void)co_await Write(conn, out);
      co_return progress.status();
    }
    if (!out.empty()) {
      absl::Status w = co_await Write(conn, out);
      if (!w.ok()) co_return w;
    }
    if (*progress == DumpStream::Progress::kMore) continue;
    if (*progress == DumpStream::Progress::kFinished) {
      conn->dumping = false;
      co_return true;
    }
    // Caught up: sleep until the store commits more, or the heartbeat is due.
    conn->woken = false;
    if (!dump.ArmWake(wake)) continue;
    boost::system::error_code ec;
    if (!conn->stopping) {
      auto period = dump.heartbeat_period();
      if (period.count() > 0) {
        conn->idle.expires_after(period);
      } else {
        conn->idle.expires_at(asio::steady_timer::time_point::max());
      }
      co_await conn->idle.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    dump.DisarmWake();
    if (!ec && !conn->woken && !conn->stopping) {
      out.clear();
      dump.AppendHeartbeat(&out);
      absl::Status w = co_await Write(conn, out);
      if (!w.ok()) co_return w;
    }
  }
}

}  // namespace binrelay::proxy
