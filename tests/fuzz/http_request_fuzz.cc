// Fuzz target: one HTTP request to the [http] status server, parsed under the
// server's own limits (Beast's parser as HttpServer configures it) and
// answered from a fixed status snapshot. The first byte picks how the rest
// arrives (all at once, or 1 to 255 bytes per read): both must give the same
// answer.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "proxy/http_server.h"

namespace {

class FixedStatus : public binrelay::proxy::StatusProvider {
 public:
  binrelay::proxy::RelayStatus Snapshot() const override {
    binrelay::proxy::RelayStatus s;
    s.upstream_state = binrelay::replication::UpstreamState::kStreaming;
    s.received_file = "mysql-bin.000001";
    s.received_offset = 4;
    return s;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const FixedStatus status;
  if (size == 0) return 0;
  const size_t piece = data[0];
  std::string_view request(reinterpret_cast<const char*>(data + 1), size - 1);
  auto whole = binrelay::proxy::AnswerHttpBytes(request, status);
  if (piece == 0) return 0;
  auto pieces = binrelay::proxy::AnswerHttpBytes(request, status, piece);
  if (whole.has_value() != pieces.has_value() ||
      (whole && (whole->status != pieces->status || whole->body != pieces->body))) {
    std::abort();  // the same bytes parsed differently depending on how they arrived
  }
  return 0;
}
