#include "cli/serve_config.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "protocol/auth.h"
#include "protocol/status_macros.h"
#include "replication/gtid_set.h"

namespace binrelay::cli {
namespace {

// Reads settings from one section, naming the key and its origin in errors.
class Section {
 public:
  Section(const IniFile& ini, std::string name) : ini_(ini), name_(std::move(name)) {}

  const IniFile::Value* Get(std::string_view key) const { return ini_.Find(name_, key); }
  const std::string& name() const { return name_; }

  absl::StatusOr<std::string> Required(std::string_view key) const {
    const IniFile::Value* v = Get(key);
    if (v == nullptr || v->text.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("missing required key [", name_, "] ", AV(key)));
    }
    return v->text;
  }
  std::string Optional(std::string_view key, std::string_view fallback) const {
    const IniFile::Value* v = Get(key);
    return v ? v->text : std::string(fallback);
  }
  absl::Status Invalid(std::string_view key, std::string_view why) const {
    const IniFile::Value* v = Get(key);
    // A password's value is never repeated in a message.
    const bool secret = absl::EndsWith(AV(key), "password");
    return absl::InvalidArgumentError(
        absl::StrCat(v ? v->origin + ": " : std::string(), "[", name_, "] ", AV(key), " = '",
                     v && !secret ? v->text : std::string(secret ? "..." : ""), "': ", AV(why)));
  }
  template <typename T>
  absl::StatusOr<T> Number(std::string_view key, T fallback, T min, T max) const {
    const IniFile::Value* v = Get(key);
    if (v == nullptr) return fallback;
    uint64_t n = 0;
    if (!absl::SimpleAtoi(v->text, &n) || n < min || n > max) {
      return Invalid(key, absl::StrCat("expected an integer from ", min, " to ", max));
    }
    return static_cast<T>(n);
  }
  // A password given inline or as password_file (first line of the file).
  absl::StatusOr<std::string> Password(std::string_view prefix = "") const {
    const std::string key = absl::StrCat(AV(prefix), "password");
    const std::string file_key = absl::StrCat(key, "_file");
    const IniFile::Value* inline_pw = Get(key);
    const IniFile::Value* file = Get(file_key);
    if (inline_pw && file) {
      return Invalid(file_key, absl::StrCat("give ", key, " or ", file_key, ", not both"));
    }
    if (inline_pw) return inline_pw->text;
    if (!file) return absl::InvalidArgumentError(
        absl::StrCat("missing required key [", name_, "] ", key, " (or ", file_key, ")"));
    std::ifstream in(file->text);
    std::string line;
    if (!in || !std::getline(in, line)) return Invalid(file_key, "cannot read the file");
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return line;
  }

 private:
  const IniFile& ini_;
  std::string name_;
};

absl::StatusOr<bool> OnOff(const Section& s, std::string_view key, bool fallback);

// [prefix]server_public_key_path and [prefix]get_server_public_key: what
// caching_sha2_password may do without TLS (protocol/auth.h RsaKeyPolicy).
absl::Status ParseRsaKeyPolicy(const Section& s, std::string_view prefix,
                               protocol::RsaKeyPolicy* rsa) {
  const std::string path_key = absl::StrCat(AV(prefix), "server_public_key_path");
  const std::string get_key = absl::StrCat(AV(prefix), "get_server_public_key");
  if (const IniFile::Value* v = s.Get(path_key); v != nullptr && !v->text.empty()) {
    std::ifstream in(v->text, std::ios::binary);
    std::string pem((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in && pem.empty()) return s.Invalid(path_key, "cannot read the file");
    // Encrypting a probe proves the file holds a usable public key.
    auto probe = protocol::CachingSha2RsaEncrypt("probe", "01234567890123456789", pem);
    if (!probe.ok()) {
      return s.Invalid(path_key, "not a PEM RSA public key (the server's "
                                 "caching_sha2_password_public_key_path file)");
    }
    rsa->pinned_pem = std::move(pem);
  }
  BR_ASSIGN_OR_RETURN(rsa->allow_retrieval, OnOff(s, get_key, false));
  return absl::OkStatus();
}

absl::Status ParseSource(const Section& s, ServeConfig* c) {
  protocol::ConnectOptions& conn = c->upstream.connect;
  BR_ASSIGN_OR_RETURN(conn.host, s.Required("host"));
  BR_ASSIGN_OR_RETURN(conn.port, s.Number<uint16_t>("port", 3306, 1, 65535));
  BR_ASSIGN_OR_RETURN(conn.user, s.Required("user"));
  BR_ASSIGN_OR_RETURN(conn.password, s.Password());
  conn.credentials_from = "[source] user and password or password_file";
  BR_ASSIGN_OR_RETURN(c->upstream.server_id,
                      s.Number<uint32_t>("server_id", 0, 1, 4294967295u));
  if (c->upstream.server_id == 0) {
    return absl::InvalidArgumentError(
        "missing required key [source] server_id (the id binrelay registers with; it must "
        "differ from every server and replica in the topology)");
  }
  c->source_ssl_mode = absl::AsciiStrToLower(s.Optional("ssl_mode", "preferred"));
  conn.tls_ca_file = s.Optional("ssl_ca", "");  // verifies the certificate when set
  BR_RETURN_IF_ERROR(ParseRsaKeyPolicy(s, "", &conn.rsa));
  if (c->source_ssl_mode == "disabled") {
    conn.tls = protocol::ConnectOptions::Tls::kDisabled;
  } else if (c->source_ssl_mode == "preferred") {
    conn.tls = protocol::ConnectOptions::Tls::kPreferred;
  } else if (c->source_ssl_mode == "required") {
    conn.tls = protocol::ConnectOptions::Tls::kRequired;
  } else if (c->source_ssl_mode == "verify_ca" || c->source_ssl_mode == "verify_identity") {
    conn.tls = protocol::ConnectOptions::Tls::kRequired;
    conn.tls_verify_identity = c->source_ssl_mode == "verify_identity";
    if (conn.tls_ca_file.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "[source] ssl_mode = ", c->source_ssl_mode,
          " needs [source] ssl_ca (the CA certificate file)"));
    }
  } else {
    return s.Invalid("ssl_mode",
                     "expected disabled, preferred, required, verify_ca or verify_identity");
  }
  std::string start_text = s.Optional("start", "current");
  c->start_next = start_text == "next";
  auto start = replication::ParseStartSpec(c->start_next ? "current" : start_text);
  if (!start.ok()) {
    return s.Invalid("start", "expected current, next, earliest, FILE:POS (POS >= 4) or gtid:SET");
  }
  c->upstream.start = *start;
  if (const IniFile::Value* hb = s.Get("heartbeat")) {
    auto d = ParseDuration(hb->text);
    if (!d.ok()) return s.Invalid("heartbeat", SV(d.status().message()));
    c->upstream.heartbeat_period = *d;
  }
  BR_ASSIGN_OR_RETURN(c->upstream.semi_sync, OnOff(s, "semi_sync", false));
  BR_ASSIGN_OR_RETURN(c->follow_read_only, OnOff(s, "follow_read_only", false));
  // failover_after = 10s: follow a candidate by GTID once the source has
  // been lost this long (0, the default: only by hand, CHANGE MASTER TO).
  if (const IniFile::Value* fa = s.Get("failover_after")) {
    auto d = ParseDuration(fa->text);
    if (!d.ok()) return s.Invalid("failover_after", SV(d.status().message()));
    c->upstream.failover_after = *d;
  }
  // candidates = host:port, host:port: the other servers of the topology.
  c->source_candidates = {conn};
  const std::string candidates = s.Optional("candidates", "");
  for (absl::string_view item : absl::StrSplit(candidates, ',', absl::SkipWhitespace())) {
    item = absl::StripAsciiWhitespace(item);
    protocol::ConnectOptions other = conn;
    absl::string_view host = item;
    absl::string_view port;
    // host, host:port, [v6], [v6]:port. An IPv6 address takes brackets: in
    // "::1:3307" the port cannot be told from the address.
    if (absl::StartsWith(item, "[")) {
      const size_t close = item.find(']');
      if (close == absl::string_view::npos ||
          (close + 1 < item.size() && item[close + 1] != ':')) {
        return s.Invalid("candidates", absl::StrCat("'", item, "' is not [address]:port"));
      }
      host = item.substr(1, close - 1);
      if (close + 1 < item.size()) port = item.substr(close + 2);
      if (close + 1 < item.size() && port.empty()) {
        return s.Invalid("candidates", absl::StrCat("'", item, "' has no valid port"));
      }
    } else if (const size_t colon = item.find(':'); colon != absl::string_view::npos) {
      if (item.find(':', colon + 1) != absl::string_view::npos) {
        return s.Invalid("candidates", absl::StrCat("'", item, "': write an IPv6 address in "
                                                    "brackets, [address]:port"));
      }
      host = item.substr(0, colon);
      port = item.substr(colon + 1);
      if (port.empty()) {
        return s.Invalid("candidates", absl::StrCat("'", item, "' has no valid port"));
      }
    }
    other.port = 3306;
    if (!port.empty()) {
      uint32_t number = 0;
      if (!absl::SimpleAtoi(port, &number) || number == 0 || number > 65535) {
        return s.Invalid("candidates", absl::StrCat("'", item, "' has no valid port"));
      }
      other.port = static_cast<uint16_t>(number);
    }
    if (host.empty() || absl::StrContains(host, "[") || absl::StrContains(host, "]")) {
      return s.Invalid("candidates", absl::StrCat("'", item, "' names no host"));
    }
    other.host = std::string(host);
    for (const protocol::ConnectOptions& seen : c->source_candidates) {
      if (absl::EqualsIgnoreCase(seen.host, other.host) && seen.port == other.port) {
        return s.Invalid("candidates",
                         absl::StrCat(other.host, ":", other.port, " is named twice (the "
                                      "[source] host is a candidate already)"));
      }
    }
    c->source_candidates.push_back(std::move(other));
  }
  if (c->upstream.failover_after.count() > 0 && c->source_candidates.size() < 2) {
    return s.Invalid("failover_after",
                     "needs [source] candidates: the servers a failover may follow");
  }
  return absl::OkStatus();
}

// An ACK promises the transaction is durable here: only true when the
// store syncs every transaction before the ACK is sent.
absl::Status CheckSemiSync(const ServeConfig& c) {
  if (c.upstream.semi_sync && c.store.sync != ServeConfig::Store::Sync::kTransaction) {
    return absl::InvalidArgumentError(
        "[source] semi_sync = on needs [store] sync = transaction: a source waiting for "
        "binrelay's ACK must only get it once the transaction is on binrelay's disk");
  }
  return absl::OkStatus();
}

absl::Status ParseStore(const Section& s, std::string_view default_sync, ServeConfig* c) {
  BR_ASSIGN_OR_RETURN(c->store.dir, s.Required("dir"));
  std::string sync = absl::AsciiStrToLower(s.Optional("sync", std::string(default_sync)));
  if (sync == "transaction") {
    c->store.sync = ServeConfig::Store::Sync::kTransaction;
  } else if (sync == "off") {
    c->store.sync = ServeConfig::Store::Sync::kOff;
  } else {
    auto d = ParseDuration(sync);
    if (!d.ok() || d->count() <= 0) {
      return s.Invalid("sync", "expected transaction, off, or an interval such as 100ms or 1s");
    }
    c->store.sync = ServeConfig::Store::Sync::kInterval;
    c->store.sync_interval = *d;
  }
  BR_ASSIGN_OR_RETURN(c->store.retention_hours,
                      s.Number<uint64_t>("retention_hours", 168, 0, 24 * 365 * 100));
  if (const IniFile::Value* v = s.Get("retention_bytes")) {
    auto b = ParseByteSize(v->text);
    if (!b.ok()) return s.Invalid("retention_bytes", SV(b.status().message()));
    c->store.retention_bytes = *b;
  }
  if (const IniFile::Value* v = s.Get("retention_hard_cap_bytes")) {
    auto b = ParseByteSize(v->text);
    if (!b.ok()) return s.Invalid("retention_hard_cap_bytes", SV(b.status().message()));
    if (*b != 0 && *b < c->store.retention_bytes) {
      return s.Invalid("retention_hard_cap_bytes",
                       "must be 0 (never purge files a consumer needs) or at least "
                       "retention_bytes");
    }
    c->store.retention_hard_cap_bytes = *b;
  }
  return absl::OkStatus();
}

absl::Status ParseListen(const Section& s, ServeConfig* c) {
  c->listen.address = s.Optional("address", "127.0.0.1");
  BR_ASSIGN_OR_RETURN(c->listen.port, s.Number<uint16_t>("port", 0, 1, 65535));
  if (c->listen.port == 0) return absl::InvalidArgumentError("missing required key [listen] port");
  BR_ASSIGN_OR_RETURN(c->listen.server_id, s.Number<uint32_t>("server_id", 0, 1, 4294967295u));
  if (c->listen.server_id == 0) {
    return absl::InvalidArgumentError(
        "missing required key [listen] server_id (what binrelay reports as @@server_id to its "
        "replicas; usually the source's own id)");
  }
  BR_ASSIGN_OR_RETURN(c->listen.user, s.Required("user"));
  BR_ASSIGN_OR_RETURN(c->listen.password, s.Password());
  c->listen.admin_user = s.Optional("admin_user", "");
  if (!c->listen.admin_user.empty()) {
    if (c->listen.admin_user == c->listen.user) {
      return s.Invalid("admin_user", "must differ from [listen] user (the replication user)");
    }
    BR_ASSIGN_OR_RETURN(c->listen.admin_password, s.Password("admin_"));
    if (c->listen.admin_password.empty()) {
      return s.Invalid("admin_password", "the admin account needs a password that is not empty");
    }
  } else if (s.Get("admin_password") != nullptr || s.Get("admin_password_file") != nullptr) {
    return s.Invalid("admin_user", "admin_password given without admin_user");
  }
  std::string forward = absl::AsciiStrToLower(s.Optional("forward_queries", "metadata"));
  if (forward != "metadata" && forward != "none") {
    return s.Invalid("forward_queries", "expected metadata or none");
  }
  c->listen.forward_queries = forward == "metadata";
  c->listen.forward_user = s.Optional("forward_user", "");
  if (!c->listen.forward_user.empty()) {
    BR_ASSIGN_OR_RETURN(c->listen.forward_password, s.Password("forward_"));
  }
  BR_ASSIGN_OR_RETURN(c->listen.forward_connections,
                      s.Number<uint32_t>("forward_connections", 4, 1, 64));
  BR_ASSIGN_OR_RETURN(c->listen.max_connections,
                      s.Number<size_t>("max_connections", 512, 1, 100000));
  for (auto [key, field, fallback] :
       {std::tuple{"forward_timeout", &c->listen.forward_timeout, std::chrono::milliseconds(10000)},
        std::tuple{"auth_timeout", &c->listen.auth_timeout, std::chrono::milliseconds(10000)},
        std::tuple{"read_timeout", &c->listen.read_timeout, std::chrono::milliseconds(60000)},
        std::tuple{"idle_timeout", &c->listen.idle_timeout,
                   std::chrono::milliseconds(8 * 3600 * 1000)}}) {
    *field = fallback;
    if (const IniFile::Value* v = s.Get(key)) {
      auto d = ParseDuration(v->text);
      if (!d.ok() || d->count() <= 0) return s.Invalid(key, "expected a duration such as 10s");
      *field = *d;
    }
  }
  c->listen.ssl_cert = s.Optional("ssl_cert", "");
  c->listen.ssl_key = s.Optional("ssl_key", "");
  if (c->listen.ssl_cert.empty() != c->listen.ssl_key.empty()) {
    return s.Invalid(c->listen.ssl_cert.empty() ? "ssl_key" : "ssl_cert",
                     "ssl_cert and ssl_key go together");
  }
  const std::string mode = absl::AsciiStrToLower(s.Optional("ssl_mode", "preferred"));
  if (mode == "required") {
    c->listen.ssl_required = true;
  } else if (mode == "disabled") {
    if (!c->listen.ssl_cert.empty()) {
      return s.Invalid("ssl_mode", "disabled contradicts ssl_cert and ssl_key");
    }
    c->listen.ssl_enabled = false;
  } else if (mode != "preferred") {
    return s.Invalid("ssl_mode", "expected preferred (TLS offered, plain logins accepted), "
                                 "required or disabled");
  }
  c->listen.rsa_private_key = s.Optional("rsa_private_key", "");
  return absl::OkStatus();
}

absl::Status ParseHttp(const Section& s, ServeConfig* c) {
  const IniFile::Value* v = s.Get("address");
  if (v == nullptr || v->text.empty()) return absl::OkStatus();  // no HTTP endpoint
  size_t colon = v->text.rfind(':');
  uint32_t port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(v->text.substr(colon + 1), &port) ||
      port == 0 || port > 65535) {
    return s.Invalid("address", "expected HOST:PORT, e.g. 127.0.0.1:8080");
  }
  c->http.enabled = true;
  c->http.address = v->text.substr(0, colon);
  c->http.port = static_cast<uint16_t>(port);
  return absl::OkStatus();
}

// The keys [apply.NAME] and [move.NAME] share; `kind` is "apply" or "move"
// (a move has no start: it reads from where its copy begins).
absl::StatusOr<apply::PipelineOptions> ParsePipeline(const Section& s, std::string name,
                                                     std::string_view kind) {
  apply::PipelineOptions p;
  p.name = std::move(name);
  bool name_ok = !p.name.empty() && p.name.size() <= 64;
  for (char ch : p.name) {
    name_ok = name_ok && (absl::ascii_isalnum(static_cast<unsigned char>(ch)) || ch == '_' ||
                          ch == '-');
  }
  if (!name_ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "[", AV(kind), ".", p.name, "]: a name is 1 to 64 letters, digits, '_' or '-'"));
  }
  protocol::ConnectOptions& t = p.target;
  BR_ASSIGN_OR_RETURN(t.host, s.Required("target_host"));
  BR_ASSIGN_OR_RETURN(t.port, s.Number<uint16_t>("target_port", 3306, 1, 65535));
  BR_ASSIGN_OR_RETURN(t.user, s.Required("target_user"));
  BR_ASSIGN_OR_RETURN(t.password, s.Password("target_"));
  t.credentials_from =
      absl::StrCat("[", s.name(), "] target_user and target_password or target_password_file");
  p.target_ssl_mode = absl::AsciiStrToLower(s.Optional("target_ssl_mode", "preferred"));
  t.tls_ca_file = s.Optional("target_ssl_ca", "");
  BR_RETURN_IF_ERROR(ParseRsaKeyPolicy(s, "target_", &t.rsa));
  if (p.target_ssl_mode == "disabled") {
    t.tls = protocol::ConnectOptions::Tls::kDisabled;
  } else if (p.target_ssl_mode == "preferred") {
    t.tls = protocol::ConnectOptions::Tls::kPreferred;
  } else if (p.target_ssl_mode == "required" || p.target_ssl_mode == "verify_ca" ||
             p.target_ssl_mode == "verify_identity") {
    t.tls = protocol::ConnectOptions::Tls::kRequired;
    t.tls_verify_identity = p.target_ssl_mode != "verify_ca";
    if (p.target_ssl_mode != "required" && t.tls_ca_file.empty()) {
      return s.Invalid("target_ssl_mode", absl::StrCat(p.target_ssl_mode,
                                                       " needs target_ssl_ca (the CA certificate)"));
    }
  } else {
    return s.Invalid("target_ssl_mode",
                     "expected disabled, preferred, required, verify_ca or verify_identity");
  }
  BR_ASSIGN_OR_RETURN(p.tables, s.Required("tables"));
  p.target_schema = s.Optional("target_schema", "");
  if (kind == "apply") {
    auto start = replication::ParseStartSpec(s.Optional("start", "current"));
    if (!start.ok()) return s.Invalid("start", SV(start.status().message()));
    if (start->kind == replication::StartSpec::Kind::kGtid &&
        !replication::MariaGtidPosition::Parse(start->gtid_set).ok() &&
        !replication::MysqlGtidSet::Parse(start->gtid_set).ok()) {
      return s.Invalid("start", "gtid: expects a MariaDB GTID position (0-1-100,1-2-5) or a "
                                "MySQL GTID set (uuid:1-100)");
    }
    p.start = *start;
  }
  if (const IniFile::Value* v = s.Get("flush_interval")) {
    auto d = ParseDuration(v->text);
    if (!d.ok() || d->count() <= 0) return s.Invalid("flush_interval", "expected a duration such as 1s");
    p.flush_interval = *d;
  }
  BR_ASSIGN_OR_RETURN(p.batch_rows, s.Number<size_t>("batch_rows", 1000, 1, 1000000));
  if (const IniFile::Value* v = s.Get("batch_bytes")) {
    auto b = ParseByteSize(v->text);
    if (!b.ok() || *b < 1024) return s.Invalid("batch_bytes", "expected a size of at least 1K");
    p.batch_bytes = *b;
  }
  BR_ASSIGN_OR_RETURN(p.concurrency, s.Number<size_t>("concurrency", 8, 1, 256));
  if (const IniFile::Value* v = s.Get("soft_limit_bytes")) {
    auto b = ParseByteSize(v->text);
    if (!b.ok() || *b < (1 << 20)) {
      return s.Invalid("soft_limit_bytes", "expected a size of at least 1M");
    }
    p.soft_limit_bytes = *b;
  }
  if (const IniFile::Value* v = s.Get("bulk_replace")) {
    const std::string b = absl::AsciiStrToLower(absl::StripAsciiWhitespace(AV(v->text)));
    if (b == "on" || b == "1" || b == "true") {
      p.bulk_replace = true;
    } else if (b == "off" || b == "0" || b == "false") {
      p.bulk_replace = false;
    } else {
      return s.Invalid("bulk_replace", "expected on or off");
    }
  }
  BR_ASSIGN_OR_RETURN(uint32_t lock_wait, s.Number<uint32_t>("lock_wait_timeout", 5, 1, 3600));
  p.lock_wait_timeout_seconds = static_cast<int>(lock_wait);
  p.checkpoint_schema = s.Optional("checkpoint_schema", "binrelay");
  return p;
}

absl::Status ParseApply(const Section& s, std::string name, ServeConfig* c) {
  BR_ASSIGN_OR_RETURN(apply::PipelineOptions p, ParsePipeline(s, std::move(name), "apply"));
  c->apply.push_back(std::move(p));
  return absl::OkStatus();
}

absl::StatusOr<bool> OnOff(const Section& s, std::string_view key, bool fallback) {
  const IniFile::Value* v = s.Get(key);
  if (v == nullptr) return fallback;
  const std::string b = absl::AsciiStrToLower(absl::StripAsciiWhitespace(AV(v->text)));
  if (b == "on" || b == "1" || b == "true") return true;
  if (b == "off" || b == "0" || b == "false") return false;
  return s.Invalid(key, "expected on or off");
}

absl::StatusOr<std::chrono::milliseconds> PositiveDuration(const Section& s, std::string_view key,
                                                           std::chrono::milliseconds fallback) {
  const IniFile::Value* v = s.Get(key);
  if (v == nullptr) return fallback;
  auto d = ParseDuration(v->text);
  if (!d.ok() || d->count() <= 0) return s.Invalid(key, "expected a duration such as 2s");
  return *d;
}

}  // namespace

absl::StatusOr<apply::MoveOptions> ParseMoveSection(const IniFile& ini, const std::string& section,
                                                    std::string name) {
  Section s(ini, section);
  apply::MoveOptions m;
  BR_ASSIGN_OR_RETURN(m.apply, ParsePipeline(s, std::move(name), "move"));
  const std::string cutover = absl::AsciiStrToLower(s.Optional("cutover", "auto"));
  if (cutover == "auto") {
    m.cutover = apply::MoveOptions::Cutover::kAuto;
  } else if (cutover == "manual") {
    m.cutover = apply::MoveOptions::Cutover::kManual;
  } else if (cutover == "none") {
    m.cutover = apply::MoveOptions::Cutover::kNone;
  } else {
    return s.Invalid("cutover", "expected auto, manual or none");
  }
  BR_ASSIGN_OR_RETURN(m.chunk_time, PositiveDuration(s, "chunk_time", m.chunk_time));
  BR_ASSIGN_OR_RETURN(m.copy_threads, s.Number<size_t>("copy_threads", 2, 1, 64));
  if (const IniFile::Value* v = s.Get("copy_batch_bytes")) {
    auto b = ParseByteSize(v->text);
    if (!b.ok() || *b < 1024) return s.Invalid("copy_batch_bytes", "expected a size of at least 1K");
    m.copy_batch_bytes = *b;
  }
  if (const IniFile::Value* v = s.Get("copy_chunk_bytes")) {
    auto b = ParseByteSize(v->text);
    if (!b.ok() || *b < (1 << 20)) {
      return s.Invalid("copy_chunk_bytes", "expected a size of at least 1M");
    }
    m.copy_chunk_bytes = *b;
  }
  // For tests that run binrelay as a process (apply/move_test_points.h);
  // not in conf/binrelay.cnf.
  const IniFile::Value* hold_dir = s.Get("test_hold_dir");
  const IniFile::Value* stall_at = s.Get("test_stall_at");
  if (hold_dir != nullptr || stall_at != nullptr) {
    m.test_points = apply::FileMoveTestPoints(hold_dir ? hold_dir->text : "",
                                              stall_at ? stall_at->text : "");
  }
  BR_ASSIGN_OR_RETURN(m.cutover_lock_wait,
                      PositiveDuration(s, "cutover_lock_wait", m.cutover_lock_wait));
  BR_ASSIGN_OR_RETURN(m.cutover_timeout, PositiveDuration(s, "cutover_timeout", m.cutover_timeout));
  BR_ASSIGN_OR_RETURN(m.cutover_attempts,
                      s.Number<size_t>("cutover_attempts", m.cutover_attempts, 1, 100000));
  BR_ASSIGN_OR_RETURN(m.rename_source, OnOff(s, "rename_source", true));
  BR_ASSIGN_OR_RETURN(m.indexes_after_copy, OnOff(s, "indexes_after_copy", true));
  BR_ASSIGN_OR_RETURN(m.bulk_copy, OnOff(s, "bulk_copy", true));
  return m;
}

namespace {

}  // namespace

absl::StatusOr<uint64_t> ParseByteSize(std::string_view text) {
  absl::string_view t = absl::StripAsciiWhitespace(AV(text));
  uint64_t mult = 1;
  if (!t.empty()) {
    switch (absl::ascii_toupper(t.back())) {
      case 'K': mult = 1ull << 10; break;
      case 'M': mult = 1ull << 20; break;
      case 'G': mult = 1ull << 30; break;
      case 'T': mult = 1ull << 40; break;
      default: break;
    }
    if (mult != 1) t.remove_suffix(1);
  }
  uint64_t n = 0;
  if (!absl::SimpleAtoi(t, &n) || n > UINT64_MAX / mult) {
    return absl::InvalidArgumentError("expected a size such as 1073741824, 512M or 10G");
  }
  return n * mult;
}

absl::StatusOr<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  absl::string_view t = absl::StripAsciiWhitespace(AV(text));
  double factor = 1000;  // plain numbers are seconds, as in my.cnf
  if (absl::ConsumeSuffix(&t, "ms")) {
    factor = 1;
  } else if (absl::ConsumeSuffix(&t, "s")) {
    factor = 1000;
  } else if (absl::ConsumeSuffix(&t, "m")) {
    factor = 60000;
  } else if (absl::ConsumeSuffix(&t, "h")) {
    factor = 3600000;
  }
  double v = 0;
  // At most about 31 years: beyond, the milliseconds would not fit.
  if (!absl::SimpleAtod(t, &v) || !(v >= 0) || v * factor > 1e12) {
    return absl::InvalidArgumentError(
        "expected a duration such as 250ms, 2s, 1m or 8h (at most 1e12 ms)");
  }
  return std::chrono::milliseconds(static_cast<int64_t>(v * factor));
}

namespace {

// A password (inline in the config, or in a password file) in a file that
// group or others can read is said at start, as ssh does of a readable key.
std::vector<std::string> SecretFileWarnings(const IniFile& ini) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  ini.ForEachValue([&](std::string_view section, std::string_view key, const IniFile::Value& v) {
    std::string path;
    if (absl::EndsWith(AV(key), "password_file")) {
      path = v.text;
    } else if (absl::EndsWith(AV(key), "password") && !absl::StartsWith(v.origin, "--")) {
      path = v.origin.substr(0, v.origin.rfind(':'));
    } else {
      return;
    }
    struct stat st {};
    if (path.empty() || !seen.insert(path).second || ::stat(path.c_str(), &st) != 0) return;
    if ((st.st_mode & (S_IRGRP | S_IROTH)) == 0) return;
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    out.push_back(absl::StrCat(path, " holds [", AV(section), "] ", AV(key),
                               " and group or others can read it (mode ", mode,
                               "): chmod 600 ", path));
  });
  return out;
}

absl::Status RefuseUnknownKeys(const IniFile& ini, ServeConfig* c) {
  c->unknown_keys = ini.UnreadKeys();
  if (!c->unknown_keys.empty()) {
    // Like mysqld with an unknown option: a typo must not silently fall back
    // to a default (a retention or sync setting, say).
    return absl::InvalidArgumentError(
        absl::StrCat("unknown configuration key ", c->unknown_keys.front(),
                     c->unknown_keys.size() > 1
                         ? absl::StrCat(" (and ", c->unknown_keys.size() - 1, " more)")
                         : std::string()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ServeConfig> ParseMoveConfig(const IniFile& ini) {
  ServeConfig c;
  BR_RETURN_IF_ERROR(ParseSource(Section(ini, "source"), &c));
  // A move's store syncs every 100 ms by default, not every transaction:
  // its readers (its own pipeline, replicas when [listen] is given) only
  // ever receive synced events, so a crash takes back nothing they have,
  // and what it does take back is the source's newest binlog, fetched
  // again on restart. An fdatasync per transaction cost the move of a
  // table under 500 writes/s about 3 CPU seconds of binrelay's in 20 s
  // (bench/move_bench.sh). A semi-sync ACK needs the per-transaction sync.
  BR_RETURN_IF_ERROR(ParseStore(Section(ini, "store"),
                                c.upstream.semi_sync ? "transaction" : "100ms", &c));
  BR_RETURN_IF_ERROR(CheckSemiSync(c));
  // Serving replicas meanwhile is optional for a move.
  for (const std::string& section : ini.SectionsWithPrefix("listen")) {
    if (section != "listen") continue;
    BR_RETURN_IF_ERROR(ParseListen(Section(ini, "listen"), &c));
    c.listen.enabled = true;
  }
  BR_RETURN_IF_ERROR(ParseHttp(Section(ini, "http"), &c));
  const IniFile::Value* name = ini.Find("move", "name");
  BR_ASSIGN_OR_RETURN(apply::MoveOptions m,
                      ParseMoveSection(ini, "move", name ? name->text : std::string("move")));
  m.store_dir = c.store.dir;
  c.moves.push_back(std::move(m));
  BR_RETURN_IF_ERROR(RefuseUnknownKeys(ini, &c));
  c.warnings = SecretFileWarnings(ini);
  return c;
}

absl::StatusOr<ServeConfig> ParseServeConfig(const IniFile& ini) {
  ServeConfig c;
  BR_RETURN_IF_ERROR(ParseSource(Section(ini, "source"), &c));
  BR_RETURN_IF_ERROR(ParseStore(Section(ini, "store"), "transaction", &c));
  BR_RETURN_IF_ERROR(CheckSemiSync(c));
  BR_RETURN_IF_ERROR(ParseListen(Section(ini, "listen"), &c));
  c.listen.enabled = true;
  BR_RETURN_IF_ERROR(ParseHttp(Section(ini, "http"), &c));
  for (const std::string& section : ini.SectionsWithPrefix("apply.")) {
    BR_RETURN_IF_ERROR(ParseApply(Section(ini, section), section.substr(6), &c));
  }
  for (const std::string& section : ini.SectionsWithPrefix("move.")) {
    BR_ASSIGN_OR_RETURN(apply::MoveOptions m, ParseMoveSection(ini, section, section.substr(5)));
    m.store_dir = c.store.dir;
    c.moves.push_back(std::move(m));
  }
  // Pipelines and moves share the checkpoint table on a target.
  std::set<std::string> names;
  for (const auto& p : c.apply) names.insert(p.name);
  for (const auto& m : c.moves) {
    if (!names.insert(m.apply.name).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "[move.", m.apply.name, "] has the name of an [apply.", m.apply.name,
          "] section: give each pipeline and move its own name"));
    }
  }
  BR_RETURN_IF_ERROR(RefuseUnknownKeys(ini, &c));
  c.warnings = SecretFileWarnings(ini);
  return c;
}

}  // namespace binrelay::cli
