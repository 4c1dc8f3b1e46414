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
#include "proxy/client_error.h"
#include "spdlog/spdlog.h"

namespace binrelay::proxy {

class DumpService : public DumpHandler {
 public:
  explicit DumpService(BinlogSenderContext context) : context_(context) {}

  absl::StatusOr<std::unique_ptr<DumpStream>> StartDump(const DumpRequest& request) override {
    // A replica dumping again replaces its older dump (kill_zombie_dump_threads).
    int ended = context_.registry->EndSameServerId(
        request.server_id,
        ClientError(absl::StatusCode::kAborted, protocol::server_error::kSlaveSameId,
                    "A slave with the same server_uuid/server_id as this slave has connected "
                    "to the master"));
    if (ended > 0) {
      spdlog::info("dump for {} (server_id {}) replaces {} older dump(s) of that server_id",
                   request.peer, request.server_id, ended);
    }
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
