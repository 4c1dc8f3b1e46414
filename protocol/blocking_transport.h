// BlockingTransport: a TCP connection with optional TLS and per-call
// deadlines, exposed as a blocking API. Internally every operation is an
// Asio async op on a private io_context run until the deadline, which is
// how Boost 1.74 gives timeouts without a watchdog thread.
//
// Errors carry the peer ("host:port"): DeadlineExceeded when a deadline
// passes, Unavailable when the peer closed or reset the connection or it
// cannot be reached. A read that times out is cancelled, not fatal: the
// connection stays usable. A write that times out closes the connection
// (part of a packet may have been sent).
//
// Thread safety: none; one thread uses a transport at a time.
// Lifetime: nothing returned refers into the transport.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace binrelay::protocol {

class BlockingTransport {
 public:
  using Clock = std::chrono::steady_clock;

  // Resolves and connects to host:port. `tls_ca_file`, if not empty, is the
  // CA bundle used to verify the server certificate when TLS is started, and
  // with `verify_identity` also that the certificate names `host` (MySQL's
  // VERIFY_CA and VERIFY_IDENTITY); without it TLS encrypts but does not
  // authenticate the server.
  static absl::StatusOr<std::unique_ptr<BlockingTransport>> Connect(
      const std::string& host, uint16_t port, const std::string& tls_ca_file,
      bool verify_identity, Clock::time_point deadline);
  ~BlockingTransport();
  BlockingTransport(const BlockingTransport&) = delete;
  BlockingTransport& operator=(const BlockingTransport&) = delete;

  // Runs the TLS client handshake on the connected socket.
  absl::Status StartTls(Clock::time_point deadline);
  bool tls() const;

  // Reads at least one byte into buf[0..size). EOF is Unavailable.
  absl::StatusOr<size_t> ReadSome(char* buf, size_t size, Clock::time_point deadline);
  absl::Status WriteAll(std::string_view data, Clock::time_point deadline);
  // `head` then `body` in one gathered write (writev on plain sockets), so a
  // large body is sent without first being copied behind its header.
  absl::Status WriteAll(std::string_view head, std::string_view body, Clock::time_point deadline);
  // Closes the socket (no TLS close_notify: the peer may be gone). Idempotent.
  void Close();
  bool is_open() const;

  const std::string& peer() const { return peer_; }

 private:
  struct Impl;
  BlockingTransport(std::unique_ptr<Impl> impl, std::string host, std::string peer);

  std::unique_ptr<Impl> impl_;
  std::string host_;
  std::string peer_;
};

}  // namespace binrelay::protocol
