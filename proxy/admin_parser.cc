#include "proxy/admin_parser.h"

#include <algorithm>
#include <initializer_list>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "protocol/statement_redaction.h"
#include "protocol/status_macros.h"
#include "proxy/sql_tokens.h"

namespace binrelay::proxy {
namespace {

using Kind = SqlToken::Kind;

class Parser {
 public:
  Parser(std::string_view sql, std::vector<SqlToken> tokens) : sql_(sql), t_(std::move(tokens)) {}

  absl::StatusOr<AdminStatement> Statement();

 private:
  const SqlToken& Peek(size_t ahead = 0) const {
    return t_[std::min(pos_ + ahead, t_.size() - 1)];
  }
  bool AtEnd() const { return Peek().kind == Kind::kEnd; }
  bool IsWord(std::string_view w, size_t ahead = 0) const { return IsKeyword(sql_, Peek(ahead), w); }
  bool IsSym(char s, size_t ahead = 0) const { return IsSymbol(sql_, Peek(ahead), s); }
  bool IsAssign() const {
    const SqlToken& t = Peek();
    return IsSymbol(sql_, t, '=') || (t.kind == Kind::kSymbol && TokenText(sql_, t) == ":=");
  }
  bool AcceptWord(std::string_view w) {
    if (!IsWord(w)) return false;
    ++pos_;
    return true;
  }
  bool AcceptSymbol(char s) {
    if (!IsSym(s)) return false;
    ++pos_;
    return true;
  }
  bool AcceptWords(std::initializer_list<std::string_view> words) {
    size_t i = 0;
    for (std::string_view w : words) {
      if (!IsWord(w, i++)) return false;
    }
    pos_ += words.size();
    return true;
  }
  absl::Status Error(std::string_view what) const {
    // The fragment could be part of a password: not quoted from such statements.
    const std::string_view near = protocol::NamesCredential(sql_) ? std::string_view("<secret>")
                                                        : sql_.substr(Peek().begin, 20);
    return absl::InvalidArgumentError(absl::StrCat("syntax error at byte ", Peek().begin,
                                                   " near '", AV(near), "': expected ", AV(what)));
  }
  absl::Status ExpectEnd() const { return AtEnd() ? absl::OkStatus() : Error("end of statement"); }

  absl::StatusOr<std::string> Name();
  absl::StatusOr<AdminExpr> Expr(int depth);
  absl::StatusOr<AdminStatement> Set();
  absl::StatusOr<AdminStatement> Select();
  absl::StatusOr<AdminStatement> Show();
  absl::Status VariableFilter(AdminStatement* s);
  absl::StatusOr<AdminStatement> Kill();
  absl::StatusOr<AdminStatement> Purge();
  // After STOP/START SLAVE|REPLICA.
  absl::StatusOr<AdminStatement> UpstreamControl(bool start);
  // After CHANGE MASTER / CHANGE REPLICATION SOURCE.
  absl::StatusOr<AdminStatement> ChangeSource();
  // MySQL names a channel at the end (FOR CHANNEL 'name'), then the end.
  absl::Status ChannelAndEnd(AdminStatement* s) {
    if (AcceptWords({"for", "channel"})) {
      if (Peek().kind != Kind::kQuoted && Peek().kind != Kind::kWord) {
        return Error("a channel name");
      }
      s->connection = TokenValue(sql_, Peek());
      ++pos_;
    }
    return ExpectEnd();
  }
  // A statement of one name argument (USE db, CUTOVER MOVE name).
  absl::StatusOr<AdminStatement> NamedStatement(AdminStatement::Kind kind, const char* what);
  absl::Status SystemVariable(std::string* scope, std::string* name);

  std::string_view sql_;
  std::vector<SqlToken> t_;
  size_t pos_ = 0;
  bool may_block_ = false;
};

absl::StatusOr<std::string> Parser::Name() {
  const SqlToken& t = Peek();
  if (t.kind != Kind::kWord && t.kind != Kind::kQuoted) return Error("a name");
  ++pos_;
  return absl::AsciiStrToLower(TokenValue(sql_, t));
}

absl::Status Parser::SystemVariable(std::string* scope, std::string* name) {
  for (std::string_view s : {"global", "session", "local"}) {
    if (IsWord(s) && IsSym('.', 1)) {
      *scope = s == "local" ? "session" : std::string(s);
      pos_ += 2;
      break;
    }
  }
  BR_ASSIGN_OR_RETURN(*name, Name());
  return absl::OkStatus();
}

absl::StatusOr<AdminExpr> Parser::Expr(int depth) {
  if (depth > kMaxExprDepth) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expression at byte ", Peek().begin, " nested more than ", kMaxExprDepth,
        " levels deep"));
  }
  AdminExpr e;
  const SqlToken& t = Peek();
  if (t.kind == Kind::kQuoted) {
    e.kind = AdminExpr::Kind::kString;
    e.value = TokenValue(sql_, t);
    ++pos_;
  } else if (t.kind == Kind::kNumber || (IsSym('-') && Peek(1).kind == Kind::kNumber)) {
    e.kind = AdminExpr::Kind::kNumber;
    if (AcceptSymbol('-')) e.value = "-";
    e.value += TokenText(sql_, Peek());
    ++pos_;
  } else if (t.kind == Kind::kAt) {
    ++pos_;
    e.kind = AdminExpr::Kind::kUserVar;
    BR_ASSIGN_OR_RETURN(e.value, Name());
  } else if (t.kind == Kind::kAtAt) {
    ++pos_;
    e.kind = AdminExpr::Kind::kSystemVar;
    BR_RETURN_IF_ERROR(SystemVariable(&e.scope, &e.value));
  } else if (t.kind == Kind::kWord) {
    ++pos_;
    if (AcceptSymbol('(')) {
      e.kind = AdminExpr::Kind::kFunction;
      e.value = absl::AsciiStrToLower(TokenValue(sql_, t));
      if (e.value == "binlog_gtid_pos") may_block_ = true;  // scans a stored file
      if (!AcceptSymbol(')')) {
        do {
          BR_ASSIGN_OR_RETURN(AdminExpr arg, Expr(depth + 1));
          e.args.push_back(std::move(arg));
        } while (AcceptSymbol(','));
        if (!AcceptSymbol(')')) return Error("')'");
      }
    } else {
      e.kind = AdminExpr::Kind::kIdentifier;
      e.value = TokenValue(sql_, t);
    }
  } else {
    // Not one of the expression forms replicas use (e.g. '*', a subquery):
    // unsupported rather than a syntax error.
    return absl::UnimplementedError(
        absl::StrCat("expression at byte ", t.begin, " of a SELECT or SET"));
  }
  return e;
}

absl::StatusOr<AdminStatement> Parser::Set() {
  AdminStatement s;
  s.kind = AdminStatement::Kind::kSet;
  do {
    AdminAssignment a;
    if (AcceptWord("names")) {
      // SET NAMES cs [COLLATE c]: connection charset; recorded, not acted on.
      a.name = "names";
      BR_ASSIGN_OR_RETURN(a.value, Expr(0));
      if (AcceptWord("collate")) BR_RETURN_IF_ERROR(Expr(0).status());
      s.assignments.push_back(std::move(a));
      continue;
    }
    if (Peek().kind == Kind::kAt) {
      ++pos_;
      a.user_variable = true;
      BR_ASSIGN_OR_RETURN(a.name, Name());
    } else if (Peek().kind == Kind::kAtAt) {
      ++pos_;
      BR_RETURN_IF_ERROR(SystemVariable(&a.scope, &a.name));
    } else {
      if (AcceptWord("global")) {
        a.scope = "global";
      } else if (AcceptWord("session") || AcceptWord("local")) {
        a.scope = "session";
      }
      // SET [SESSION] TRANSACTION ...: nothing to do on a relay that writes
      // nothing (clients set isolation levels at connect).
      if (IsWord("transaction") && s.assignments.empty()) {
        AdminStatement t;
        t.kind = AdminStatement::Kind::kTransaction;
        return t;
      }
      // SET PASSWORD / SET ROLE / SET DEFAULT ROLE / SET STATEMENT are other
      // statements.
      if (IsWord("password") || IsWord("role") || IsWord("default") || IsWord("statement")) {
        return absl::UnimplementedError("this SET statement");
      }
      BR_ASSIGN_OR_RETURN(a.name, Name());
    }
    if (!IsAssign()) return Error("'=' or ':='");
    ++pos_;
    BR_ASSIGN_OR_RETURN(a.value, Expr(0));
    s.assignments.push_back(std::move(a));
  } while (AcceptSymbol(','));
  BR_RETURN_IF_ERROR(ExpectEnd());
  return s;
}

absl::StatusOr<AdminStatement> Parser::Select() {
  AdminStatement s;
  s.kind = AdminStatement::Kind::kSelect;
  do {
    const size_t first = pos_;
    BR_ASSIGN_OR_RETURN(AdminExpr e, Expr(0));
    // The column name: the expression as written (one copy per item).
    e.text = std::string(sql_.substr(t_[first].begin, t_[pos_ - 1].end - t_[first].begin));
    bool as = AcceptWord("as");
    if (as || (Peek().kind == Kind::kWord && !IsWord("from") && !IsWord("limit")) ||
        Peek().kind == Kind::kQuoted) {
      if (Peek().kind != Kind::kWord && Peek().kind != Kind::kQuoted) {
        return Error("an alias");
      }
      e.text = TokenValue(sql_, Peek());
      ++pos_;
    }
    s.items.push_back(std::move(e));
  } while (AcceptSymbol(','));
  if (AcceptWord("from") && !AcceptWord("dual")) {
    return absl::UnimplementedError("SELECT ... FROM a table");
  }
  if (AcceptWord("limit")) {
    if (Peek().kind != Kind::kNumber) return Error("a LIMIT count");
    ++pos_;
  }
  BR_RETURN_IF_ERROR(ExpectEnd());
  s.may_block = may_block_;
  return s;
}

absl::Status Parser::VariableFilter(AdminStatement* s) {
  if (AcceptWord("like")) {
    if (Peek().kind != Kind::kQuoted) return Error("a quoted LIKE pattern");
    s->has_like = true;
    s->argument = TokenValue(sql_, Peek());
    ++pos_;
    return absl::OkStatus();
  }
  if (!AcceptWord("where")) return absl::OkStatus();
  do {
    VariablePredicate p;
    if (AcceptWord("value")) {
      p.on_value = true;
    } else if (!AcceptWord("variable_name")) {
      return absl::UnimplementedError("SHOW VARIABLES WHERE on other than Variable_name/Value");
    }
    if (AcceptSymbol('=')) {
      p.op = VariablePredicate::Op::kEquals;
    } else if (AcceptWord("like")) {
      p.op = VariablePredicate::Op::kLike;
    } else if (AcceptWord("in")) {
      p.op = VariablePredicate::Op::kIn;
      if (!AcceptSymbol('(')) return Error("'('");
      do {
        if (Peek().kind != Kind::kQuoted) return Error("a quoted name");
        p.operands.push_back(TokenValue(sql_, Peek()));
        ++pos_;
      } while (AcceptSymbol(','));
      if (!AcceptSymbol(')')) return Error("')'");
      s->where.push_back(std::move(p));
      continue;
    } else {
      return Error("'=', LIKE or IN");
    }
    if (Peek().kind != Kind::kQuoted) return Error("a quoted value");
    p.operands.push_back(TokenValue(sql_, Peek()));
    ++pos_;
    s->where.push_back(std::move(p));
  } while (AcceptWord("or"));
  return absl::OkStatus();
}

absl::StatusOr<AdminStatement> Parser::Show() {
  AdminStatement s;
  using K = AdminStatement::Kind;
  const bool global = IsWord("global");
  if (AcceptWord("global") || AcceptWord("session") || AcceptWord("local")) {
    s.global_scope = global;
    if (AcceptWord("variables")) {
      s.kind = K::kShowVariables;
    } else if (AcceptWord("status")) {
      s.kind = K::kShowStatus;
    } else {
      return absl::UnimplementedError("SHOW GLOBAL/SESSION other than VARIABLES and STATUS");
    }
    BR_RETURN_IF_ERROR(VariableFilter(&s));
  } else if (AcceptWord("variables")) {
    s.kind = K::kShowVariables;
    BR_RETURN_IF_ERROR(VariableFilter(&s));
  } else if (AcceptWord("status")) {
    s.kind = K::kShowStatus;
    BR_RETURN_IF_ERROR(VariableFilter(&s));
  } else if (AcceptWords({"master", "status"}) || AcceptWords({"binary", "log", "status"})) {
    s.kind = K::kShowMasterStatus;
  } else if (AcceptWords({"binary", "logs"}) || AcceptWords({"master", "logs"})) {
    s.kind = K::kShowBinaryLogs;
  } else if (AcceptWords({"slave", "hosts"}) || AcceptWord("replicas")) {
    s.kind = K::kShowReplicas;
  } else if (AcceptWords({"relay", "status"})) {
    s.kind = K::kShowRelayStatus;
  } else if (AcceptWords({"relay", "pipelines"})) {
    s.kind = K::kShowRelayPipelines;
  } else if (AcceptWords({"relay", "moves"})) {
    s.kind = K::kShowRelayMoves;
  } else if (AcceptWords({"relay", "sources"})) {
    s.kind = K::kShowRelaySources;
    s.may_block = true;  // connects to every candidate
  } else if (AcceptWords({"slave", "status"})) {
    s.kind = K::kShowSlaveStatus;
  } else if (AcceptWords({"replica", "status"})) {
    s.kind = K::kShowSlaveStatus;
    s.replica_keyword = true;
  } else if (AcceptWords({"all", "slaves", "status"}) || AcceptWords({"all", "replicas", "status"})) {
    s.kind = K::kShowSlaveStatus;
    s.full = true;
  } else if (AcceptWords({"full", "processlist"})) {
    s.kind = K::kShowProcesslist;
    s.full = true;
  } else if (AcceptWord("processlist")) {
    s.kind = K::kShowProcesslist;
  } else if (AcceptWord("grants")) {
    s.kind = K::kShowGrants;
    // FOR CURRENT_USER[()] or FOR 'u'@'h': binrelay has one user.
    if (AcceptWord("for")) {
      while (!AtEnd()) ++pos_;
    }
  } else if (AcceptWord("warnings") || AcceptWord("errors")) {
    s.kind = K::kShowWarnings;
    if (AcceptWord("limit")) {
      while (!AtEnd()) ++pos_;
    }
  } else {
    return absl::UnimplementedError("this SHOW statement");
  }
  BR_RETURN_IF_ERROR(ExpectEnd());
  return s;
}

absl::StatusOr<AdminStatement> Parser::Kill() {
  AdminStatement s;
  s.kind = AdminStatement::Kind::kKill;
  if (!AcceptWord("hard")) AcceptWord("soft");
  if (AcceptWord("query")) {
    s.kill_query = true;
    if (IsWord("id")) return absl::UnimplementedError("KILL QUERY ID");
  } else {
    AcceptWord("connection");
  }
  if (IsWord("user")) return absl::UnimplementedError("KILL USER");
  if (Peek().kind != Kind::kNumber || !absl::SimpleAtoi(AV(TokenText(sql_, Peek())), &s.kill_id)) {
    return Error("a connection id");
  }
  ++pos_;
  BR_RETURN_IF_ERROR(ExpectEnd());
  return s;
}

absl::StatusOr<AdminStatement> Parser::Purge() {
  if (!(AcceptWord("binary") || AcceptWord("master")) || !AcceptWord("logs")) {
    return absl::UnimplementedError("this PURGE statement");
  }
  if (!AcceptWord("to")) return absl::UnimplementedError("PURGE BINARY LOGS other than TO 'file'");
  if (Peek().kind != Kind::kQuoted) return Error("a quoted binlog file name");
  AdminStatement s;
  s.kind = AdminStatement::Kind::kPurgeBinaryLogsTo;
  s.argument = TokenValue(sql_, Peek());
  s.may_block = true;  // unlinks files and rewrites the index with fsync
  ++pos_;
  BR_RETURN_IF_ERROR(ExpectEnd());
  return s;
}

absl::StatusOr<AdminStatement> Parser::NamedStatement(AdminStatement::Kind kind,
                                                      const char* what) {
  AdminStatement s;
  s.kind = kind;
  const SqlToken& t = Peek();
  if (t.kind != Kind::kWord && t.kind != Kind::kQuoted) return Error(what);
  s.argument = TokenValue(sql_, t);
  ++pos_;
  BR_RETURN_IF_ERROR(ExpectEnd());
  return s;
}

absl::StatusOr<AdminStatement> Parser::UpstreamControl(bool start) {
  AdminStatement s;
  s.kind = start ? AdminStatement::Kind::kStartUpstream : AdminStatement::Kind::kStopUpstream;
  s.may_block = true;  // STOP waits for the upstream to leave the stream
  if (AcceptWords({"all", "slaves"})) {
    BR_RETURN_IF_ERROR(ExpectEnd());
    return s;
  }
  if (!AcceptWord("slave") && !AcceptWord("replica")) return Error("SLAVE or REPLICA");
  // MariaDB names a connection after the keyword: binrelay has one, ''.
  if (Peek().kind == Kind::kQuoted) {
    s.connection = TokenValue(sql_, Peek());
    ++pos_;
  }
  // IO_THREAD, SQL_THREAD (comma-separated); binrelay's upstream is its IO
  // thread, and it has no SQL thread.
  if (IsWord("io_thread") || IsWord("sql_thread")) {
    do {
      if (AcceptWord("io_thread")) {
        s.io_thread = true;
      } else if (AcceptWord("sql_thread")) {
        s.sql_thread = true;
      } else {
        return Error("IO_THREAD or SQL_THREAD");
      }
    } while (AcceptSymbol(','));
  }
  BR_RETURN_IF_ERROR(ChannelAndEnd(&s));
  return s;
}

absl::StatusOr<AdminStatement> Parser::ChangeSource() {
  AdminStatement s;
  s.kind = AdminStatement::Kind::kChangeSource;
  // MariaDB names a connection before TO: binrelay has one, ''.
  if (Peek().kind == Kind::kQuoted) {
    s.connection = TokenValue(sql_, Peek());
    ++pos_;
  }
  if (!AcceptWord("to")) return Error("TO");
  // option = 'string' | number | word, comma-separated; the responder
  // decides which options binrelay takes.
  do {
    if (Peek().kind != Kind::kWord) return Error("an option name");
    AdminAssignment a;
    a.name = absl::AsciiStrToLower(TokenValue(sql_, Peek()));
    ++pos_;
    if (!AcceptSymbol('=')) return Error("'='");
    const SqlToken& v = Peek();
    if (v.kind == Kind::kQuoted) {
      a.value.kind = AdminExpr::Kind::kString;
    } else if (v.kind == Kind::kNumber) {
      a.value.kind = AdminExpr::Kind::kNumber;
    } else if (v.kind == Kind::kWord) {
      a.value.kind = AdminExpr::Kind::kIdentifier;
    } else {
      return Error("a value");
    }
    a.value.value = TokenValue(sql_, v);
    ++pos_;
    s.assignments.push_back(std::move(a));
  } while (AcceptSymbol(','));
  BR_RETURN_IF_ERROR(ChannelAndEnd(&s));
  return s;
}

absl::StatusOr<AdminStatement> Parser::Statement() {
  if (AcceptWord("set")) return Set();
  if (AcceptWord("select")) return Select();
  if (AcceptWord("show")) return Show();
  if (AcceptWord("purge")) return Purge();
  if (AcceptWord("kill")) return Kill();
  if (AcceptWords({"cutover", "move"})) {
    return NamedStatement(AdminStatement::Kind::kCutoverMove, "a move's name");
  }
  if (AcceptWord("use")) return NamedStatement(AdminStatement::Kind::kUse, "a database name");
  if (AcceptWord("change")) {
    if (AcceptWord("master") || AcceptWords({"replication", "source"})) return ChangeSource();
    return absl::UnimplementedError("statement");
  }
  if (IsWord("stop") || IsWord("start")) {
    const bool start = IsWord("start");
    if (IsWord("slave", 1) || IsWord("replica", 1) ||
        (IsWord("all", 1) && IsWord("slaves", 2))) {
      ++pos_;
      return UpstreamControl(start);
    }
  }
  // Transaction control has nothing to do on a relay that writes nothing.
  if (AcceptWord("begin") || AcceptWord("commit") || AcceptWord("rollback") ||
      AcceptWords({"start", "transaction"})) {
    AdminStatement s;
    s.kind = AdminStatement::Kind::kTransaction;
    while (!AtEnd()) {
      if (!(Peek().kind == Kind::kWord || IsSym(','))) return Error("end of statement");
      if (IsWord("to")) return absl::UnimplementedError("ROLLBACK TO SAVEPOINT");
      ++pos_;
    }
    return s;
  }
  return absl::UnimplementedError("statement");
}

bool Like(std::string_view text, std::string_view pat) {
  size_t ti = 0, pi = 0;
  // Iterative over text with one level of backtracking for '%' (the classic
  // wildcard matcher): linear in practice, bounded by text x pattern.
  size_t star_p = std::string_view::npos, star_t = 0;
  while (ti < text.size()) {
    if (pi < pat.size() && pat[pi] == '\\' && pi + 1 < pat.size()) {
      if (absl::ascii_tolower(static_cast<unsigned char>(pat[pi + 1])) ==
          absl::ascii_tolower(static_cast<unsigned char>(text[ti]))) {
        pi += 2;
        ++ti;
        continue;
      }
    } else if (pi < pat.size() && pat[pi] == '%') {
      star_p = pi++;
      star_t = ti;
      continue;
    } else if (pi < pat.size() &&
               (pat[pi] == '_' || absl::ascii_tolower(static_cast<unsigned char>(pat[pi])) ==
                                      absl::ascii_tolower(static_cast<unsigned char>(text[ti])))) {
      ++pi;
      ++ti;
      continue;
    }
    if (star_p == std::string_view::npos) return false;
    pi = star_p + 1;
    ti = ++star_t;
  }
  while (pi < pat.size() && pat[pi] == '%') ++pi;
  return pi == pat.size();
}

}  // namespace

bool SqlLikeMatch(std::string_view text, std::string_view pattern) {
  return Like(text, pattern);
}

absl::StatusOr<AdminStatement> ParseAdminStatement(std::string_view sql) {
  BR_ASSIGN_OR_RETURN(std::vector<SqlToken> tokens, TokenizeSql(sql));
  return Parser(sql, std::move(tokens)).Statement();
}

}  // namespace binrelay::proxy
