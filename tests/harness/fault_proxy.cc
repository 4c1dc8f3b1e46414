#include "tests/harness/fault_proxy.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace binrelay::testing {
namespace {

bool WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

void Reset(int fd) {
  linger l{1, 0};  // close() then sends RST
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
}

}  // namespace

absl::StatusOr<std::unique_ptr<FaultProxy>> FaultProxy::Start(const Options& options) {
  std::unique_ptr<FaultProxy> p(new FaultProxy(options));
  p->listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (p->listen_fd_ < 0 || ::bind(p->listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) ||
      ::listen(p->listen_fd_, 64) || ::getsockname(p->listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len)) {
    return absl::InternalError(absl::StrCat("fault proxy listen: ", std::strerror(errno)));
  }
  p->port_ = ntohs(addr.sin_port);
  p->acceptor_ = std::thread([raw = p.get()] { raw->AcceptLoop(); });
  return p;
}

FaultProxy::~FaultProxy() {
  stop_ = true;
  if (listen_fd_ >= 0) ::shutdown(listen_fd_, SHUT_RDWR);
  if (acceptor_.joinable()) acceptor_.join();
  {
    std::lock_guard<std::mutex> l(mu_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  for (std::thread& t : workers_) t.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

uint64_t FaultProxy::faults() const {
  uint64_t n = 0;
  for (const auto& c : counts_) n += c;
  return n;
}

void FaultProxy::AcceptLoop() {
  while (!stop_) {
    pollfd pfd{listen_fd_, POLLIN, 0};
    if (::poll(&pfd, 1, 100) <= 0) continue;
    const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    ++connections_;
    std::lock_guard<std::mutex> l(mu_);
    open_fds_.push_back(client);
    workers_.emplace_back([this, client, seed = rng_()] { Serve(client, seed); });
  }
}

void FaultProxy::Serve(int client, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto next_fault = [&](uint64_t from) {
    return from + std::uniform_int_distribution<uint64_t>(options_.min_bytes, options_.max_bytes)(rng);
  };
  const int upstream = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(options_.upstream_port);
  if (upstream < 0 || ::connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    Reset(client);
    std::lock_guard<std::mutex> l(mu_);
    open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), client), open_fds_.end());
    ::close(client);
    if (upstream >= 0) ::close(upstream);
    return;
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    open_fds_.push_back(upstream);
  }
  const int one = 1;
  ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::setsockopt(upstream, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  uint64_t forwarded = 0, fault_at = next_fault(0);
  bool delaying = false, half_closed = false;
  bool open[2] = {true, true};  // reading from client, from upstream
  std::vector<char> buf(64 * 1024);
  std::unique_ptr<StreamRewriter> rewriter = options_.rewriter ? options_.rewriter() : nullptr;
  std::string rewritten;
  auto finish = [&](bool reset) {
    if (reset) {
      Reset(client);
      Reset(upstream);
    }
    std::lock_guard<std::mutex> l(mu_);
    // Closed under the lock: the destructor only shuts down fds still listed.
    open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), client), open_fds_.end());
    open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), upstream), open_fds_.end());
    ::close(client);
    ::close(upstream);
  };
  while (!stop_ && (open[0] || open[1])) {
    if (enabled_ && forwarded >= fault_at && !half_closed &&
        (options_.max_faults == 0 || faults() < options_.max_faults)) {
      const Fault f = options_.kinds.empty()
          ? static_cast<Fault>(std::uniform_int_distribution<int>(0, kFaultKinds - 1)(rng))
          : static_cast<Fault>(options_.kinds[std::uniform_int_distribution<size_t>(
                0, options_.kinds.size() - 1)(rng)]);
      ++counts_[f];
      switch (f) {
        case kReset: return finish(true);
        case kDrop: return finish(false);
        case kHalfClose:
          ::shutdown(client, SHUT_WR);
          ::shutdown(upstream, SHUT_WR);
          half_closed = true;  // what still arrives is read and dropped
          break;
        case kStall: {
          const auto until = std::chrono::steady_clock::now() + options_.stall;
          while (!stop_ && std::chrono::steady_clock::now() < until) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
          break;
        }
        case kDelay: delaying = true; break;
        case kFaultKinds: break;
      }
      fault_at = next_fault(forwarded);
    }
    // A closed direction is left out (fd -1): its POLLHUP would spin.
    pollfd fds[2] = {{open[0] ? client : -1, POLLIN, 0}, {open[1] ? upstream : -1, POLLIN, 0}};
    const int n = ::poll(fds, 2, 100);
    if (n <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (!open[i] || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const int from = i == 0 ? client : upstream, to = i == 0 ? upstream : client;
      size_t want = buf.size();
      if (enabled_ && !half_closed && fault_at > forwarded) {
        want = static_cast<size_t>(std::min<uint64_t>(want, fault_at - forwarded));
      }
      const ssize_t r = ::recv(from, buf.data(), want, 0);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        open[i] = false;
        ::shutdown(to, SHUT_WR);  // pass the FIN on
        continue;
      }
      if (half_closed) continue;
      if (delaying && enabled_) std::this_thread::sleep_for(options_.delay);
      if (i == 1 && rewriter) {
        rewritten.clear();
        rewriter->Feed(buf.data(), static_cast<size_t>(r), &rewritten);
        if (!WriteAll(to, rewritten.data(), rewritten.size())) return finish(true);
      } else if (!WriteAll(to, buf.data(), static_cast<size_t>(r))) {
        return finish(true);
      }
      forwarded += static_cast<uint64_t>(r);
    }
  }
  finish(false);
}

}  // namespace binrelay::testing
