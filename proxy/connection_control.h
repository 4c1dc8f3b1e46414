// ConnectionControl: what admin statements need from the listener's set of
// connections (SHOW PROCESSLIST, KILL), declared here where they are used and
// implemented by the listener.
//
// Thread safety: implementations are called from any io thread.
// Lifetime: results are copies.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace binrelay::proxy {

// One row of SHOW PROCESSLIST.
struct ConnectionEntry {
  uint32_t id = 0;
  std::string user;     // "" before authentication
  std::string host;     // host:port
  std::string db;       // "" for NULL
  std::string command;  // "Sleep", "Query", "Binlog Dump", "Connect"
  int64_t seconds = 0;  // in this command
  std::string state;
  std::string info;     // the statement being run, if any
};

class ConnectionControl {
 public:
  virtual ~ConnectionControl() = default;
  virtual std::vector<ConnectionEntry> Connections() const = 0;
  // KILL [QUERY] id: NotFound for an unknown id. `query_only`: end what the
  // connection is running (a dump), keep an idle connection.
  virtual absl::Status Kill(uint32_t id, bool query_only) = 0;
};

}  // namespace binrelay::proxy
