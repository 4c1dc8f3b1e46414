#include "proxy/client_error.h"

namespace binrelay::proxy {

absl::Status ClientError(absl::StatusCode code, uint16_t mysql_code, std::string_view message,
                         std::string_view sql_state) {
  protocol::ServerError e;
  e.code = mysql_code;
  e.sql_state = std::string(sql_state);
  e.message = std::string(message);
  return protocol::ServerErrorStatus(e, code, message);
}

protocol::ServerError ClientErrorFor(const absl::Status& status, uint16_t fallback_code) {
  if (auto e = protocol::GetServerError(status)) {
    // The carried text is the client-facing one; context added for logs
    // (Annotate) stays in the log.
    return *e;
  }
  protocol::ServerError e;
  e.code = fallback_code;
  e.sql_state = "HY000";
  e.message = std::string(status.message());
  return e;
}

}  // namespace binrelay::proxy
