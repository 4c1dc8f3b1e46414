#include "proxy/listener.h"

#include <algorithm>
#include <exception>

#include "absl/strings/str_cat.h"
#include "protocol/server_error.h"
#include "protocol/server_packets.h"
#include "protocol/status_macros.h"
#include "proxy/client_error.h"
#include "spdlog/spdlog.h"

namespace binrelay::proxy {

namespace {

using Clock = std::chrono::steady_clock;
constexpr uint16_t kErConCountError = 1040;  // ER_CON_COUNT_ERROR, 08004
constexpr uint16_t kErHandshakeErrorCode = 1043;  // ER_HANDSHAKE_ERROR, 08S01
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);
constexpr auto kRefusalLogEvery = std::chrono::seconds(10);

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
  asio::steady_timer idle;   // a caught-up dump, or deferred work, waits on it
  std::unique_ptr<asio::ssl::stream<tcp::socket&>> tls;  // after an SSLRequest
  // When the current read or write must have finished (max: none). Checked
  // by a ticking watchdog rather than a timer re-armed per operation:
  // re-arming wakes the reactor thread, a context switch per write.
  Clock::time_point deadline = Clock::time_point::max();
  // On the deadline, cancel the operation (the session still has something
  // to say, e.g. ER_HANDSHAKE_ERROR) instead of closing the socket.
  bool cancel_on_deadline = false;
  bool timed_out = false;
  bool finished = false;  // Serve returned: the watchdog ends
  uint32_t id = 0;        // connection id (also the registry's)
  std::string peer;
  Clock::time_point accepted = Clock::now();
  // Strand-only state of a dump.
  bool dumping = false;
  bool woken = false;     // a commit arrived since the dump last looked
  bool stopping = false;  // the listener is stopping: say so and close
  bool peer_gone = false;  // the dumping client closed its end
  bool killed = false;     // KILL CONNECTION of an idle connection
  absl::Status kill;       // KILL of a dump: how it ends

  // The operation started now must end by `timeout` from now; while
  // stopping, nothing may take longer than the stop grace.
  void Arm(std::chrono::milliseconds timeout, bool cancel = false) {
    ArmAt(Clock::now() + timeout, cancel);
  }
  void ArmAt(Clock::time_point at, bool cancel = false) {
    if (stopping) at = std::min(at, Clock::now() + kStopGrace);
    deadline = at;
    cancel_on_deadline = cancel;
    timed_out = false;
  }
  void Disarm() { deadline = Clock::time_point::max(); }
  static constexpr std::chrono::milliseconds kStopGrace{2000};

  void Close() {
    boost::system::error_code ignored;
    socket.close(ignored);
  }

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
    : ioc_(ioc),
      options_(std::move(options)),
      admin_(admin),
      dump_(dump),
      accept_strand_(asio::make_strand(ioc)),
      acceptor_(accept_strand_) {
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
  asio::co_spawn(accept_strand_, AcceptLoop(), LogIfThrown("proxy accept loop"));
}

void Listener::Stop() {
  if (stopped_.exchange(true)) return;
  // The acceptor belongs to the accept loop's strand: close it there.
  asio::post(accept_strand_, [this] {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
  });
  for (auto& close : connections_.CloseAll()) close();
}

asio::awaitable<void> Listener::Refuse(tcp::socket socket) {
  // ER_CON_COUNT_ERROR in place of the greeting, as servers answer it; one
  // small packet, written without waiting (the socket buffer takes it).
  std::string out;
  uint8_t seq = 0;
  protocol::AppendFramedPacket(
      &out, protocol::BuildErrPacket(kErConCountError, "08004", "Too many connections"), &seq);
  boost::system::error_code ec;
  socket.non_blocking(true, ec);
  if (!ec) socket.write_some(asio::buffer(out), ec);
  socket.close(ec);
  co_return;
}

asio::awaitable<void> Listener::AcceptLoop() {
  Clock::time_point last_refusal_log{};
  uint64_t refused_since_log = 0;
  Clock::time_point last_error_log{};
  asio::steady_timer backoff(accept_strand_);
  while (true) {
    boost::system::error_code ec;
    tcp::socket socket =
        co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
      // Transient (EMFILE: no descriptors left): wait a little instead of
      // spinning on the failing accept, and say so once in a while.
      if (Clock::now() - last_error_log >= kRefusalLogEvery) {
        spdlog::warn("proxy accept on port {} failed: {} (retrying every {} ms)", port_,
                     ec.message(), kAcceptBackoff.count());
        last_error_log = Clock::now();
      }
      backoff.expires_after(kAcceptBackoff);
      co_await backoff.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    auto strand = asio::make_strand(ioc_);
    auto conn = std::make_shared<Connection>(std::move(socket), strand);
    boost::system::error_code rec;
    auto remote = conn->socket.remote_endpoint(rec);
    conn->peer = rec ? std::string("unknown")
                     : absl::StrCat(remote.address().to_string(), ":", remote.port());
    // Hooks run on the connection's strand: sockets are not thread-safe.
    std::weak_ptr<Connection> weak = conn;
    ConnectionRegistry::Hooks hooks;
    hooks.close = [weak] {
      if (auto c = weak.lock()) {
        asio::post(c->strand, [c] {
          c->stopping = true;
          if (c->dumping) {
            // The dump loop sends ER_SERVER_SHUTDOWN and closes; if it is
            // stuck writing to a stalled replica, the watchdog closes.
            c->idle.cancel();
            c->deadline = std::min(c->deadline, Clock::now() + Connection::kStopGrace);
            return;
          }
          c->Close();
          c->idle.cancel();
          c->timer.cancel();
        });
      }
    };
    hooks.kill = [weak](bool query_only) {
      if (auto c = weak.lock()) {
        asio::post(c->strand, [c, query_only] {
          if (c->dumping) {
            c->kill = query_only
                          ? ClientError(absl::StatusCode::kCancelled,
                                        protocol::server_error::kQueryInterrupted,
                                        "Query execution was interrupted", "70100")
                          : ClientError(absl::StatusCode::kCancelled,
                                        protocol::server_error::kConnectionKilled,
                                        "Connection was killed", "70100");
            c->idle.cancel();
          } else if (!query_only) {
            c->killed = true;
            c->Close();
          }
        });
      }
    };
    bool over_limit = false;
    auto id = connections_.Add(conn->peer, std::move(hooks), options_.max_connections,
                               &over_limit);
    if (!id) {
      if (!over_limit) co_return;  // stopping: the socket closes with `conn`
      refused_.fetch_add(1);
      ++refused_since_log;
      if (Clock::now() - last_refusal_log >= kRefusalLogEvery) {
        spdlog::warn("proxy: refused {} connection(s) from {} and others: max_connections={} "
                     "are open ([listen] max_connections)",
                     refused_since_log, conn->peer, options_.max_connections);
        last_refusal_log = Clock::now();
        refused_since_log = 0;
      }
      co_await Refuse(std::move(conn->socket));
      continue;
    }
    conn->id = *id;
    asio::co_spawn(strand, Watch(conn), asio::detached);
    asio::co_spawn(strand, Serve(conn), LogIfThrown("proxy connection"));
  }
}

asio::awaitable<void> Listener::Watch(std::shared_ptr<Connection> conn) {
  const auto shortest = std::min(options_.read_timeout, options_.auth_timeout);
  const auto tick = std::clamp<std::chrono::milliseconds>(
      shortest / 4, std::chrono::milliseconds(10), std::chrono::seconds(1));
  boost::system::error_code ec;
  while (!conn->finished) {
    conn->timer.expires_after(tick);
    co_await conn->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (conn->finished) break;
    if (Clock::now() >= conn->deadline) {
      // The pending read or write fails, and Serve ends the connection.
      conn->timed_out = true;
      boost::system::error_code ignored;
      if (conn->cancel_on_deadline) {
        conn->socket.cancel(ignored);
      } else {
        conn->socket.close(ignored);
      }
      conn->Disarm();
    }
  }
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

asio::awaitable<DeferredResult> Listener::RunDeferred(std::shared_ptr<Connection> conn,
                                                      DeferredWork work) {
  DeferredResult busy;
  if (options_.pool == nullptr || !work) {
    busy.status = ClientError(absl::StatusCode::kUnavailable,
                              protocol::server_error::kUnknownError,
                              "binrelay cannot run this statement here (no worker pool)");
    co_return busy;
  }
  struct Slot {
    bool done = false;
    DeferredResult result;
  };
  auto slot = std::make_shared<Slot>();
  const bool queued = options_.pool->Submit([slot, work = std::move(work), conn]() mutable {
    DeferredResult r = work();
    asio::post(conn->strand, [slot, conn, r = std::move(r)]() mutable {
      slot->result = std::move(r);
      slot->done = true;
      conn->idle.cancel();
    });
  });
  if (!queued) {
    busy.status = ClientError(absl::StatusCode::kResourceExhausted,
                              protocol::server_error::kUnknownError,
                              "binrelay is busy: too many statements wait for its workers; "
                              "retry shortly");
    co_return busy;
  }
  boost::system::error_code ec;
  // The work has its own time limits (query_forwarder.h); a stop waits for
  // it, since it refers to nothing the connection owns.
  while (!slot->done) {
    conn->idle.expires_at(asio::steady_timer::time_point::max());
    co_await conn->idle.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  co_return std::move(slot->result);
}

asio::awaitable<void> Listener::Serve(std::shared_ptr<Connection> conn) {
  ServerSessionOptions opts = options_.session;
  opts.connection_id = conn->id;
  {
    boost::system::error_code ec;
    auto remote = conn->socket.remote_endpoint(ec);
    opts.auth.peer_host = ec ? std::string("unknown") : remote.address().to_string();
  }
  if (options_.server_version) {
    opts.server_version = options_.server_version();
    // Greet as the source's own server would (server_auth.h).
    opts.auth.plugin = std::string(GreetingPluginFor(opts.server_version));
  }
  ServerSession session(std::move(opts), admin_, dump_, options_.forwarder, &connections_);

  // Whatever ends the coroutine (a return, an error, an exception), the
  // connection leaves every list and its socket and watchdog stop. A frame
  // destroyed while suspended (the io_context itself is being destroyed)
  // only closes its socket: the listener and handlers may be gone already.
  struct Cleanup {
    Listener* self;
    std::shared_ptr<Connection> conn;
    ServerSession* session;
    bool ended = false;  // the coroutine ran to its end
    int exceptions = std::uncaught_exceptions();
    ~Cleanup() {
      boost::system::error_code ec;
      conn->socket.close(ec);
      if (!ended && std::uncaught_exceptions() <= exceptions) return;
      // SHOW SLAVE HOSTS lists a replica while it is connected, as MariaDB does.
      if (session->registration()) {
        self->admin_->ReplicaDisconnected(session->registration()->server_id);
      }
      conn->finished = true;
      conn->timer.cancel();
      self->connections_.Remove(conn->id);
    }
  } cleanup{this, conn, &session};

  const auto auth_deadline = conn->accepted + options_.auth_timeout;
  std::optional<Clock::time_point> packet_started;
  ConnectionRegistry::Activity activity;
  auto report = [&](std::string_view command) {
    activity.user = session.user();
    activity.db = session.session_state().database;
    activity.command = std::string(command);
    activity.info = session.current_statement();
    activity.state = command == "Binlog Dump" ? "Master has sent all binlog to slave; waiting "
                                                "for more updates"
                                              : "";
    connections_.Update(conn->id, activity);
  };

  std::string out;
  boost::system::error_code ec;
  if (options_.ready) {
    if (absl::Status ready = options_.ready(); !ready.ok()) {
      uint8_t seq = 0;
      protocol::AppendFramedPacket(
          &out,
          protocol::BuildErrPacket(protocol::server_error::kServerShutdown, "08S01",
                                   SV(ready.message())),
          &seq);
      (void)co_await Write(conn, out);
      cleanup.ended = true;
      co_return;
    }
  }
  absl::Status st = session.Start(&out);
  while (st.ok()) {
    if (!out.empty()) {
      st = co_await Write(conn, out);
      out.clear();
      if (!st.ok()) break;
    }
    const ServerSession::State state = session.state();
    if (state == ServerSession::State::kDumpAccepted) {
      std::unique_ptr<DumpStream> dump = session.TakeDumpStream();
      report("Binlog Dump");
      conn->dumping = true;
      asio::co_spawn(conn->strand, DumpReader(conn), asio::detached);
      st = co_await StreamDump(conn, *dump);
      conn->dumping = false;
      dump.reset();  // unpins the store and leaves the registry now
      // The source ends a connection after its dump, however it ended.
      session.EndDump();
      break;
    }
    if (state == ServerSession::State::kDeferred) {
      report("Query");
      DeferredResult r = co_await RunDeferred(conn, session.TakeDeferred());
      st = session.FinishDeferred(std::move(r), &out);
      if (st.ok()) st = session.Process(&out);
      if (!st.ok() && !out.empty()) (void)co_await Write(conn, out);
      report("Sleep");
      continue;
    }
    if (state == ServerSession::State::kStartTls) {
      std::string early = session.TakeTlsBytes();
      conn->tls = std::make_unique<asio::ssl::stream<tcp::socket&>>(conn->socket,
                                                                    *options_.tls_context);
      conn->ArmAt(auth_deadline);
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
    if (state != ServerSession::State::kAuth && state != ServerSession::State::kCommand) break;
    // The deadline of this read: the whole authentication has one, a packet
    // once started has one, and between commands the idle timeout.
    const bool auth = state == ServerSession::State::kAuth;
    if (auth) {
      conn->ArmAt(auth_deadline, /*cancel=*/true);
    } else if (session.mid_packet()) {
      if (!packet_started) packet_started = Clock::now();
      conn->ArmAt(*packet_started + options_.read_timeout);
    } else {
      packet_started.reset();
      conn->Arm(options_.idle_timeout);
    }
    char* dst = nullptr;
    size_t room = session.PrepareRead(options_.session.read_buffer, &dst);
    size_t n = co_await conn->ReadSome(asio::buffer(dst, room), ec);
    conn->Disarm();
    if (ec) {
      if (ec == asio::error::eof) {
        st = absl::OkStatus();
      } else if (conn->timed_out && auth) {
        out.clear();
        uint8_t seq = 0;
        protocol::AppendFramedPacket(
            &out, protocol::BuildErrPacket(kErHandshakeErrorCode, "08S01",
                                           "Bad handshake: authentication did not complete in "
                                           "time ([listen] auth_timeout)"),
            &seq);
        (void)co_await Write(conn, out);
        st = absl::DeadlineExceededError(absl::StrCat(
            "authentication did not complete within ", options_.auth_timeout.count(),
            " ms ([listen] auth_timeout)"));
      } else if (conn->killed) {
        st = absl::CancelledError("killed (KILL CONNECTION)");
      } else if (conn->timed_out) {
        st = absl::DeadlineExceededError(absl::StrCat(
            session.mid_packet()
                ? absl::StrCat("a packet did not arrive whole within ",
                               options_.read_timeout.count(), " ms ([listen] read_timeout)")
                : absl::StrCat("idle for ", options_.idle_timeout.count(),
                               " ms ([listen] idle_timeout)")));
      } else {
        st = absl::UnavailableError(absl::StrCat("read failed: ", ec.message()));
      }
      break;
    }
    if (conn->stopping) break;
    session.CommitRead(n);
    st = session.Process(&out);
    if (!st.ok() && !out.empty()) {
      // Send the ERR that explains the close before closing.
      (void)co_await Write(conn, out);
    }
    if (session.state() == ServerSession::State::kCommand) report("Sleep");
  }
  if (!st.ok()) {
    spdlog::info("proxy connection {} {} (user '{}') closed: {}", conn->id, conn->peer,
                 session.user(), std::string(st.message()));
  }
  boost::system::error_code ignored;
  conn->socket.shutdown(tcp::socket::shutdown_both, ignored);
  cleanup.ended = true;
}

asio::awaitable<void> Listener::DumpReader(std::shared_ptr<Connection> conn) {
  // Replicas send nothing while dumping (semi-sync ACKs aside); what comes
  // is read and dropped, so only the end of the connection matters.
  char buf[512];
  boost::system::error_code ec;
  while (conn->dumping) {
    co_await conn->ReadSome(asio::buffer(buf), ec);
    if (ec) break;
  }
  if (conn->dumping) {
    conn->peer_gone = true;
    conn->idle.cancel();
  }
}

asio::awaitable<absl::Status> Listener::StreamDump(std::shared_ptr<Connection> conn,
                                                   DumpStream& dump) {
  // About this much is written per async_write: large enough to amortise
  // the syscall, small enough to keep memory per replica bounded.
  constexpr size_t kBudget = 256 * 1024;
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
    if (conn->peer_gone) {
      co_return absl::UnavailableError("the client closed the connection during its dump");
    }
    if (conn->stopping || !conn->kill.ok()) {
      absl::Status why = !conn->kill.ok()
                             ? conn->kill
                             : ClientError(absl::StatusCode::kCancelled,
                                           protocol::server_error::kServerShutdown,
                                           "binrelay is shutting down; reconnect when it is back",
                                           "08S01");
      dump.AppendError(&out, why);
      (void)co_await Write(conn, out);
      co_return why;
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
    if (*progress == DumpStream::Progress::kFinished) co_return absl::OkStatus();
    // Caught up: sleep until the store commits more, the heartbeat is due,
    // or the client leaves.
    conn->woken = false;
    if (!dump.ArmWake(wake)) continue;
    boost::system::error_code ec;
    if (!conn->stopping && !conn->peer_gone && conn->kill.ok()) {
      auto period = dump.heartbeat_period();
      if (period.count() > 0) {
        conn->idle.expires_after(period);
      } else {
        conn->idle.expires_at(asio::steady_timer::time_point::max());
      }
      co_await conn->idle.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    dump.DisarmWake();
    if (!ec && !conn->woken && !conn->stopping && !conn->peer_gone && conn->kill.ok()) {
      out.clear();
      dump.AppendHeartbeat(&out);
      absl::Status w = co_await Write(conn, out);
      if (!w.ok()) co_return w;
    }
  }
}

}  // namespace binrelay::proxy
