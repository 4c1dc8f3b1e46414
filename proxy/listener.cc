#include "proxy/listener.h"

#include <exception>

#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"
#include "spdlog/spdlog.h"

namespace binrelay::proxy {

// Everything one connection coroutine owns; shared with its watchdog timer
// handler, which may outlive the coroutine's current await.
struct Listener::Connection {
  Connection(tcp::socket s, asio::strand<asio::io_context::executor_type> st)
      : strand(st), socket(std::move(s)), timer(st) {}
  asio::strand<asio::io_context::executor_type> strand;
  tcp::socket socket;
  asio::steady_timer timer;
  uint64_t watchdog_generation = 0;
  uint64_t registry_id = 0;
  std::string peer;

  // Closes the socket unless the operation it guards finished in time. The
  // generation check covers a timer that fired just before being re-armed.
  void Arm(std::chrono::milliseconds timeout, std::shared_ptr<Connection> self) {
    uint64_t gen = ++watchdog_generation;
    timer.expires_after(timeout);
    timer.async_wait([self = std::move(self), gen](const boost::system::error_code& ec) {
      if (!ec && self->watchdog_generation == gen) {
        boost::system::error_code ignored;
        self->socket.close(ignored);
      }
    });
  }
  void Disarm() {
    ++watchdog_generation;
    timer.cancel();
  }
};

Listener::Listener(asio::io_context& ioc, ListenerOptions options, AdminHandler* admin,
                   DumpHandler* dump)
    : ioc_(ioc), options_(std::move(options)), admin_(admin), dump_(dump), acceptor_(ioc) {}

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
  asio::co_spawn(ioc_, AcceptLoop(), [](std::exception_ptr e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      spdlog::error("proxy accept loop ended by exception: {}", ex.what());
    } catch (...) {
      spdlog::error("proxy accept loop ended by a non-standard exception");
    }
  });
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
          boost::system::error_code ignored;
          c->socket.close(ignored);
          c->timer.cancel();
        });
      }
    });
    if (!id) co_return;  // stopping: the socket closes with `conn`
    conn->registry_id = *id;
    asio::co_spawn(strand, Serve(conn), [](std::exception_ptr e) {
      if (!e) return;
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        spdlog::error("proxy connection ended by exception: {}", ex.what());
      } catch (...) {
        spdlog::error("proxy connection ended by a non-standard exception");
      }
    });
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
  ServerSession session(std::move(opts), admin_, dump_);

  std::string out;
  absl::Status st = session.Start(&out);
  while (st.ok()) {
    if (!out.empty()) {
      conn->Arm(options_.read_timeout, conn);
      co_await asio::async_write(conn->socket, asio::buffer(out),
                                 asio::redirect_error(asio::use_awaitable, ec));
      conn->Disarm();
      out.clear();
      if (ec) {
        st = absl::UnavailableError(absl::StrCat("write failed: ", ec.message()));
        break;
      }
    }
    if (session.state() != ServerSession::State::kAuth &&
        session.state() != ServerSession::State::kCommand) {
      break;
    }
    char* dst = nullptr;
    size_t room = session.PrepareRead(4096, &dst);
    conn->Arm(options_.read_timeout, conn);
    size_t n = co_await conn->socket.async_read_some(asio::buffer(dst, room),
                                                      asio::redirect_error(asio::use_awaitable, ec));
    conn->Disarm();
    if (ec) {
      st = ec == asio::error::eof
               ? absl::OkStatus()
               : absl::UnavailableError(absl::StrCat("read failed or timed out: ", ec.message()));
      break;
    }
    session.CommitRead(n);
    st = session.Process(&out);
    if (!st.ok() && !out.empty()) {
      // Send the ERR that explains the close before closing.
      conn->Arm(options_.read_timeout, conn);
      co_await asio::async_write(conn->socket, asio::buffer(out),
                                 asio::redirect_error(asio::use_awaitable, ec));
      conn->Disarm();
    }
  }
  if (!st.ok()) {
    spdlog::info("proxy connection {} (user '{}') closed: {}", conn->peer, session.user(),
                 std::string(st.message()));
  } else if (session.state() == ServerSession::State::kDumpAccepted) {
    const DumpRequest& d = *session.dump_request();
    spdlog::warn(
        "proxy connection {}: dump of '{}' at {} (flags 0x{:x}, server_id {}) accepted but "
        "streaming is not implemented yet; closing",
        conn->peer, d.file, d.position, d.flags, d.server_id);
  }
  conn->socket.shutdown(tcp::socket::shutdown_both, ec);
  conn->socket.close(ec);
  connections_.Remove(conn->registry_id);
}

}  // namespace binrelay::proxy
