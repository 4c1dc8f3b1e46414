// The one description of what status shows of an apply pipeline and of a
// move: each field's name, kind, help and value. /status (JSON), /metrics
// (Prometheus, fields with a metric name) and the admin SQL (SHOW RELAY
// PIPELINES, SHOW RELAY MOVES) are all rendered from it, so a field added
// here appears in each, and none can be forgotten in one of them.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "proxy/relay_status.h"

namespace binrelay::proxy {

using StatusValue = std::variant<std::string, uint64_t, double>;

template <class T>
struct StatusField {
  const char* name;    // JSON key and SQL column
  const char* metric;  // Prometheus name (labelled by pipeline or move); null: none
  bool counter;        // a Prometheus counter (else a gauge)
  const char* help;
  StatusValue (*value)(const T&);
};

const std::vector<StatusField<ApplyStatus>>& ApplyStatusFields();
const std::vector<StatusField<MoveProgress>>& MoveProgressFields();

// A value as SQL and JSON print numbers ("%.3f" for reals).
std::string StatusValueText(const StatusValue& v);

}  // namespace binrelay::proxy
