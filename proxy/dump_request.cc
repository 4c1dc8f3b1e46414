#include "proxy/dump_request.h"

#include <cmath>
#include <cstdlib>
#include <limits>

namespace binrelay::proxy {
namespace {

const std::string* Find(const UserVariables& vars, std::string_view a, std::string_view b = {}) {
  auto it = vars.find(a);
  if (it != vars.end()) return &it->second;
  if (!b.empty()) {
    it = vars.find(b);
    if (it != vars.end()) return &it->second;
  }
  return nullptr;
}

}  // namespace

int64_t UserVariableAsInt(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n')) ++i;
  size_t start = i;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  size_t digits = i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  if (i == digits) return 0;
  bool fraction = i < text.size() && text[i] == '.';
  std::string number(text.substr(start, i - start));
  if (fraction) {
    // A decimal value (SET @v = 1.5) rounds, as Item_decimal::val_int does.
    size_t end = i + 1;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    double d = std::strtod(std::string(text.substr(start, end - start)).c_str(), nullptr);
    if (d >= static_cast<double>(std::numeric_limits<int64_t>::max())) {
      return std::numeric_limits<int64_t>::max();
    }
    if (d <= static_cast<double>(std::numeric_limits<int64_t>::min())) {
      return std::numeric_limits<int64_t>::min();
    }
    return static_cast<int64_t>(std::llround(d));
  }
  long long v = std::strtoll(number.c_str(), nullptr, 10);  // saturates on overflow
  return static_cast<int64_t>(v);
}

DumpSettings ReadDumpSettings(const UserVariables& vars, bool skip_replication) {
  DumpSettings s;
  if (const std::string* v = Find(vars, "master_binlog_checksum", "source_binlog_checksum")) {
    s.checksum = *v;
  }
  if (const std::string* v = Find(vars, "mariadb_slave_capability")) {
    int64_t cap = UserVariableAsInt(*v);
    s.mariadb_capability = cap < 0 ? 0 : cap > 100 ? 100 : static_cast<int>(cap);
  }
  if (const std::string* v = Find(vars, "master_heartbeat_period", "source_heartbeat_period")) {
    int64_t ns = UserVariableAsInt(*v);
    s.heartbeat_period = std::chrono::nanoseconds(ns > 0 ? ns : 0);
  }
  if (const std::string* v = Find(vars, "slave_connect_state")) s.slave_connect_state = *v;
  if (const std::string* v = Find(vars, "slave_gtid_strict_mode")) {
    s.gtid_strict_mode = UserVariableAsInt(*v) != 0;
  }
  if (const std::string* v = Find(vars, "slave_gtid_ignore_duplicates")) {
    s.gtid_ignore_duplicates = UserVariableAsInt(*v) != 0;
  }
  if (const std::string* v = Find(vars, "slave_until_gtid")) s.until_gtid = *v;
  if (const std::string* v = Find(vars, "replica_uuid", "slave_uuid")) s.replica_uuid = *v;
  s.skip_replication = skip_replication;
  return s;
}

}  // namespace binrelay::proxy
