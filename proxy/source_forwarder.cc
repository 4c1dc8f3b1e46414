#include "proxy/source_forwarder.h"

#include <tuple>

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/capabilities.h"
#include "protocol/server_error.h"
#include "protocol/status_macros.h"
#include "spdlog/spdlog.h"

namespace binrelay::proxy {
namespace {

constexpr uint16_t kErUnknownStmtHandler = 1243;

bool IsErr(std::string_view p) { return !p.empty() && static_cast<uint8_t>(p[0]) == 0xFF; }
bool IsEof(std::string_view p) { return !p.empty() && static_cast<uint8_t>(p[0]) == 0xFE && p.size() < 9; }
bool IsOk(std::string_view p) { return !p.empty() && static_cast<uint8_t>(p[0]) == 0x00; }

// SERVER_MORE_RESULTS_EXISTS in an OK or EOF packet: another result follows.
bool MoreResults(std::string_view p) {
  protocol::ByteCursor c(p);
  c.Skip(1);
  uint16_t status = 0;
  if (IsEof(p)) {
    c.Skip(2);  // warnings
    status = c.U16();
  } else {
    c.Lenenc();  // affected rows
    c.Lenenc();  // last insert id
    status = c.U16();
  }
  return c.ok() && (status & protocol::server_status::kMoreResultsExist) != 0;
}

uint16_t ErrCode(std::string_view p) {
  return p.size() >= 3 ? static_cast<uint16_t>(static_cast<uint8_t>(p[1]) |
                                               (static_cast<uint8_t>(p[2]) << 8))
                       : 0;
}

std::string QuoteIdentifier(std::string_view s) {
  std::string out = "`";
  for (char c : s) {
    if (c == '`') out.push_back('`');
    out.push_back(c);
  }
  out.push_back('`');
  return out;
}

}  // namespace

SourceForwarder::SourceForwarder(SourceForwarderOptions options) : options_(std::move(options)) {}

SourceForwarder::~SourceForwarder() {
  absl::MutexLock l(&mu_);
  for (auto& side : idle_) side->conn->Quit();
}

absl::StatusOr<std::unique_ptr<SourceForwarder::Side>> SourceForwarder::Connect() {
  protocol::ConnectOptions o = options_.connect;
  if (options_.source_address) std::tie(o.host, o.port) = options_.source_address();
  o.io_timeout = options_.statement_timeout + std::chrono::seconds(2);
  BR_ASSIGN_OR_RETURN(std::unique_ptr<protocol::ClientConnection> conn,
                      protocol::ClientConnection::Connect(o));
  // Whatever a client sends is a bounded read on the source.
  const double seconds = static_cast<double>(options_.statement_timeout.count()) / 1000.0;
  BR_RETURN_IF_ERROR(conn->Query("SET SESSION TRANSACTION READ ONLY").status());
  if (conn->server_info().is_mariadb) {
    BR_RETURN_IF_ERROR(
        conn->Query(absl::StrCat("SET SESSION max_statement_time = ", seconds)).status());
  } else {
    BR_RETURN_IF_ERROR(conn->Query(absl::StrCat("SET SESSION max_execution_time = ",
                                                options_.statement_timeout.count()))
                           .status());
  }
  auto side = std::make_unique<Side>();
  side->conn = std::move(conn);
  side->address = {o.host, o.port};
  side->collation = protocol::kDefaultCollation;
  return side;
}

absl::StatusOr<std::pair<std::string, std::string>> SourceForwarder::CollationName(Side& side,
                                                                                  uint8_t id) {
  {
    absl::MutexLock l(&mu_);
    auto it = collations_.find(id);
    if (it != collations_.end()) return it->second;
  }
  BR_ASSIGN_OR_RETURN(protocol::QueryResult r,
                      side.conn->Query(absl::StrCat("SELECT CHARACTER_SET_NAME, COLLATION_NAME "
                                                    "FROM information_schema.COLLATIONS WHERE ID = ",
                                                    id)));
  if (r.rows.empty() || r.rows[0].size() < 2 || !r.rows[0][0] || !r.rows[0][1]) {
    return absl::NotFoundError(absl::StrCat("the source knows no collation ", id));
  }
  std::pair<std::string, std::string> names{*r.rows[0][0], *r.rows[0][1]};
  absl::MutexLock l(&mu_);
  collations_[id] = names;
  return names;
}

absl::Status SourceForwarder::Adopt(Side& side, const ForwardSession& session) {
  if (session.database != side.database) {
    std::string cmd(1, static_cast<char>(protocol::command::kInitDb));
    cmd += session.database;
    BR_RETURN_IF_ERROR(side.conn->WriteCommand(cmd));
    BR_ASSIGN_OR_RETURN(std::string_view reply,
                        side.conn->ReadPacket(options_.statement_timeout));
    // The source's own error (an unknown database) is the client's answer.
    if (IsErr(reply)) return protocol::ErrPacketToStatus(reply, side.conn->peer());
    side.database = session.database;
  }
  if (session.collation != 0 && session.collation != side.collation) {
    auto names = CollationName(side, session.collation);
    if (names.ok()) {
      BR_RETURN_IF_ERROR(side.conn
                             ->Query(absl::StrCat("SET NAMES ", QuoteIdentifier(names->first),
                                                  " COLLATE ", QuoteIdentifier(names->second)))
                             .status());
      side.collation = session.collation;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SourceForwarder::Side>> SourceForwarder::Acquire(
    const ForwardSession& session) {
  std::unique_ptr<Side> side;
  {
    absl::MutexLock l(&mu_);
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !idle_.empty() || open_ < options_.connections;
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&ready),
                              absl::FromChrono(options_.statement_timeout))) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "all ", options_.connections, " forwarding connections to the source are busy"));
    }
    // Prefer a connection already in the client's database.
    for (size_t i = 0; i < idle_.size(); ++i) {
      if (idle_[i]->database == session.database) {
        side = std::move(idle_[i]);
        idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
    if (!side && !idle_.empty()) {
      side = std::move(idle_.back());
      idle_.pop_back();
    }
    if (!side) ++open_;
  }
  // No database can be "unselected": a connection in one goes back, and a
  // fresh one serves a client without a database. One to a server the
  // upstream no longer follows is closed.
  if (side && ((session.database.empty() && !side->database.empty()) ||
               (options_.source_address && side->address != options_.source_address()))) {
    side->conn->Quit();
    side.reset();
  }
  if (!side) {
    auto fresh = Connect();
    if (!fresh.ok()) {
      absl::MutexLock l(&mu_);
      --open_;
      return fresh.status();
    }
    side = *std::move(fresh);
  }
  absl::Status adopted = Adopt(*side, session);
  if (!adopted.ok()) {
    // A source error (unknown database) leaves the connection usable.
    Release(std::move(side), protocol::GetServerError(adopted).has_value());
    return adopted;
  }
  return side;
}

void SourceForwarder::Release(std::unique_ptr<Side> side, bool healthy) {
  if (!healthy) side->conn->Quit();
  absl::MutexLock l(&mu_);
  if (healthy) {
    idle_.push_back(std::move(side));
  } else {
    --open_;
  }
}

absl::StatusOr<PacketList> SourceForwarder::ReadResponse(Side& side, bool prepare) {
  PacketList out;
  size_t bytes = 0;
  auto next = [&]() -> absl::StatusOr<std::string_view> {
    BR_ASSIGN_OR_RETURN(std::string_view p, side.conn->ReadPacket(options_.statement_timeout +
                                                                 std::chrono::seconds(1)));
    bytes += p.size();
    if (bytes > options_.max_result_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the source's answer exceeds ", options_.max_result_bytes,
          " bytes, more than binrelay forwards (add a LIMIT or a narrower WHERE)"));
    }
    out.emplace_back(p);
    return p;
  };
  while (true) {
    BR_ASSIGN_OR_RETURN(std::string_view first, next());
    if (IsErr(first)) return out;
    if (prepare && IsOk(first)) {
      protocol::ByteCursor c(first);
      c.Skip(5);
      const uint16_t columns = c.U16();
      const uint16_t params = c.U16();
      if (!c.ok()) return absl::DataLossError("truncated COM_STMT_PREPARE answer from the source");
      for (int block : {static_cast<int>(params), static_cast<int>(columns)}) {
        if (block == 0) continue;
        for (int i = 0; i < block; ++i) BR_RETURN_IF_ERROR(next().status());
        BR_ASSIGN_OR_RETURN(std::string_view eof, next());
        if (!IsEof(eof)) return absl::DataLossError("no EOF after definitions from the source");
      }
      return out;
    }
    if (IsOk(first)) {
      if (!MoreResults(first)) return out;
      continue;
    }
    if (static_cast<uint8_t>(first[0]) == 0xFB) {
      return absl::FailedPreconditionError("the source asked for a local file (LOAD DATA LOCAL)");
    }
    protocol::ByteCursor c(first);
    const uint64_t columns = c.Lenenc();
    if (!c.ok()) return absl::DataLossError("malformed result set header from the source");
    for (uint64_t i = 0; i < columns; ++i) BR_RETURN_IF_ERROR(next().status());
    BR_ASSIGN_OR_RETURN(std::string_view eof, next());
    if (!IsEof(eof)) return absl::DataLossError("no EOF after column definitions from the source");
    while (true) {
      BR_ASSIGN_OR_RETURN(std::string_view row, next());
      if (IsErr(row)) return out;
      if (IsEof(row)) {
        if (!MoreResults(row)) return out;
        break;
      }
    }
  }
}

absl::StatusOr<PacketList> SourceForwarder::Roundtrip(Side& side, std::string_view command,
                                                      bool prepare) {
  BR_RETURN_IF_ERROR(side.conn->WriteCommand(command));
  return ReadResponse(side, prepare);
}

absl::StatusOr<SourceForwarder::SourceStatement> SourceForwarder::PrepareOn(Side& side,
                                                                            std::string_view sql) {
  std::string cmd(1, static_cast<char>(protocol::command::kStmtPrepare));
  cmd += sql;
  BR_ASSIGN_OR_RETURN(PacketList r, Roundtrip(side, cmd, true));
  if (r.empty() || !IsOk(r[0])) {
    return absl::FailedPreconditionError(r.empty() ? std::string("no answer") : r[0]);
  }
  protocol::ByteCursor c(r[0]);
  c.Skip(1);
  SourceStatement st;
  st.id = c.U32();
  c.Skip(2);
  st.params = c.U16();
  if (side.statements.size() >= options_.max_statements_per_connection) {
    auto victim = side.statements.begin();
    std::string close(1, static_cast<char>(protocol::command::kStmtClose));
    protocol::AppendFixed(&close, victim->second.id, 4);
    BR_RETURN_IF_ERROR(side.conn->WriteCommand(close));  // no answer
    side.statements.erase(victim);
  }
  side.statements[std::string(sql)] = st;
  return st;
}

absl::StatusOr<PacketList> SourceForwarder::Query(const ForwardSession& session,
                                                  std::string_view sql) {
  BR_ASSIGN_OR_RETURN(std::unique_ptr<Side> side, Acquire(session));
  std::string cmd(1, static_cast<char>(protocol::command::kQuery));
  cmd += sql;
  auto r = Roundtrip(*side, cmd, false);
  Release(std::move(side), r.ok());
  return r;
}

absl::StatusOr<PacketList> SourceForwarder::Prepare(const ForwardSession& session,
                                                    std::string_view sql) {
  BR_ASSIGN_OR_RETURN(std::unique_ptr<Side> side, Acquire(session));
  std::string cmd(1, static_cast<char>(protocol::command::kStmtPrepare));
  cmd += sql;
  auto r = Roundtrip(*side, cmd, true);
  if (r.ok() && !r->empty() && IsOk((*r)[0])) {
    // The client will execute it: keep it prepared on this connection.
    protocol::ByteCursor c((*r)[0]);
    c.Skip(1);
    SourceStatement st;
    st.id = c.U32();
    c.Skip(2);
    st.params = c.U16();
    auto old = side->statements.find(std::string(sql));
    if (old == side->statements.end() &&
        side->statements.size() < options_.max_statements_per_connection) {
      side->statements[std::string(sql)] = st;
    } else {
      std::string close(1, static_cast<char>(protocol::command::kStmtClose));
      protocol::AppendFixed(&close, st.id, 4);
      absl::Status w = side->conn->WriteCommand(close);
      if (!w.ok()) r = w;
    }
  }
  Release(std::move(side), r.ok());
  return r;
}

absl::StatusOr<PacketList> SourceForwarder::Execute(const ForwardSession& session,
                                                    std::string_view sql,
                                                    std::string_view execute_tail) {
  BR_ASSIGN_OR_RETURN(std::unique_ptr<Side> side, Acquire(session));
  absl::StatusOr<PacketList> r;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto it = side->statements.find(std::string(sql));
    SourceStatement st;
    if (it != side->statements.end()) {
      st = it->second;
    } else {
      auto prepared = PrepareOn(*side, sql);
      if (!prepared.ok()) {
        // The source refused to prepare it (now): its ERR is the answer.
        if (absl::IsFailedPrecondition(prepared.status())) {
          r = PacketList{std::string(prepared.status().message())};
        } else {
          r = prepared.status();
        }
        break;
      }
      st = *prepared;
    }
    std::string cmd(1, static_cast<char>(protocol::command::kStmtExecute));
    protocol::AppendFixed(&cmd, st.id, 4);
    cmd += execute_tail;
    r = Roundtrip(*side, cmd, false);
    // A statement the source forgot (it restarted under this connection's
    // name): prepare it again, once.
    if (r.ok() && r->size() == 1 && IsErr((*r)[0]) && ErrCode((*r)[0]) == kErUnknownStmtHandler) {
      side->statements.erase(std::string(sql));
      continue;
    }
    break;
  }
  Release(std::move(side), r.ok());
  return r;
}

}  // namespace binrelay::proxy
