#include "proxy/admin_responder.h"

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "protocol/server_error.h"
#include "protocol/status_macros.h"
#include "proxy/admin_parser.h"

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

std::optional<std::string> SystemVariable(std::string_view name, const AdminContext& ctx) {
  if (auto v = ctx.handler->SystemVariable(name)) return v;
  // Variables every client may ask for even when the relay does not say.
  if (name == "version") return ctx.version;
  if (name == "version_comment") return std::string("binrelay");
  return std::nullopt;
}

Evaluated EvalFunction(const AdminExpr& e, const AdminContext& ctx);

Evaluated Eval(const AdminExpr& e, const AdminContext& ctx) {
  switch (e.kind) {
    case Kind::kString:
    case Kind::kNumber:
      return {e.value, std::nullopt};
    case Kind::kIdentifier:
      // Bare words as values: ON/OFF/DEFAULT; NULL is the SQL NULL.
      if (absl::EqualsIgnoreCase(AV(e.value), "null")) return {std::nullopt, std::nullopt};
      return {e.value, std::nullopt};
    case Kind::kUserVar: {
      auto it = ctx.user_variables->find(e.value);
      if (it == ctx.user_variables->end()) return {std::nullopt, std::nullopt};
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
  if (e.value == "unix_timestamp" && e.args.empty()) {
    return {absl::StrCat(absl::ToUnixSeconds(absl::Now())), std::nullopt};
  }
  if (e.value == "version" && e.args.empty()) return {ctx.version, std::nullopt};
  if (e.value == "database" && e.args.empty()) return {std::nullopt, std::nullopt};
  if (e.value == "binlog_gtid_pos" && e.args.size() == 2) {
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
                                            e.text, "'")));
}

AdminReply AnswerSet(const AdminStatement& s, const AdminContext& ctx) {
  // Evaluate everything first: a failing assignment leaves no partial effect.
  std::vector<Value> values;
  for (const auto& a : s.assignments) {
    Evaluated v = Eval(a.value, ctx);
    if (v.error) return *std::move(v.error);
    values.push_back(std::move(v.value));
  }
  for (size_t i = 0; i < s.assignments.size(); ++i) {
    const auto& a = s.assignments[i];
    // System variables (SET NAMES, skip_replication, ...) are accepted and
    // ignored: they change nothing a replica can observe from binrelay.
    if (!a.user_variable) continue;
    if (values[i]) {
      (*ctx.user_variables)[a.name] = *values[i];
    } else {
      ctx.user_variables->erase(a.name);
    }
  }
  return AdminReply{};
}

AdminReply AnswerSelect(const AdminStatement& s, const AdminContext& ctx) {
  AdminReply reply;
  reply.kind = AdminReply::Kind::kResultSet;
  protocol::TextRow row;
  for (const auto& item : s.items) {
    Evaluated v = Eval(item, ctx);
    if (v.error) return *std::move(v.error);
    reply.result.columns.push_back(item.text);
    row.push_back(std::move(v.value));
  }
  reply.result.rows.push_back(std::move(row));
  return reply;
}

AdminReply AnswerShowVariables(const AdminStatement& s, const AdminContext& ctx) {
  AdminReply reply;
  reply.kind = AdminReply::Kind::kResultSet;
  reply.result.columns = {"Variable_name", "Value"};
  // Replicas ask for one exact name; '_' is a LIKE wildcard that they leave
  // unescaped, so it is read literally. '%' patterns would need to enumerate
  // variables, which the handler cannot: they match nothing.
  std::string name = absl::AsciiStrToLower(absl::StrReplaceAll(AV(s.argument), {{"\\_", "_"}}));
  if (name.find('%') != std::string::npos) return reply;
  if (auto v = SystemVariable(name, ctx)) reply.result.rows.push_back({name, *v});
  return reply;
}

AdminReply FromResultSet(absl::StatusOr<ResultSet> rs) {
  if (!rs.ok()) return HandlerError(rs.status());
  AdminReply reply;
  reply.kind = AdminReply::Kind::kResultSet;
  reply.result = *std::move(rs);
  return reply;
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

AdminReply AnswerQuery(std::string_view sql, const AdminContext& ctx) {
  auto parsed = ParseAdminStatement(sql);
  if (!parsed.ok()) {
    if (absl::IsUnimplemented(parsed.status())) {
      // Quote a bounded prefix: the statement may be long and is client data.
      return AdminReply::Error(kErNotSupportedYet, "42000",
                               absl::StrCat("This version of binrelay doesn't yet support '",
                                            AV(sql.substr(0, 100)), "'"));
    }
    return AdminReply::Error(protocol::server_error::kParseError, "42000",
                             std::string(parsed.status().message()));
  }
  using K = AdminStatement::Kind;
  switch (parsed->kind) {
    case K::kSet:
      return AnswerSet(*parsed, ctx);
    case K::kSelect:
      return AnswerSelect(*parsed, ctx);
    case K::kShowVariables:
      return AnswerShowVariables(*parsed, ctx);
    case K::kShowMasterStatus:
      return FromResultSet(ctx.handler->MasterStatus());
    case K::kShowBinaryLogs:
      return FromResultSet(ctx.handler->BinaryLogs());
    case K::kShowReplicas:
      return FromResultSet(ctx.handler->Replicas());
    case K::kShowRelayStatus:
      return FromResultSet(ctx.handler->RelayStatus());
    case K::kPurgeBinaryLogsTo: {
      absl::Status st = ctx.handler->PurgeBinaryLogsTo(parsed->argument);
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

}  // namespace binrelay::proxy
