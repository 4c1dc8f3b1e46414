#include "protocol/blocking_transport.h"

#include <array>

#include <utility>  // Asio 1.18 headers use std::exchange without including it.

#include <openssl/ssl.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <optional>

#include "absl/strings/str_cat.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

struct BlockingTransport::Impl {
  explicit Impl(asio::ssl::context ctx)
      : ssl_ctx(std::move(ctx)), stream(io, ssl_ctx) {}

  tcp::socket& socket() { return stream.next_layer(); }

  // Runs the io_context until `done` or the deadline. On expiry the pending
  // operation is cancelled (or the socket closed) and drained, so no handler
  // referencing the caller's stack outlives this call.
  bool RunUntil(const bool& done, Clock::time_point deadline, bool close_on_timeout) {
    io.restart();
    while (!done && Clock::now() < deadline) {
      if (io.run_one_until(deadline) == 0 && !done) {
        // No more work but not done cannot happen for a pending op; guard anyway.
        if (io.stopped()) break;
      }
    }
    if (done) return true;
    error_code ignored;
    if (close_on_timeout) {
      socket().close(ignored);
    } else {
      socket().cancel(ignored);
    }
    io.restart();
    io.run();
    return false;
  }

  asio::io_context io;
  asio::ssl::context ssl_ctx;
  asio::ssl::stream<tcp::socket> stream;
  bool verify = false;
  bool verify_identity = false;
  bool tls = false;
};

namespace {

absl::Status NetError(const error_code& ec, std::string_view what, std::string_view peer) {
  if (ec == asio::error::eof || ec == asio::error::connection_reset ||
      ec == asio::error::broken_pipe || ec == asio::ssl::error::stream_truncated) {
    return absl::UnavailableError(absl::StrCat("connection to ", AV(peer), " was closed by the "
                                               "server or the network during ",
                                               AV(what), " (", ec.message(), ")"));
  }
  return absl::UnavailableError(
      absl::StrCat(AV(what), " with ", AV(peer), " failed: ", ec.message()));
}

absl::Status Timeout(std::string_view what, std::string_view peer) {
  return absl::DeadlineExceededError(
      absl::StrCat("timed out during ", AV(what), " with ", AV(peer)));
}

}  // namespace

BlockingTransport::BlockingTransport(std::unique_ptr<Impl> impl, std::string host,
                                     std::string peer)
    : impl_(std::move(impl)), host_(std::move(host)), peer_(std::move(peer)) {}

BlockingTransport::~BlockingTransport() { Close(); }

absl::StatusOr<std::unique_ptr<BlockingTransport>> BlockingTransport::Connect(
    const std::string& host, uint16_t port, const std::string& tls_ca_file,
    bool verify_identity, Clock::time_point deadline) {
  const std::string peer = absl::StrCat(host, ":", port);
  std::unique_ptr<Impl> impl;
  try {
    // ssl::context's constructor throws only if OpenSSL cannot allocate.
    asio::ssl::context ctx(asio::ssl::context::tls_client);
    ctx.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                    asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                    asio::ssl::context::no_tlsv1_1);
    bool verify = false;
    if (!tls_ca_file.empty()) {
      error_code ec;
      ctx.load_verify_file(tls_ca_file, ec);
      if (ec) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cannot load TLS CA file '", tls_ca_file, "' for ", peer, ": ", ec.message()));
      }
      verify = true;
    }
    impl = std::make_unique<Impl>(std::move(ctx));
    impl->verify = verify;
    impl->verify_identity = verify && verify_identity;
  } catch (const boost::system::system_error& e) {
    return absl::InternalError(absl::StrCat("cannot create a TLS context: ", e.what()));
  }

  // Resolve (numeric hosts resolve without a lookup).
  tcp::resolver resolver(impl->io);
  bool done = false;
  error_code ec;
  tcp::resolver::results_type endpoints;
  resolver.async_resolve(host, std::to_string(port),
                         [&](const error_code& e, tcp::resolver::results_type r) {
                           ec = e;
                           endpoints = std::move(r);
                           done = true;
                         });
  if (!impl->RunUntil(done, deadline, true)) {
    resolver.cancel();
    return Timeout("name resolution", peer);
  }
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve host '", host, "' (", ec.message(), ")"));
  }

  done = false;
  asio::async_connect(impl->socket(), endpoints, [&](const error_code& e, const tcp::endpoint&) {
    ec = e;
    done = true;
  });
  if (!impl->RunUntil(done, deadline, true)) return Timeout("TCP connect", peer);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("cannot connect to ", peer, ": ", ec.message(),
                                               " (is the server running and reachable?)"));
  }
  error_code ignored;
  impl->socket().set_option(tcp::no_delay(true), ignored);
  impl->socket().set_option(asio::socket_base::keep_alive(true), ignored);
  return std::unique_ptr<BlockingTransport>(
      new BlockingTransport(std::move(impl), host, peer));
}

absl::Status BlockingTransport::StartTls(Clock::time_point deadline) {
  Impl& m = *impl_;
  if (m.verify) {
    m.stream.set_verify_mode(asio::ssl::verify_peer);
    if (m.verify_identity) {
      m.stream.set_verify_callback(asio::ssl::host_name_verification(host_));
    }
  } else {
    m.stream.set_verify_mode(asio::ssl::verify_none);
  }
  error_code ec;
  asio::ip::make_address(host_, ec);
  if (ec) {
    // SNI only for names; RFC 6066 forbids IP literals.
    SSL_set_tlsext_host_name(m.stream.native_handle(), host_.c_str());
  }
  bool done = false;
  m.stream.async_handshake(asio::ssl::stream_base::client, [&](const error_code& e) {
    ec = e;
    done = true;
  });
  if (!m.RunUntil(done, deadline, true)) return Timeout("TLS handshake", peer_);
  if (ec) {
    std::string hint = m.verify_identity ? " (check the CA file and that the certificate names "
                                           "this host)"
                       : m.verify ? " (check the CA file)"
                                  : "";
    return absl::UnavailableError(
        absl::StrCat("TLS handshake with ", peer_, " failed: ", ec.message(), hint));
  }
  m.tls = true;
  return absl::OkStatus();
}

bool BlockingTransport::tls() const { return impl_->tls; }
bool BlockingTransport::is_open() const { return impl_->socket().is_open(); }

absl::StatusOr<size_t> BlockingTransport::ReadSome(char* buf, size_t size,
                                                   Clock::time_point deadline) {
  Impl& m = *impl_;
  if (!m.socket().is_open()) {
    return absl::UnavailableError(absl::StrCat("connection to ", peer_, " is closed"));
  }
  bool done = false;
  error_code ec;
  size_t n = 0;
  auto handler = [&](const error_code& e, size_t k) {
    ec = e;
    n = k;
    done = true;
  };
  if (m.tls) {
    m.stream.async_read_some(asio::buffer(buf, size), handler);
  } else {
    m.socket().async_read_some(asio::buffer(buf, size), handler);
  }
  if (!m.RunUntil(done, deadline, false)) {
    // The read may still have delivered bytes before the cancel landed.
    if (n > 0) return n;
    return Timeout("read", peer_);
  }
  if (n > 0) return n;
  if (ec) {
    Close();
    return NetError(ec, "read", peer_);
  }
  return absl::UnavailableError(absl::StrCat("connection to ", peer_, " returned no data"));
}

absl::Status BlockingTransport::WriteAll(std::string_view data, Clock::time_point deadline) {
  return WriteAll(data, std::string_view(), deadline);
}

absl::Status BlockingTransport::WriteAll(std::string_view head, std::string_view body,
                                         Clock::time_point deadline) {
  Impl& m = *impl_;
  if (!m.socket().is_open()) {
    return absl::UnavailableError(absl::StrCat("connection to ", peer_, " is closed"));
  }
  bool done = false;
  error_code ec;
  auto handler = [&](const error_code& e, size_t) {
    ec = e;
    done = true;
  };
  const std::array<asio::const_buffer, 2> buffers{asio::buffer(head.data(), head.size()),
                                                  asio::buffer(body.data(), body.size())};
  if (m.tls) {
    asio::async_write(m.stream, buffers, handler);
  } else {
    asio::async_write(m.socket(), buffers, handler);
  }
  if (!m.RunUntil(done, deadline, true)) return Timeout("write", peer_);
  if (ec) {
    Close();
    return NetError(ec, "write", peer_);
  }
  return absl::OkStatus();
}

void BlockingTransport::Close() {
  if (!impl_) return;
  error_code ignored;
  impl_->socket().shutdown(tcp::socket::shutdown_both, ignored);
  impl_->socket().close(ignored);
}

}  // namespace binrelay::protocol
