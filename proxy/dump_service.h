// DumpService: the relay's DumpHandler: every accepted dump becomes a
// BinlogSender reading the store.
//
// Thread safety: StartDump may run on any io thread concurrently.
// Lifetime: the context's store, signal and registry outlive the service and
// every stream it returned.
#pragma once

#include <memory>

#include "protocol/status_macros.h"
#include "proxy/admin_handler.h"
#include "proxy/binlog_sender.h"
#include "spdlog/spdlog.h"

namespace binrelay::proxy {

class DumpService : public DumpHandler {
 public:
  explicit DumpService(BinlogSenderContext context) : context_(context) {}

  absl::StatusOr<std::unique_ptr<DumpStream>> StartDump(const DumpRequest& request) override {
    absl::StatusOr<std::unique_ptr<BinlogSender>> sender = BinlogSender::Create(context_, request);
    if (!sender.ok()) {
      spdlog::warn("dump for {} (server_id {}) refused: {}", request.peer, request.server_id,
                   std::string(sender.status().message()));
      return sender.status();
    }
    spdlog::info("dump for {} (server_id {}) starts at {}", request.peer, request.server_id,
                 (*sender)->position().ToString());
    return std::unique_ptr<DumpStream>(std::move(*sender));
  }

 private:
  BinlogSenderContext context_;
};

}  // namespace binrelay::proxy
