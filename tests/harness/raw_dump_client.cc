#include "tests/harness/raw_dump_client.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "protocol/checksum.h"
#include "protocol/event_header.h"
#include "protocol/status_macros.h"

namespace binrelay::testing {
namespace {

std::string EventName(std::string_view ev) {
  auto h = protocol::ParseEventHeader(ev);
  if (!h.ok()) return absl::StrCat("<", ev.size(), " bytes, no header>");
  return absl::StrCat("type ", static_cast<int>(h->type), " size ", h->event_size, " log_pos ",
                      h->log_pos, " flags 0x", absl::Hex(h->flags));
}

bool ArtificialOrHeartbeat(std::string_view ev) {
  auto h = protocol::ParseEventHeader(ev);
  return h.ok() && (h->artificial() || h->type == 27 || h->type == 41);
}

std::string ErrText(const std::optional<protocol::ServerError>& e) {
  if (!e) return "none";
  return absl::StrCat(e->code, " (", e->sql_state, ") ", e->message);
}

}  // namespace

std::string DumpCapture::Describe() const {
  std::string end = eof ? "EOF" : error ? absl::StrCat("ERR ", ErrText(error))
                                : closed ? "closed" : timed_out ? "timeout" : "?";
  if (setup_error) end = absl::StrCat("setup failed: ", ErrText(setup_error));
  return absl::StrCat(events.size(), " events, then ", end);
}

absl::StatusOr<DumpCapture> CaptureDump(const protocol::ConnectOptions& server,
                                        const DumpScenario& scenario) {
  BR_ASSIGN_OR_RETURN(std::unique_ptr<protocol::ClientConnection> conn,
                      protocol::ClientConnection::Connect(server));
  DumpCapture out;
  for (const std::string& sql : scenario.setup_sql) {
    auto r = conn->Query(sql);
    if (!r.ok()) {
      out.setup_error = protocol::GetServerError(r.status());
      if (!out.setup_error) return Annotate(r.status(), sql);
      return out;
    }
  }
  BR_RETURN_IF_ERROR(conn->WriteCommand(scenario.command));
  conn->set_check_sequence(false);
  const auto deadline = std::chrono::steady_clock::now() + scenario.timeout;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      out.timed_out = true;
      return out;
    }
    auto p = conn->ReadPacket(left);
    if (!p.ok()) {
      if (absl::IsDeadlineExceeded(p.status())) {
        out.timed_out = true;
      } else {
        out.closed = true;
      }
      return out;
    }
    std::string_view payload = *p;
    if (payload.empty()) {
      out.closed = true;
      return out;
    }
    const uint8_t first = static_cast<uint8_t>(payload[0]);
    if (first == 0x00) {
      out.events.emplace_back(payload.substr(1));
    } else if (first == 0xFF) {
      BR_ASSIGN_OR_RETURN(protocol::ServerError e, protocol::ParseErrPacket(payload));
      out.error = e;
      return out;
    } else if (first == 0xFE && payload.size() < 9) {
      out.eof = true;
      return out;
    } else {
      return absl::DataLossError(absl::StrCat("unexpected packet 0x", absl::Hex(first),
                                              " in the dump of ", scenario.name));
    }
  }
}

std::string CompareDumps(const DumpCapture& source, const DumpCapture& relay,
                         bool compare_error_messages) {
  if (source.setup_error.has_value() != relay.setup_error.has_value() ||
      (source.setup_error && source.setup_error->code != relay.setup_error->code)) {
    return absl::StrCat("setup: source ", source.Describe(), ", relay ", relay.Describe());
  }
  const size_t n = std::min(source.events.size(), relay.events.size());
  for (size_t i = 0; i < n; ++i) {
    const std::string& a = source.events[i];
    const std::string& b = relay.events[i];
    if (a == b) continue;
    const bool lenient = ArtificialOrHeartbeat(a) && ArtificialOrHeartbeat(b) && a.size() == b.size();
    if (lenient) {
      // Timestamp (0-3), server_id (5-8) and, with them, the CRC may differ.
      std::string x = a, y = b;
      for (std::string* e : {&x, &y}) {
        for (size_t k : {0, 1, 2, 3, 5, 6, 7, 8}) (*e)[k] = 0;
      }
      if (x == y) continue;
      // Both carry a CRC32 of their own bytes: the rest must be equal.
      if (protocol::EventCrcMatches(a) && protocol::EventCrcMatches(b) &&
          x.substr(0, x.size() - 4) == y.substr(0, y.size() - 4)) {
        continue;
      }
    }
    size_t at = 0;
    while (at < std::min(a.size(), b.size()) && a[at] == b[at]) ++at;
    return absl::StrCat("event ", i, " differs at byte ", at, ": source ", EventName(a),
                        ", relay ", EventName(b), "\n  source: ",
                        absl::BytesToHexString(a.substr(0, 96)), "\n  relay:  ",
                        absl::BytesToHexString(b.substr(0, 96)));
  }
  if (source.events.size() != relay.events.size()) {
    const std::vector<std::string>& longer =
        source.events.size() > relay.events.size() ? source.events : relay.events;
    return absl::StrCat("source sent ", source.events.size(), " events, relay ",
                        relay.events.size(), "; the first extra one: ", EventName(longer[n]),
                        " (source: ", source.Describe(), "; relay: ", relay.Describe(), ")");
  }
  if (source.eof != relay.eof || source.closed != relay.closed ||
      source.timed_out != relay.timed_out || source.error.has_value() != relay.error.has_value()) {
    return absl::StrCat("the streams end differently: source ", source.Describe(), "; relay ",
                        relay.Describe());
  }
  if (source.error && source.error->code != relay.error->code) {
    return absl::StrCat("different errors: source ", ErrText(source.error), "; relay ",
                        ErrText(relay.error));
  }
  if (compare_error_messages && source.error &&
      relay.error->message.rfind(source.error->message.substr(0, 40), 0) != 0) {
    return absl::StrCat("error texts differ: source ", ErrText(source.error), "; relay ",
                        ErrText(relay.error));
  }
  return "";
}

}  // namespace binrelay::testing
