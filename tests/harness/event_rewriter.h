// EventTypeRewriter: a StreamRewriter (fault_proxy.h) for a source's
// replication stream that gives binlog events containing `marker` another
// type code, with their CRC32 recomputed, so a live server's stream carries
// an event binrelay does not know, as a newer release's stream would.
// MySQL packets are reassembled from the byte stream (events here are far
// smaller than one 16 MiB packet); other packets pass unchanged.
//
// Thread safety: one rewriter per connection, fed by one thread; the count
// is atomic and shared.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "tests/harness/fault_proxy.h"

namespace binrelay::testing {

class EventTypeRewriter : public StreamRewriter {
 public:
  EventTypeRewriter(std::string marker, uint8_t new_type, std::atomic<int>* rewritten)
      : marker_(std::move(marker)), new_type_(new_type), rewritten_(rewritten) {}
  void Feed(const char* data, size_t n, std::string* out) override;

 private:
  void Rewrite(std::string& packet);

  std::string marker_;
  uint8_t new_type_;
  std::atomic<int>* rewritten_;
  std::string pending_;  // an incomplete packet
};

}  // namespace binrelay::testing
