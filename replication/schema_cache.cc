#include "replication/schema_cache.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "protocol/charset.h"
#include "protocol/column_type.h"
#include "protocol/fixed_binary_text.h"
#include "protocol/status_macros.h"

namespace binrelay::replication {
namespace {

std::string Key(std::string_view db, std::string_view table) {
  return absl::StrCat(AV(db), std::string(1, '\0'), AV(table));
}

bool IsTextType(uint8_t type) {
  using namespace protocol;
  switch (type) {
    case kTypeVarchar: case kTypeVarString: case kTypeString: case kTypeBlob:
    case kTypeTinyBlob: case kTypeMediumBlob: case kTypeLongBlob: case kTypeEnum:
    case kTypeSet: case kTypeBlobCompressed: case kTypeVarcharCompressed:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string SqlQuote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') out.push_back(c == '\'' ? '\'' : '\\');
    out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

std::vector<std::string> ParseEnumMembers(std::string_view column_type) {
  std::vector<std::string> members;
  size_t open = column_type.find('(');
  if (open == std::string_view::npos) return members;
  size_t i = open + 1;
  while (i < column_type.size() && column_type[i] == '\'') {
    std::string m;
    ++i;
    while (i < column_type.size()) {
      if (column_type[i] == '\'') {
        if (i + 1 < column_type.size() && column_type[i + 1] == '\'') {
          m.push_back('\'');
          i += 2;
          continue;
        }
        ++i;
        break;
      }
      if (column_type[i] == '\\' && i + 1 < column_type.size()) ++i;
      m.push_back(column_type[i++]);
    }
    members.push_back(std::move(m));
    if (i < column_type.size() && column_type[i] == ',') ++i;
  }
  return members;
}

absl::StatusOr<SchemaCache::Table> SchemaCache::Load(std::string_view db, std::string_view table) {
  ++lookups_;
  std::string sql = absl::StrCat(
      "SELECT c.COLUMN_NAME, c.COLUMN_TYPE, co.ID, c.CHARACTER_OCTET_LENGTH, c.DATA_TYPE, "
      "c.DATETIME_PRECISION, c.CHARACTER_SET_NAME "
      "FROM information_schema.COLUMNS c LEFT JOIN information_schema.COLLATIONS co "
      "ON co.COLLATION_NAME = c.COLLATION_NAME WHERE c.TABLE_SCHEMA = ", SqlQuote(db),
      " AND c.TABLE_NAME = ", SqlQuote(table), " ORDER BY c.ORDINAL_POSITION");
  BR_ASSIGN_OR_RETURN(std::vector<SqlRow> rows, source_->Query(sql));
  Table t;
  for (const SqlRow& r : rows) {
    if (r.size() < 7) return absl::InternalError("short information_schema.COLUMNS row");
    Column c;
    c.name = r[0].value_or("");
    std::string type = absl::AsciiStrToLower(r[1].value_or(""));
    c.is_unsigned = absl::StrContains(type, "unsigned");
    if (r[2]) (void)absl::SimpleAtoi(*r[2], &c.collation);
    // MariaDB 10.10+ names its UCA-14.0 collations per charset in COLUMNS
    // (utf8mb4_uca1400_ai_ci) but lists them charset-free in COLLATIONS
    // (uca1400_ai_ci), so the join finds no id: the charset's own default
    // collation stands in, which decodes the same bytes.
    if (c.collation == 0 && r[6]) c.collation = protocol::DefaultCollationForCharset(*r[6]);
    if (r[3]) (void)absl::SimpleAtoi(*r[3], &c.octet_length);
    c.data_type = absl::AsciiStrToLower(r[4].value_or(""));
    if (r[5]) (void)absl::SimpleAtoi(*r[5], &c.datetime_precision);
    if (absl::StartsWith(type, "enum(") || absl::StartsWith(type, "set(")) {
      c.members = ParseEnumMembers(r[1].value_or(""));
    }
    t.columns.push_back(std::move(c));
  }
  std::string pk_sql = absl::StrCat(
      "SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE CONSTRAINT_NAME = "
      "'PRIMARY' AND TABLE_SCHEMA = ", SqlQuote(db), " AND TABLE_NAME = ", SqlQuote(table),
      " ORDER BY ORDINAL_POSITION");
  BR_ASSIGN_OR_RETURN(std::vector<SqlRow> pk_rows, source_->Query(pk_sql));
  for (const SqlRow& r : pk_rows) {
    if (r.empty() || !r[0]) continue;
    for (uint32_t i = 0; i < t.columns.size(); ++i) {
      if (t.columns[i].name == *r[0]) {
        t.columns[i].in_primary_key = true;
        t.primary_key.push_back(i);
      }
    }
  }
  return t;
}

absl::StatusOr<const SchemaCache::Table*> SchemaCache::Get(std::string_view db,
                                                            std::string_view table,
                                                            size_t expected_columns) {
  std::string key = Key(db, table);
  auto it = tables_.find(key);
  if (it == tables_.end() ||
      (expected_columns > 0 && it->second.columns.size() != expected_columns)) {
    // A size mismatch on a cached entry means DDL we have not seen yet
    // reached information_schema first; re-read once before giving up.
    BR_ASSIGN_OR_RETURN(Table t, Load(db, table));
    it = tables_.insert_or_assign(key, std::move(t)).first;
  }
  return &it->second;
}

bool SchemaCache::MayHoldFixedBinary(const protocol::TableDef& def) {
  for (const protocol::ColumnDef& c : def.columns) {
    if (c.type == protocol::kTypeString && (c.meta == 16 || c.meta == 4) &&
        (c.collation == 0 || c.collation == protocol::kBinaryCollation)) {
      return true;
    }
  }
  return false;
}

absl::Status SchemaCache::MarkFixedBinary(protocol::TableDef* def) {
  if (source_ == nullptr) return absl::OkStatus();
  BR_ASSIGN_OR_RETURN(const Table* t, Get(def->db, def->table, 0));
  for (protocol::ColumnDef& col : def->columns) {
    if (col.type != protocol::kTypeString) continue;
    for (const Column& src : t->columns) {
      if (src.name == col.name) {
        col.fixed_binary = protocol::FixedBinaryTypeFromName(src.data_type);
        break;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status SchemaCache::Enrich(protocol::TableDef* def) {
  if (source_ == nullptr) return absl::OkStatus();
  BR_ASSIGN_OR_RETURN(const Table* cached, Get(def->db, def->table, def->columns.size()));
  const Table& t = *cached;
  if (t.columns.size() != def->columns.size()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "table ", def->db, ".", def->table, " has ", def->columns.size(),
        " columns in the binlog but ", t.columns.size(), " in information_schema on ",
        source_->Peer(),
        t.columns.empty() ? " (dropped or not visible to this user)" : " (altered since)",
        ": column names cannot be trusted; enable binlog_row_metadata=FULL on the source"));
  }
  for (size_t i = 0; i < t.columns.size(); ++i) {
    protocol::ColumnDef& col = def->columns[i];
    const Column& src = t.columns[i];
    if (col.name.empty()) col.name = src.name;
    if (!col.unsigned_known) {
      col.is_unsigned = src.is_unsigned;
      col.unsigned_known = true;
    }
    if (col.collation == 0 && IsTextType(col.type)) {
      col.collation = src.collation != 0 ? src.collation : protocol::kBinaryCollation;
    }
    if (col.members.empty()) col.members = src.members;
    if (col.type == protocol::kTypeString) {
      col.fixed_binary = protocol::FixedBinaryTypeFromName(src.data_type);
    }
    if (col.binary_length == 0 && src.data_type == "binary") col.binary_length = src.octet_length;
    // MariaDB's pre-10.1 fractional TIMESTAMP/TIME/DATETIME columns use the
    // old type codes with no metadata; their width depends on the precision,
    // which only the schema knows (column_def.h: meta 1..6 selects it).
    if ((col.type == protocol::kTypeTimestamp || col.type == protocol::kTypeTime ||
         col.type == protocol::kTypeDatetime) &&
        col.meta == 0) {
      col.meta = static_cast<uint16_t>(src.datetime_precision);
    }
  }
  if (def->primary_key.empty()) {
    def->primary_key = t.primary_key;
    for (uint32_t idx : t.primary_key) def->columns[idx].in_primary_key = true;
  }
  def->names_known = true;
  return absl::OkStatus();
}

void SchemaCache::Invalidate(std::string_view db, std::string_view table) {
  tables_.erase(Key(db, table));
}

void SchemaCache::InvalidateSchema(std::string_view db) {
  std::string prefix = absl::StrCat(AV(db), std::string(1, '\0'));
  absl::erase_if(tables_, [&](const auto& kv) { return absl::StartsWith(kv.first, prefix); });
}

}  // namespace binrelay::replication
