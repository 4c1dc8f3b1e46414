// HttpServer: the [http] endpoint of binrelay serve. GET /status (JSON),
// /metrics (Prometheus text format) and /healthz, answered from a
// StatusProvider snapshot. Runs its own io_context thread so a slow HTTP
// client never touches the replication threads; every connection has a
// read/write deadline and small request limits; at most kMaxHttpConnections
// are served at once (more get 503), and a failing accept (no descriptors
// left) backs off instead of spinning.
//
// Thread safety: Start/Stop from one thread; the provider is called from the
// HTTP thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/status.h"
#include "proxy/relay_status.h"

namespace binrelay::proxy {

inline constexpr int kMaxHttpConnections = 64;
inline constexpr uint32_t kMaxHttpHeaderBytes = 8192;

class HttpServer {
 public:
  explicit HttpServer(const StatusProvider* provider);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds address:port (port 0 picks a free one) and starts serving.
  absl::Status Start(const std::string& address, uint16_t port);
  uint16_t port() const { return port_; }
  // Stops accepting, closes connections, joins the thread. Idempotent.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  const StatusProvider* provider_;
  uint16_t port_ = 0;
  std::thread thread_;
};

// The response to one request line, for tests: status code, content type, body.
struct HttpReply {
  int status = 200;
  std::string content_type;
  std::string body;
};
HttpReply HandleHttpRequest(std::string_view method, std::string_view target,
                            const StatusProvider& provider);
// Parses the first request in `bytes` under the server's limits, fed `piece`
// bytes at a time (0: all at once) as a connection's reads would feed it, and
// answers it as the server would; bytes after it are ignored (the server
// would read them as the next request). nullopt when the bytes do not begin
// with one complete, acceptable request (the server then closes the
// connection). For the fuzz target and tests.
std::optional<HttpReply> AnswerHttpBytes(std::string_view bytes, const StatusProvider& provider,
                                         size_t piece = 0);

}  // namespace binrelay::proxy
