#include "proxy/http_server.h"

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp needs std::exchange

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"
#include "spdlog/spdlog.h"

namespace binrelay::proxy {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

constexpr auto kIoTimeout = std::chrono::seconds(10);
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);

using RequestParser = http::request_parser<http::empty_body>;

// The limits every request is parsed under (the server's and AnswerHttpBytes').
void LimitRequest(RequestParser& parser) {
  parser.header_limit(kMaxHttpHeaderBytes);  // GET requests only: a few headers, no body
  parser.body_limit(0);
}

HttpReply Answer(const RequestParser& parser, const StatusProvider& provider) {
  const auto& req = parser.get();
  return HandleHttpRequest(std::string_view(req.method_string().data(), req.method_string().size()),
                           std::string_view(req.target().data(), req.target().size()), provider);
}

asio::awaitable<void> ServeConnection(tcp::socket socket, const StatusProvider* provider,
                                      std::shared_ptr<std::atomic<int>> open) {
  struct Count {
    std::shared_ptr<std::atomic<int>> open;
    ~Count() { open->fetch_sub(1); }
  } count{open};
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer(8192);
  while (true) {
    RequestParser parser;
    LimitRequest(parser);
    stream.expires_after(kIoTimeout);
    boost::system::error_code ec;
    co_await http::async_read(stream, buffer, parser,
                              asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;  // closed, timed out or malformed: nothing more to say
    const auto& req = parser.get();
    HttpReply reply = Answer(parser, *provider);
    http::response<http::string_body> res{static_cast<http::status>(reply.status),
                                          req.version()};
    res.set(http::field::server, "binrelay");
    res.set(http::field::content_type, reply.content_type);
    res.keep_alive(req.keep_alive());
    res.body() = std::move(reply.body);
    res.prepare_payload();
    co_await http::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
    if (ec || !res.keep_alive()) break;
  }
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
}

asio::awaitable<void> Accept(tcp::acceptor& acceptor, const StatusProvider* provider) {
  auto open = std::make_shared<std::atomic<int>>(0);
  asio::steady_timer backoff(acceptor.get_executor());
  while (acceptor.is_open()) {
    boost::system::error_code ec;
    tcp::socket socket = co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
      // E.g. EMFILE: keep serving the connections we have, without spinning.
      backoff.expires_after(kAcceptBackoff);
      co_await backoff.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    if (open->load() >= kMaxHttpConnections) {
      // A crowd of HTTP clients must not hold unbounded memory: say so, close.
      static constexpr char kBusy[] =
          "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      socket.non_blocking(true, ec);
      if (!ec) socket.write_some(asio::buffer(kBusy, sizeof(kBusy) - 1), ec);
      socket.close(ec);
      continue;
    }
    open->fetch_add(1);
    asio::co_spawn(acceptor.get_executor(), ServeConnection(std::move(socket), provider, open),
                   asio::detached);
  }
}

}  // namespace

struct HttpServer::Impl {
  asio::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
};

HttpReply HandleHttpRequest(std::string_view method, std::string_view target,
                            const StatusProvider& provider) {
  if (method != "GET" && method != "HEAD") {
    return {405, "text/plain", "only GET is supported\n"};
  }
  std::string_view path = target.substr(0, target.find('?'));
  if (path == "/status") return {200, "application/json", RenderStatusJson(provider.Snapshot())};
  if (path == "/metrics") {
    return {200, "text/plain; version=0.0.4", RenderPrometheus(provider.Snapshot())};
  }
  if (path == "/healthz") return {200, "text/plain", "ok\n"};
  return {404, "text/plain", "not found: try /status, /metrics or /healthz\n"};
}

std::optional<HttpReply> AnswerHttpBytes(std::string_view bytes, const StatusProvider& provider,
                                         size_t piece) {
  RequestParser parser;
  LimitRequest(parser);
  parser.eager(true);
  if (piece == 0) piece = std::max<size_t>(bytes.size(), 1);
  // As http::async_read drives it: bytes arrive `piece` at a time into a
  // buffer, the parser takes what it can, the rest waits for more.
  std::string buffered;
  size_t arrived = 0;
  bool want_more = true;
  while (!parser.is_done()) {
    if (want_more) {
      if (arrived == bytes.size()) return std::nullopt;  // the request never completed
      const size_t n = std::min(piece, bytes.size() - arrived);
      buffered.append(bytes.substr(arrived, n));
      arrived += n;
    }
    boost::system::error_code ec;
    const size_t used = parser.put(asio::buffer(buffered), ec);
    buffered.erase(0, used);
    if (ec == http::error::need_more) {
      want_more = true;
    } else if (ec) {
      return std::nullopt;
    } else {
      // Progress, or more bytes needed to make any.
      want_more = used == 0 || buffered.empty();
    }
  }
  return Answer(parser, provider);
}

HttpServer::HttpServer(const StatusProvider* provider)
    : impl_(std::make_unique<Impl>()), provider_(provider) {}

HttpServer::~HttpServer() { Stop(); }

absl::Status HttpServer::Start(const std::string& address, uint16_t port) {
  boost::system::error_code ec;
  asio::ip::address ip = asio::ip::make_address(address, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("[http] address: '", address, "' is not an IP address"));
  }
  tcp::endpoint endpoint(ip, port);
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(endpoint, ec);
  if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("cannot listen for HTTP on ", address, ":", port,
                                               ": ", ec.message()));
  }
  port_ = impl_->acceptor.local_endpoint().port();
  asio::co_spawn(impl_->ioc, Accept(impl_->acceptor, provider_), asio::detached);
  thread_ = std::thread([this] { impl_->ioc.run(); });
  return absl::OkStatus();
}

void HttpServer::Stop() {
  if (!thread_.joinable()) return;
  asio::post(impl_->ioc, [this] {
    boost::system::error_code ignored;
    impl_->acceptor.close(ignored);
  });
  impl_->ioc.stop();  // HTTP replies are stateless: dropping one in flight loses nothing
  thread_.join();
}

}  // namespace binrelay::proxy
