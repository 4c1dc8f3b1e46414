// Command-line options of `binrelay tail` and their parsing.
// Thread safety: plain values.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace binrelay::cli {

struct TailOptions {
  std::string source_host;
  uint16_t source_port = 3306;
  std::string user;
  std::string password;  // from BINRELAY_SOURCE_PASSWORD or --password-file
  std::string tables;
  std::string start = "current";
  bool until_end = false;
  std::vector<std::string> files;
  uint32_t server_id = 0;  // 0: choose one
  std::string tls = "preferred";
  std::string tls_ca;
  // caching_sha2_password without TLS (protocol/auth.h RsaKeyPolicy).
  std::string server_public_key_path;
  bool get_server_public_key = false;
  std::chrono::milliseconds heartbeat{2000};
  std::chrono::milliseconds reconnect_timeout{60000};
  std::string log_level = "info";
  bool help = false;
};

// Parses argv after "tail". The password is never accepted as an argument:
// it would show in ps and shell history.
absl::StatusOr<TailOptions> ParseTailOptions(const std::vector<std::string>& args);

extern const char* const kTailUsage;

}  // namespace binrelay::cli
