// Fuzz target: one HTTP request to the [http] status server, parsed under the
// server's own limits (Beast's parser as HttpServer configures it) and
// answered from a fixed status snapshot.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "proxy/http_server.h"

namespace {

class FixedStatus : public binrelay::proxy::StatusProvider {
 public:
  binrelay::proxy::RelayStatus Snapshot() const override {
    binrelay::proxy::RelayStatus s;
    s.upstream_state = "streaming";
    s.received_file = "mysql-bin.000001";
    s.received_offset = 4;
    return s;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const FixedStatus status;
  (void)binrelay::proxy::AnswerHttpBytes(
      std::string_view(reinterpret_cast<const char*>(data), size), status);
  return 0;
}
