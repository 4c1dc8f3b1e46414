// ClientError: a Status carrying the exact error a MySQL client must get
// (code and SQLSTATE), for refusals whose code is part of the protocol
// contract: a replica stops on 1236 but reconnects on 1105, a client
// library branches on the code, never on the text. The code travels as the
// ServerError payload of protocol/server_error.h, so context added on the
// way (Annotate) keeps it.
//
// Thread safety: pure functions.
// Lifetime: results own their data.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "protocol/server_error.h"

namespace binrelay::proxy {

// `code` is the absl code for binrelay's own handling and logs.
absl::Status ClientError(absl::StatusCode code, uint16_t mysql_code, std::string_view message,
                         std::string_view sql_state = "HY000");

// The error to send for `status`: the one it carries, else `fallback_code`
// (SQLSTATE HY000) with the status message.
protocol::ServerError ClientErrorFor(const absl::Status& status, uint16_t fallback_code);

}  // namespace binrelay::proxy
