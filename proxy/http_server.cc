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

// One request's bytes into Beast's parser, however they arrive, under one
// bound on the whole request. Boost 1.74's header_limit counts only the bytes
// not yet parsed at each put (boost/beast/http/impl/basic_parser.ipp: the
// first put parses every complete field it holds), so the same request was
// refused in one read and accepted in two, up to about twice the limit. Here
// a request is refused once its bytes pass kMaxHttpHeaderBytes (GET only: a
// few headers, no body), in one read or many.
class RequestFeeder {
 public:
  enum class Result { kNeedMore, kDone, kRefused };

  RequestFeeder() {
    parser_.header_limit(kMaxHttpHeaderBytes);
    parser_.body_limit(0);
    parser_.eager(true);
  }

  Result Feed(std::string_view bytes) {
    buffered_.append(bytes);
    while (!parser_.is_done() && !buffered_.empty()) {
      boost::system::error_code ec;
      const size_t used = parser_.put(asio::buffer(buffered_), ec);
      consumed_ += used;
      buffered_.erase(0, used);
      if (ec == http::error::need_more) break;
      if (ec) return Result::kRefused;
      if (used == 0) break;
    }
    if (parser_.is_done()) return consumed_ > kMaxHttpHeaderBytes ? Result::kRefused : Result::kDone;
    return consumed_ + buffered_.size() > kMaxHttpHeaderBytes ? Result::kRefused
                                                              : Result::kNeedMore;
  }

  const RequestParser& parser() const { return parser_; }
  // Bytes received after the request (a pipelined next one).
  std::string TakeRest() { return std::move(buffered_); }

 private:
  RequestParser parser_;
  std::string buffered_;
  size_t consumed_ = 0;
};

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
  std::string rest;
  char chunk[4096];
  boost::system::error_code ec;
  while (true) {
    RequestFeeder feeder;
    stream.expires_after(kIoTimeout);  // for the whole request
    RequestFeeder::Result r = feeder.Feed(rest);
    while (r == RequestFeeder::Result::kNeedMore) {
      const size_t n = co_await stream.async_read_some(
          asio::buffer(chunk), asio::redirect_error(asio::use_awaitable, ec));
      if (ec) break;
      r = feeder.Feed(std::string_view(chunk, n));
    }
    // Closed, timed out, malformed or too large: nothing more to say.
    if (ec || r != RequestFeeder::Result::kDone) break;
    rest = feeder.TakeRest();
    const auto& req = feeder.parser().get();
    HttpReply reply = Answer(feeder.parser(), *provider);
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
  if (piece == 0) piece = std::max<size_t>(bytes.size(), 1);
  RequestFeeder feeder;
  RequestFeeder::Result r = RequestFeeder::Result::kNeedMore;
  for (size_t at = 0; r == RequestFeeder::Result::kNeedMore && at < bytes.size(); at += piece) {
    r = feeder.Feed(bytes.substr(at, piece));
  }
  if (r != RequestFeeder::Result::kDone) return std::nullopt;
  return Answer(feeder.parser(), provider);
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
