#include "apply/move_checkpoint.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "apply/sql_literal.h"
#include "apply/table_shape.h"
#include "protocol/status_macros.h"

namespace binrelay::apply {
namespace {

std::string Table(const std::string& schema) {
  std::string out;
  AppendIdentifier(schema, &out);
  out.append(".`move_checkpoint`");
  return out;
}

// Debian's abseil has no validating hex decoder.
bool Unhex(std::string_view hex, std::string* out) {
  if (hex.size() % 2 != 0) return false;
  out->clear();
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

// A bound as text: each value hex-encoded (keys may hold any bytes), joined
// by commas, then its ordered key in hex after a '/'.
std::string EncodeBound(const std::optional<KeyBound>& b) {
  if (!b) return "";
  std::vector<std::string> hex;
  for (const std::string& v : b->values) hex.push_back(absl::BytesToHexString(v));
  return absl::StrCat(absl::StrJoin(hex, ","), "/", absl::BytesToHexString(b->ordered));
}

absl::StatusOr<std::optional<KeyBound>> DecodeBound(const std::optional<std::string>& text,
                                                    const std::string& where) {
  if (!text || text->empty()) return std::nullopt;
  std::vector<std::string> parts = absl::StrSplit(*text, '/');
  auto bad = [&] {
    return absl::DataLossError(absl::StrCat(where, " holds a key bound '", *text,
                                            "' that is not binrelay's; delete the move's rows "
                                            "to start it over"));
  };
  if (parts.size() != 2) return bad();
  KeyBound b;
  for (absl::string_view h : absl::StrSplit(parts[0], ',')) {
    std::string v;
    if (!Unhex(SV(h), &v)) return bad();
    b.values.push_back(std::move(v));
  }
  if (!Unhex(parts[1], &b.ordered)) return bad();
  return b;
}

}  // namespace

absl::Status CreateMoveCheckpointTable(replication::SqlSource& target, const std::string& schema) {
  std::string db;
  AppendIdentifier(schema, &db);
  BR_RETURN_IF_ERROR(target.Query(absl::StrCat("CREATE DATABASE IF NOT EXISTS ", db)).status());
  return target
      .Query(absl::StrCat("CREATE TABLE IF NOT EXISTS ", Table(schema),
                          " (move VARCHAR(64) NOT NULL, db VARCHAR(64) NOT NULL, "
                          "tbl VARCHAR(64) NOT NULL, phase VARCHAR(32) NOT NULL, start_at VARCHAR(300) NOT NULL, "
                          "copied TEXT, guard BLOB, copy_done TINYINT NOT NULL, "
                          "checked TEXT, checksum_done TINYINT NOT NULL, "
                          "updated_at TIMESTAMP(6) NOT NULL, PRIMARY KEY (move, db, tbl)) "
                          "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"))
      .status();
}

absl::StatusOr<std::map<std::string, MoveTableProgress>> LoadMoveCheckpoint(
    replication::SqlSource& target, const std::string& schema, const std::string& name) {
  BR_ASSIGN_OR_RETURN(bool exists, TableExists(target, schema, "move_checkpoint"));
  std::map<std::string, MoveTableProgress> out;
  if (!exists) return out;
  std::string sql = absl::StrCat("SELECT db, tbl, phase, copied, HEX(guard), copy_done, checked, "
                     "checksum_done, start_at FROM ", Table(schema), " WHERE move = ");
  AppendQuotedString(name, &sql);
  BR_ASSIGN_OR_RETURN(auto rows, target.Query(sql));
  for (const auto& r : rows) {
    if (r.size() < 9 || !r[0] || !r[1]) continue;
    const std::string where =
        absl::StrCat(target.Peer(), " ", schema, ".move_checkpoint row for ", *r[0], ".", *r[1]);
    MoveTableProgress p;
    p.db = *r[0];
    p.table = *r[1];
    std::optional<MovePhase> phase = ParseMovePhase(r[2].value_or(""));
    if (!phase) {
      return absl::DataLossError(absl::StrCat(where, ": unknown phase '", r[2].value_or(""),
                                              "'"));
    }
    p.phase = *phase;
    BR_ASSIGN_OR_RETURN(p.copied, DecodeBound(r[3], where));
    if (r[4] && !r[4]->empty()) {
      std::string g;
      if (!Unhex(*r[4], &g)) return absl::DataLossError(where + ": bad guard");
      p.guard = std::move(g);
    }
    p.copy_done = r[5].value_or("0") != "0";
    BR_ASSIGN_OR_RETURN(p.checked, DecodeBound(r[6], where));
    p.checksum_done = r[7].value_or("0") != "0";
    p.start = r[8].value_or("");
    out[absl::StrCat(*r[0], ".", *r[1])] = std::move(p);
  }
  return out;
}

absl::Status SaveMoveCheckpoint(replication::SqlSource& target, const std::string& schema,
                                const std::string& name, const std::string& db,
                                const std::string& table, const MoveTableProgress& p) {
  return target.Query(MoveCheckpointStatement(schema, name, db, table, p)).status();
}

std::string MoveCheckpointStatement(const std::string& schema, const std::string& name,
                                    const std::string& db, const std::string& table,
                                    const MoveTableProgress& p) {
  std::string sql = absl::StrCat("REPLACE INTO ", Table(schema),
                                 " (move, db, tbl, phase, start_at, copied, guard, copy_done, "
                                 "checked, checksum_done, updated_at) VALUES (");
  AppendQuotedString(name, &sql);
  sql.push_back(',');
  AppendQuotedString(db, &sql);
  sql.push_back(',');
  AppendQuotedString(table, &sql);
  sql.push_back(',');
  AppendQuotedString(MovePhaseName(p.phase), &sql);
  sql.push_back(',');
  AppendQuotedString(p.start, &sql);
  sql.push_back(',');
  AppendQuotedString(EncodeBound(p.copied), &sql);
  sql.push_back(',');
  if (p.guard) {
    absl::StrAppend(&sql, "X'", absl::BytesToHexString(*p.guard), "'");
  } else {
    sql.append("NULL");
  }
  absl::StrAppend(&sql, ",", p.copy_done ? 1 : 0, ",");
  AppendQuotedString(EncodeBound(p.checked), &sql);
  absl::StrAppend(&sql, ",", p.checksum_done ? 1 : 0, ", UTC_TIMESTAMP(6))");
  return sql;
}

absl::Status ClearMoveCheckpoint(replication::SqlSource& target, const std::string& schema,
                                 const std::string& name) {
  BR_ASSIGN_OR_RETURN(bool exists, TableExists(target, schema, "move_checkpoint"));
  if (!exists) return absl::OkStatus();
  std::string sql = absl::StrCat("DELETE FROM ", Table(schema), " WHERE move = ");
  AppendQuotedString(name, &sql);
  return target.Query(sql).status();
}

}  // namespace binrelay::apply
