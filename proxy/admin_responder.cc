#include "proxy/admin_responder.h"

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "protocol/server_error.h"
#include "protocol/statement_redaction.h"
#include "protocol/status_macros.h"
#include "proxy/forward_policy.h"

namespace binrelay::proxy {
namespace {

using Value = std::optional<std::string>;
using Kind = AdminExpr::Kind;

// A value or the error reply that evaluating it produced.
struct Evaluated {
  Value value;
  std::optional<AdminReply> error;
};

Evaluated Err(AdminReply reply) { return Evaluated{std::nullopt, std::move(reply)}; }

AdminReply HandlerError(const absl::Status& status) {
  return AdminReply::Error(kErUnknownError, "HY000", std::string(status.message()));
}

AdminReply NotSupported(std::string_view sql) {
  // Quote a bounded prefix: the statement may be long and is client data.
  return AdminReply::Error(kErNotSupportedYet, "42000",
                           absl::StrCat("This version of binrelay doesn't yet support '",
                                        protocol::RedactedStatement(sql, 100), "'"));
}

std::optional<std::string> SystemVariable(std::string_view name, const AdminContext& ctx) {
  if (auto v = ctx.handler->SystemVariable(name)) return v;
  // Variables every client may ask for even when the relay does not say.
  if (name == "version") return ctx.version;
  if (name == "version_comment") return std::string("binrelay");
  return std::nullopt;
}

std::string UserAtHost(const AdminContext& ctx) {
  return ctx.session == nullptr ? std::string()
                                : absl::StrCat(ctx.session->user, "@", ctx.session->host);
}

Evaluated EvalFunction(const AdminExpr& e, const AdminContext& ctx);

Evaluated Eval(const AdminExpr& e, const AdminContext& ctx) {
  switch (e.kind) {
    case Kind::kString:
    case Kind::kNumber:
      return {e.value, std::nullopt};
    case Kind::kIdentifier:
      // Bare words as values: ON/OFF/DEFAULT; NULL is the SQL NULL, TRUE
      // and FALSE are 1 and 0.
      if (absl::EqualsIgnoreCase(AV(e.value), "null")) return {std::nullopt, std::nullopt};
      if (absl::EqualsIgnoreCase(AV(e.value), "true")) return {std::string("1"), std::nullopt};
      if (absl::EqualsIgnoreCase(AV(e.value), "false")) return {std::string("0"), std::nullopt};
      return {e.value, std::nullopt};
    case Kind::kUserVar: {
      auto it = ctx.session->user_variables.find(e.value);
      if (it == ctx.session->user_variables.end()) return {std::nullopt, std::nullopt};
      return {it->second, std::nullopt};
    }
    case Kind::kSystemVar: {
      auto v = SystemVariable(e.value, ctx);
      if (!v) {
        return Err(AdminReply::Error(protocol::server_error::kUnknownSystemVariable, "HY000",
                                     absl::StrCat("Unknown system variable '", e.value, "'")));
      }
      return {std::move(v), std::nullopt};
    }
    case Kind::kFunction:
      return EvalFunction(e, ctx);
  }
  return Err(AdminReply::Error(kErUnknownError, "HY000", "unhandled expression kind"));
}

Evaluated EvalFunction(const AdminExpr& e, const AdminContext& ctx) {
  const std::string& f = e.value;
  if (e.args.empty()) {
    if (f == "unix_timestamp") return {absl::StrCat(absl::ToUnixSeconds(absl::Now())), std::nullopt};
    if (f == "now" || f == "current_timestamp" || f == "sysdate") {
      return {absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::Now(), absl::LocalTimeZone()),
              std::nullopt};
    }
    if (f == "utc_timestamp") {
      return {absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::Now(), absl::UTCTimeZone()),
              std::nullopt};
    }
    if (f == "version") return {ctx.version, std::nullopt};
    if (f == "database" || f == "schema") {
      if (ctx.session->database.empty()) return {std::nullopt, std::nullopt};
      return {ctx.session->database, std::nullopt};
    }
    if (f == "connection_id") return {absl::StrCat(ctx.session->connection_id), std::nullopt};
    if (f == "user" || f == "current_user" || f == "session_user" || f == "system_user") {
      return {UserAtHost(ctx), std::nullopt};
    }
  }
  if (f == "binlog_gtid_pos" && e.args.size() == 2) {
    Evaluated file = Eval(e.args[0], ctx);
    if (file.error) return file;
    Evaluated pos = Eval(e.args[1], ctx);
    if (pos.error) return pos;
    uint64_t position = 0;
    if (!file.value || !pos.value || !absl::SimpleAtoi(AV(*pos.value), &position)) {
      return {std::nullopt, std::nullopt};  // as MariaDB: bad arguments give NULL
    }
    auto v = ctx.handler->BinlogGtidPos(*file.value, position);
    if (!v.ok()) return Err(HandlerError(v.status()));
    return {*std::move(v), std::nullopt};
  }
  return Err(AdminReply::Error(kErNotSupportedYet, "42000",
                               absl::StrCat("This version of binrelay doesn't yet support '",
                                            f, "()'")));
}

AdminReply ReadOnly(std::string_view what) {
  return AdminReply::Error(
      kErOptionPreventsStatement, "HY000",
      absl::StrCat("binrelay is a read-only relay and cannot execute this statement (", AV(what),
                   "); it serves the binlog, status and metadata only"));
}

AdminReply AnswerSet(const AdminStatement& s, const AdminContext& ctx) {
  for (const auto& a : s.assignments) {
    if (!a.user_variable && a.scope == "global") {
      return ReadOnly(absl::StrCat("SET GLOBAL ", a.name, "; binrelay is configured by its "
                                   "config file"));
    }
  }
  // Evaluate everything first: a failing assignment leaves no partial effect.
  std::vector<Value> values;
  for (const auto& a : s.assignments) {
    Evaluated v = Eval(a.value, ctx);
    if (v.error) return *std::move(v.error);
    values.push_back(std::move(v.value));
  }
  SessionState& session = *ctx.session;
  // The bound applies to the state the statement leaves.
  UserVariables vars = session.user_variables;
  size_t bytes = session.user_variable_bytes;
  bool skip_replication = session.skip_replication;
  for (size_t i = 0; i < s.assignments.size(); ++i) {
    const auto& a = s.assignments[i];
    if (!a.user_variable) {
      // Session settings change nothing a client can observe from binrelay,
      // except skip_replication, which filters its dumps (MariaDB replicas
      // with replicate_events_marked_for_skip=FILTER_ON_MASTER).
      if (a.name == "skip_replication") {
        skip_replication = values[i] && (absl::EqualsIgnoreCase(*values[i], "on") ||
                                         UserVariableAsInt(*values[i]) != 0);
      }
      continue;
    }
    auto it = vars.find(a.name);
    if (it != vars.end()) {
      bytes -= it->first.size() + it->second.size();
      vars.erase(it);
    }
    if (values[i]) {
      bytes += a.name.size() + values[i]->size();
      vars.emplace(a.name, *values[i]);
    }
  }
  if (vars.size() > kMaxUserVariables || bytes > kMaxUserVariableBytes) {
    return AdminReply::Error(
        kErOutOfResources, "HY000",
        absl::StrCat("Out of memory: binrelay keeps at most ", kMaxUserVariables,
                     " user variables of ", kMaxUserVariableBytes,
                     " bytes in all per connection; this SET would leave ", vars.size(),
                     " of ", bytes, " bytes"));
  }
  session.user_variables = std::move(vars);
  session.user_variable_bytes = bytes;
  session.skip_replication = skip_replication;
  return AdminReply{};
}

// A bare word in a SELECT is a column, and binrelay has no tables: the
// error a server gives for an unknown column (MySQL 9's client probes
// "SELECT $$" and expects it to fail where $$ does not open a string).
// NULL, TRUE and FALSE are values. Nesting is bounded by the parser.
const AdminExpr* UnknownColumn(const AdminExpr& e) {
  if (e.kind == Kind::kIdentifier) {
    for (std::string_view value : {"null", "true", "false"}) {
      if (absl::EqualsIgnoreCase(AV(e.value), AV(value))) return nullptr;
    }
    return &e;
  }
  for (const AdminExpr& arg : e.args) {
    if (const AdminExpr* bad = UnknownColumn(arg)) return bad;
  }
  return nullptr;
}

AdminReply AnswerSelect(const AdminStatement& s, const AdminContext& ctx) {
  AdminReply reply;
  reply.kind = AdminReply::Kind::kResultSet;
  protocol::TextRow row;
  for (const auto& item : s.items) {
    if (const AdminExpr* bad = UnknownColumn(item)) {
      return AdminReply::Error(protocol::server_error::kBadFieldError, "42S22",
                               absl::StrCat("Unknown column '", bad->value, "' in 'field list'"));
    }
    Evaluated v = Eval(item, ctx);
    if (v.error) return *std::move(v.error);
    reply.result.columns.push_back(item.text);
    row.push_back(std::move(v.value));
  }
  reply.result.rows.push_back(std::move(row));
  return reply;
}

bool Matches(const AdminStatement& s, const std::string& name, const std::string& value) {
  if (s.has_like) return SqlLikeMatch(name, s.argument);
  if (s.where.empty()) return true;
  for (const VariablePredicate& p : s.where) {
    const std::string& subject = p.on_value ? value : name;
    for (const std::string& operand : p.operands) {
      bool hit = p.op == VariablePredicate::Op::kLike
                     ? SqlLikeMatch(subject, operand)
                     : absl::EqualsIgnoreCase(AV(subject), AV(operand));
      if (hit) return true;
    }
  }
  return false;
}

AdminReply AnswerVariables(const AdminStatement& s,
                           const std::vector<std::pair<std::string, std::string>>& vars) {
  AdminReply reply;
  reply.kind = AdminReply::Kind::kResultSet;
  reply.result.columns = {"Variable_name", "Value"};
  for (const auto& [name, value] : vars) {
    if (Matches(s, name, value)) reply.result.rows.push_back({name, value});
  }
  return reply;
}

AdminReply AnswerShowVariables(const AdminStatement& s, const AdminContext& ctx) {
  std::vector<std::pair<std::string, std::string>> vars = ctx.handler->AllSystemVariables();
  if (vars.empty() && s.has_like && s.argument.find('%') == std::string::npos) {
    // A handler that cannot enumerate answers the one name asked for
    // (replicas leave the '_' in names unescaped).
    std::string name = absl::AsciiStrToLower(absl::StrReplaceAll(s.argument, {{"\\_", "_"}}));
    if (auto v = SystemVariable(name, ctx)) vars.emplace_back(name, *v);
  }
  for (const char* name : {"version", "version_comment"}) {
    bool present = false;
    for (const auto& v : vars) present |= v.first == name;
    if (!present) {
      if (auto v = SystemVariable(name, ctx)) {
        vars.emplace_back(name, *v);
        std::sort(vars.begin(), vars.end());
      }
    }
  }
  return AnswerVariables(s, vars);
}

AdminReply FromResultSet(absl::StatusOr<ResultSet> rs) {
  if (!rs.ok()) return HandlerError(rs.status());
  AdminReply reply;
  reply.kind = AdminReply::Kind::kResultSet;
  reply.result = *std::move(rs);
  return reply;
}

AdminReply AnswerProcesslist(const AdminStatement& s, const AdminContext& ctx) {
  AdminReply reply;
  reply.kind = AdminReply::Kind::kResultSet;
  const bool mariadb = absl::StrContains(absl::AsciiStrToLower(ctx.version), "mariadb");
  reply.result.columns = {"Id", "User", "Host", "db", "Command", "Time", "State", "Info"};
  if (mariadb) reply.result.columns.push_back("Progress");
  if (ctx.connections == nullptr) return reply;
  for (const ConnectionEntry& c : ctx.connections->Connections()) {
    // Without the PROCESS privilege a server lists only the user's own
    // threads (sql/sql_show.cc, fill_schema_processlist): here, only
    // [listen] admin_user sees everyone's.
    if (!ctx.session->admin && c.user != ctx.session->user) continue;
    protocol::TextRow row = {absl::StrCat(c.id),
                             c.user.empty() ? std::string("unauthenticated user") : c.user,
                             c.host,
                             c.db.empty() ? std::nullopt : std::optional<std::string>(c.db),
                             c.command,
                             absl::StrCat(c.seconds),
                             c.state,
                             c.info.empty() ? std::nullopt
                                            : std::optional<std::string>(
                                                  s.full ? c.info : c.info.substr(0, 100))};
    if (mariadb) row.push_back(std::string("0.000"));
    reply.result.rows.push_back(std::move(row));
  }
  return reply;
}

// ER_SPECIFIC_ACCESS_DENIED_ERROR, worded as MariaDB words a missing privilege.
AdminReply AdminOnly(std::string_view what) {
  return AdminReply::Error(kErSpecificAccessDenied, "42000",
                           absl::StrCat("Access denied; you need to be [listen] admin_user for ",
                                        AV(what), " (the replication user may only dump and "
                                        "read status)"));
}

// CHANGE MASTER TO's options as binrelay takes them, or the error that
// names the option it does not and why.
absl::StatusOr<SourceChange> SourceChangeOf(const AdminStatement& s) {
  SourceChange c;
  for (size_t i = 0; i < s.assignments.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (s.assignments[i].name == s.assignments[j].name) {
        return absl::InvalidArgumentError(absl::StrCat(
            absl::AsciiStrToUpper(s.assignments[i].name), " is given twice"));
      }
    }
  }
  auto is = [](std::string_view name, std::string_view suffix) {
    return name == absl::StrCat("master_", AV(suffix)) || name == absl::StrCat("source_", AV(suffix));
  };
  for (const AdminAssignment& a : s.assignments) {
    const std::string& n = a.name;
    const std::string& v = a.value.value;
    const bool text = a.value.kind == AdminExpr::Kind::kString;
    const bool number = a.value.kind == AdminExpr::Kind::kNumber;
    auto bad_value = [&](std::string_view want) {
      return absl::InvalidArgumentError(
          absl::StrCat(absl::AsciiStrToUpper(n), " takes ", AV(want)));
    };
    if (is(n, "host")) {
      if (!text || v.empty()) return bad_value("a host name in quotes");
      c.host = v;
    } else if (is(n, "port")) {
      uint32_t port = 0;
      if (!number || !absl::SimpleAtoi(v, &port) || port == 0 || port > 65535) {
        return bad_value("a port number");
      }
      c.port = static_cast<uint16_t>(port);
    } else if (is(n, "user")) {
      if (!text || v.empty()) return bad_value("a user name in quotes");
      c.user = v;
    } else if (is(n, "password")) {
      if (!text) return bad_value("a password in quotes");
      c.password = v;
    } else if (is(n, "ssl")) {
      if (!number || (v != "0" && v != "1")) return bad_value("0 or 1");
      c.tls = v == "1";
    } else if (n == "master_use_gtid") {
      // MariaDB's values; binrelay's position is its store's either way.
      if (absl::EqualsIgnoreCase(v, "no")) {
        c.by_gtid = false;
      } else if (absl::EqualsIgnoreCase(v, "slave_pos") || absl::EqualsIgnoreCase(v, "current_pos")) {
        c.by_gtid = true;
      } else {
        return bad_value("slave_pos, current_pos or no");
      }
    } else if (is(n, "auto_position")) {
      if (!number || (v != "0" && v != "1")) return bad_value("0 or 1");
      c.by_gtid = v == "1";
    } else if (is(n, "log_file") || is(n, "log_pos") || absl::StartsWith(n, "relay_log_")) {
      return absl::UnimplementedError(absl::StrCat(
          absl::AsciiStrToUpper(n), ": binrelay resumes after its last stored transaction; "
          "another position would leave a gap or an overlap in its store"));
    } else {
      return absl::UnimplementedError(absl::StrCat(
          absl::AsciiStrToUpper(n), ": binrelay's CHANGE MASTER TO takes MASTER_HOST, "
          "MASTER_PORT, MASTER_USER, MASTER_PASSWORD, MASTER_SSL and MASTER_USE_GTID (or "
          "SOURCE_HOST ... SOURCE_AUTO_POSITION); set the others in its config file ([source])"));
    }
  }
  return c;
}

// A MariaDB connection name or MySQL channel other than the default one:
// MySQL's ER_REPLICA_CHANNEL_DOES_NOT_EXIST, for both.
AdminReply NoSuchChannel(const std::string& name) {
  return AdminReply::Error(kErReplicaChannelDoesNotExist, "HY000",
                           absl::StrCat("There is no replication channel with name '",
                                        absl::CEscape(name.substr(0, 64)),
                                        "': binrelay has one upstream, the default connection ''"));
}

AdminReply AnswerKill(const AdminStatement& s, const AdminContext& ctx) {
  if (ctx.connections == nullptr) return NotSupported("KILL");
  if (s.kill_id == ctx.session->connection_id && !s.kill_query) {
    AdminReply r = AdminReply::Error(protocol::server_error::kConnectionKilled, "70100",
                                     "Connection was killed");
    r.close_connection = true;
    return r;
  }
  if (!ctx.session->admin) {
    // As a server treats a user without the privilege: its own user's
    // connections only (a binlog client KILLs its dump connection on stop).
    for (const ConnectionEntry& c : ctx.connections->Connections()) {
      if (c.id == s.kill_id && c.user != ctx.session->user) {
        return AdminReply::Error(kErKillDenied, "HY000",
                                 absl::StrCat("You are not owner of thread ", s.kill_id,
                                              " (only [listen] admin_user may kill other "
                                              "users' connections)"));
      }
    }
  }
  absl::Status st = s.kill_id > UINT32_MAX
                        ? absl::NotFoundError("no such connection")
                        : ctx.connections->Kill(static_cast<uint32_t>(s.kill_id), s.kill_query);
  if (absl::IsNotFound(st)) {
    return AdminReply::Error(kErNoSuchThread, "HY000",
                             absl::StrCat("Unknown thread id: ", s.kill_id));
  }
  if (!st.ok()) return HandlerError(st);
  return AdminReply{};
}

}  // namespace

AdminReply AdminReply::Error(uint16_t code, std::string_view sql_state, std::string message) {
  AdminReply r;
  r.kind = Kind::kError;
  r.error_code = code;
  r.sql_state = std::string(sql_state);
  r.message = std::move(message);
  return r;
}

QueryPlan PlanQuery(std::string_view sql, const AdminContext& ctx) {
  QueryPlan plan;
  auto parsed = ParseAdminStatement(sql);
  if (parsed.ok()) {
    if (parsed->may_block) {
      plan.kind = QueryPlan::Kind::kBlocking;
      plan.statement = *std::move(parsed);
    } else {
      plan.reply = AnswerStatement(*parsed, ctx);
    }
    return plan;
  }
  // Not binrelay's own: a metadata read for the source, a write, or neither.
  ForwardDecision d = ClassifyStatement(sql, ctx.session->database);
  if (d.kind == ForwardDecision::Kind::kForward) {
    if (ctx.forwarding) {
      plan.kind = QueryPlan::Kind::kForward;
      return plan;
    }
    plan.reply = AdminReply::Error(
        kErNotSupportedYet, "42000",
        absl::StrCat("binrelay does not forward queries to its source ([listen] "
                     "forward_queries = none): '", protocol::RedactedStatement(sql, 100), "'"));
    return plan;
  }
  // A write binrelay knows (SET PASSWORD) or does not know (INSERT); a
  // broken statement of a form it answers (SET @a 1) is a syntax error.
  if (d.kind == ForwardDecision::Kind::kWrite && absl::IsUnimplemented(parsed.status())) {
    plan.reply = ReadOnly(d.keyword);
    return plan;
  }
  if (absl::IsInvalidArgument(parsed.status())) {
    plan.reply = AdminReply::Error(protocol::server_error::kParseError, "42000",
                                   std::string(parsed.status().message()));
    return plan;
  }
  plan.reply = NotSupported(sql);
  if (!d.reason.empty()) {
    plan.reply.message += absl::StrCat(": binrelay does not forward ", d.reason);
  }
  return plan;
}

AdminReply AnswerStatement(const AdminStatement& s, const AdminContext& ctx) {
  using K = AdminStatement::Kind;
  switch (s.kind) {
    case K::kSet:
      return AnswerSet(s, ctx);
    case K::kSelect:
      return AnswerSelect(s, ctx);
    case K::kShowVariables:
      return AnswerShowVariables(s, ctx);
    case K::kShowStatus:
      return AnswerVariables(s, ctx.handler->StatusVariables());
    case K::kShowMasterStatus:
      return FromResultSet(ctx.handler->MasterStatus());
    case K::kShowBinaryLogs:
      return FromResultSet(ctx.handler->BinaryLogs());
    case K::kShowReplicas:
      return FromResultSet(ctx.handler->Replicas());
    case K::kShowRelayStatus:
      return FromResultSet(ctx.handler->RelayStatus());
    case K::kShowRelayPipelines:
      return FromResultSet(ctx.handler->RelayPipelines());
    case K::kShowRelaySources:
      return FromResultSet(ctx.handler->RelaySources());
    case K::kShowRelayMoves:
      return FromResultSet(ctx.handler->RelayMoves());
    case K::kShowSlaveStatus:
      return FromResultSet(ctx.handler->SlaveStatus(s.replica_keyword, s.full));
    case K::kShowProcesslist:
      return AnswerProcesslist(s, ctx);
    case K::kShowGrants:
      return FromResultSet(ctx.handler->Grants(ctx.session->user, ctx.session->host));
    case K::kShowWarnings: {
      AdminReply r;
      r.kind = AdminReply::Kind::kResultSet;
      r.result.columns = {"Level", "Code", "Message"};
      return r;
    }
    case K::kKill:
      return AnswerKill(s, ctx);
    case K::kUse:
      ctx.session->database = s.argument;
      return AdminReply{};
    case K::kTransaction:
      return AdminReply{};
    case K::kCutoverMove: {
      if (!ctx.session->admin) return AdminOnly("CUTOVER MOVE");
      absl::Status st = ctx.handler->CutoverMove(s.argument);
      if (!st.ok()) return HandlerError(st);
      return AdminReply{};
    }
    case K::kStopUpstream:
    case K::kStartUpstream: {
      const bool start = s.kind == K::kStartUpstream;
      const std::string_view verb = start ? "START SLAVE" : "STOP SLAVE";
      if (!ctx.session->admin) return AdminOnly(verb);
      if (!s.connection.empty()) return NoSuchChannel(s.connection);
      if (s.sql_thread && !s.io_thread) {
        return AdminReply::Error(
            kErNotSupportedYet, "42000",
            absl::StrCat("binrelay has no SQL thread (it stores the stream and applies nothing "
                         "of it); ", AV(verb), " or ", AV(verb), " IO_THREAD ",
                         start ? "starts" : "stops", " its upstream"));
      }
      absl::Status st = start ? ctx.handler->StartUpstream() : ctx.handler->StopUpstream();
      if (!st.ok()) return HandlerError(st);
      return AdminReply{};
    }
    case K::kChangeSource: {
      if (!ctx.session->admin) return AdminOnly("CHANGE MASTER TO");
      if (!s.connection.empty()) return NoSuchChannel(s.connection);
      auto change = SourceChangeOf(s);
      if (absl::IsInvalidArgument(change.status())) {
        return AdminReply::Error(kErWrongArguments, "HY000",
                                 absl::StrCat("Incorrect arguments to CHANGE MASTER TO: ",
                                              change.status().message()));
      }
      if (!change.ok()) {
        return AdminReply::Error(kErNotSupportedYet, "42000", std::string(change.status().message()));
      }
      absl::Status st = ctx.handler->ChangeSource(*change);
      if (absl::IsFailedPrecondition(st)) {
        // ER_SLAVE_MUST_STOP, as the servers answer it.
        return AdminReply::Error(kErSlaveMustStop, "HY000",
                                 absl::StrCat("This operation cannot be performed with a running "
                                              "slave; run STOP SLAVE first (", st.message(), ")"));
      }
      if (!st.ok()) return HandlerError(st);
      return AdminReply{};
    }
    case K::kPurgeBinaryLogsTo: {
      if (!ctx.session->admin) return AdminOnly("PURGE BINARY LOGS");
      absl::Status st = ctx.handler->PurgeBinaryLogsTo(s.argument);
      if (absl::IsNotFound(st)) {
        return AdminReply::Error(kErUnknownTargetBinlog, "HY000",
                                 absl::StrCat("Target log not found in binlog index: ",
                                              st.message()));
      }
      if (absl::IsFailedPrecondition(st)) {
        // A file some reader still needs was kept (MySQL/MariaDB ER_LOG_IN_USE).
        return AdminReply::Error(kErLogInUse, "HY000",
                                 absl::StrCat("A purgeable log is in use, will not purge: ",
                                              st.message()));
      }
      if (!st.ok()) return HandlerError(st);
      return AdminReply{};
    }
  }
  return AdminReply::Error(kErUnknownError, "HY000", "unhandled statement kind");
}

AdminReply AnswerQuery(std::string_view sql, const AdminContext& ctx) {
  QueryPlan plan = PlanQuery(sql, ctx);
  switch (plan.kind) {
    case QueryPlan::Kind::kReply:
      return std::move(plan.reply);
    case QueryPlan::Kind::kBlocking:
      return AnswerStatement(plan.statement, ctx);
    case QueryPlan::Kind::kForward:
      break;
  }
  return AdminReply::Error(kErNotSupportedYet, "42000",
                           "this statement is forwarded to the source, which this caller cannot");
}

}  // namespace binrelay::proxy
