#include "cli/tail_command.h"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>

#include "absl/strings/str_cat.h"
#include "apply/change_decoder.h"
#include "apply/json_line_sink.h"
#include "apply/subscription.h"
#include "cli/tail_options.h"
#include "replication/binlog_file_source.h"
#include "protocol/status_macros.h"
#include "replication/connection_sql_source.h"
#include "replication/schema_cache.h"
#include "replication/upstream_session.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace binrelay::cli {
namespace {

std::atomic<replication::UpstreamSession*> g_session{nullptr};

void OnSignal(int) {
  if (auto* s = g_session.load()) s->RequestStop();
}

absl::Status TailFiles(const TailOptions& o, apply::ChangeDecoder& decoder,
                       apply::JsonLineSink& sink) {
  for (const std::string& path : o.files) {
    absl::Status s = replication::FeedBinlogFile(path, decoder);
    if (!s.ok()) {
      // Transactions completed before the bad spot are good data: print
      // them, then report where decoding stopped.
      BR_RETURN_IF_ERROR(sink.Flush());
      return s;
    }
  }
  return sink.Flush();
}

uint32_t DefaultServerId() {
  // High range, away from the small ids DBAs hand out; preflight still
  // checks it against every replica registered on the source.
  std::random_device rd;
  return 0x40000000u + (rd() % 0x3FFFFFFFu);
}

absl::Status TailSource(const TailOptions& o, const apply::Subscription& subscription,
                        apply::JsonLineSink& sink) {
  replication::UpstreamOptions u;
  u.connect.host = o.source_host;
  u.connect.port = o.source_port;
  u.connect.user = o.user;
  u.connect.password = o.password;
  u.connect.credentials_from = "--user, and --password-file or BINRELAY_SOURCE_PASSWORD";
  u.connect.tls = o.tls == "disabled"   ? protocol::ConnectOptions::Tls::kDisabled
                  : o.tls == "required" ? protocol::ConnectOptions::Tls::kRequired
                                        : protocol::ConnectOptions::Tls::kPreferred;
  u.connect.tls_ca_file = o.tls_ca;
  if (!o.server_public_key_path.empty()) {
    std::ifstream in(o.server_public_key_path, std::ios::binary);
    u.connect.rsa.pinned_pem.assign(std::istreambuf_iterator<char>(in), {});
    if (u.connect.rsa.pinned_pem.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot read --server-public-key-path ", o.server_public_key_path));
    }
  }
  u.connect.rsa.allow_retrieval = o.get_server_public_key;
  u.server_id = o.server_id != 0 ? o.server_id : DefaultServerId();
  BR_ASSIGN_OR_RETURN(u.start, replication::ParseStartSpec(o.start));
  u.until_end = o.until_end;
  u.heartbeat_period = o.heartbeat;
  u.reconnect_timeout = o.reconnect_timeout;

  // Schema lookups use a connection of their own, never the dump stream's.
  replication::ConnectionSqlSource side_channel(u.connect);
  replication::SchemaCache schema(&side_channel);
  apply::ChangeDecoder decoder(&subscription, &schema, &sink);
  replication::UpstreamSession session(u, &decoder);
  g_session.store(&session);
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  absl::Status status = session.Run();
  g_session.store(nullptr);
  BR_RETURN_IF_ERROR(sink.Flush());
  const auto& st = decoder.stats();
  spdlog::info(
      "done: {} rows in {} transactions; rows events decoded {}, skipped {}; schema lookups {}",
      st.rows, st.transactions, st.rows_events_decoded, st.rows_events_skipped, schema.lookups());
  return status;
}

}  // namespace

int RunTail(const std::vector<std::string>& args) {
  auto logger = spdlog::stderr_color_mt("binrelay");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  auto options = ParseTailOptions(args);
  if (!options.ok()) {
    std::fprintf(stderr, "binrelay tail: %s\n\n%s", std::string(options.status().message()).c_str(),
                 kTailUsage);
    return 2;
  }
  if (options->help) {
    std::fputs(kTailUsage, stdout);
    return 0;
  }
  spdlog::set_level(spdlog::level::from_str(options->log_level));
  auto subscription = apply::Subscription::Parse(options->tables);
  if (!subscription.ok()) {
    std::fprintf(stderr, "binrelay tail: %s\n", std::string(subscription.status().message()).c_str());
    return 2;
  }
  // Following a live source: every commit is written at once. Reading to a
  // known end: batch writes for throughput.
  bool follow = options->files.empty() && !options->until_end;
  apply::JsonLineSink sink(STDOUT_FILENO, follow);
  absl::Status status;
  if (!options->files.empty()) {
    replication::SchemaCache no_schema(nullptr);
    apply::ChangeDecoder decoder(&*subscription, &no_schema, &sink);
    status = TailFiles(*options, decoder, sink);
  } else {
    status = TailSource(*options, *subscription, sink);
  }
  if (!status.ok()) {
    // One clear line; the rows already printed are complete transactions.
    spdlog::error("{}", std::string(status.message()));
    return 1;
  }
  return 0;
}

}  // namespace binrelay::cli
