#include "apply/move_session.h"

#include <algorithm>

namespace binrelay::apply {

protocol::ConnectOptions InMoveSession(protocol::ConnectOptions options) {
  static const char kSettings[] =
      "SET SESSION time_zone = '+00:00', SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION', "
      "SESSION character_set_results = binary, SESSION foreign_key_checks = 0";
  // Idempotent: options passed through twice carry the settings once.
  if (std::find(options.session_sql.begin(), options.session_sql.end(), kSettings) ==
      options.session_sql.end()) {
    options.session_sql.emplace_back(kSettings);
  }
  return options;
}

}  // namespace binrelay::apply
