#include "apply/key_range_chunker.h"

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "apply/ordered_key.h"
#include "apply/sql_literal.h"
#include "protocol/column_type.h"
#include "protocol/status_macros.h"

namespace binrelay::apply {
namespace {

// "decimal(10,2)" -> 10, 2; "datetime(3)" -> 3, 0.
void TypeArguments(std::string_view column_type, int* a, int* b) {
  *a = 0;
  *b = 0;
  const size_t open = column_type.find('('), close = column_type.find(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return;
  std::string_view args = column_type.substr(open + 1, close - open - 1);
  const size_t comma = args.find(',');
  (void)absl::SimpleAtoi(AV(args.substr(0, comma)), a);
  if (comma != std::string_view::npos) (void)absl::SimpleAtoi(AV(args.substr(comma + 1)), b);
}

}  // namespace

absl::StatusOr<protocol::ColumnDef> KeyColumnDef(const ShapeColumn& c) {
  protocol::ColumnDef d;
  d.name = c.name;
  d.is_unsigned = absl::StrContains(c.column_type, "unsigned");
  d.unsigned_known = true;
  d.nullable = false;
  int a = 0, b = 0;
  TypeArguments(c.column_type, &a, &b);
  const std::string& t = c.data_type;
  if (t == "tinyint") {
    d.type = protocol::kTypeTiny;
  } else if (t == "smallint") {
    d.type = protocol::kTypeShort;
  } else if (t == "mediumint") {
    d.type = protocol::kTypeInt24;
  } else if (t == "int") {
    d.type = protocol::kTypeLong;
  } else if (t == "bigint") {
    d.type = protocol::kTypeLongLong;
  } else if (t == "decimal") {
    d.type = protocol::kTypeNewDecimal;
    d.meta = static_cast<uint16_t>((a << 8) | b);
  } else if (t == "date") {
    d.type = protocol::kTypeDate;
  } else if (t == "datetime") {
    d.type = protocol::kTypeDatetime2;
    d.meta = static_cast<uint16_t>(a);
  } else if (t == "time") {
    d.type = protocol::kTypeTime2;
    d.meta = static_cast<uint16_t>(a);
  } else if (t == "char" || t == "binary") {
    d.type = protocol::kTypeString;
    if (t == "binary") d.collation = 63;
  } else if (t == "varchar" || t == "varbinary") {
    d.type = protocol::kTypeVarchar;
    if (t == "varbinary") d.collation = 63;
  } else {
    // TIMESTAMP would need the session's time zone pinned for its text;
    // FLOAT, ENUM, SET and BLOB keys are rare enough to wait.
    return absl::UnimplementedError(absl::StrCat(
        "primary-key column `", c.name, "` is ", c.column_type,
        ", a type binrelay move does not chunk yet (integers, DECIMAL, DATE, DATETIME, TIME, "
        "CHAR, VARCHAR, BINARY and VARBINARY keys are supported)"));
  }
  return d;
}

absl::StatusOr<KeyRangeChunker> KeyRangeChunker::Create(const TableShape& source,
                                                        std::optional<KeyBound> after) {
  if (source.primary_key.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        source.db, ".", source.table, " has no primary key; binrelay move needs one to copy "
        "it in ranges and to apply its changes"));
  }
  KeyRangeChunker k;
  AppendIdentifier(source.db, &k.table_sql_);
  k.table_sql_.push_back('.');
  AppendIdentifier(source.table, &k.table_sql_);
  for (uint32_t i : source.primary_key) {
    const ShapeColumn& c = source.columns[i];
    KeyColumn kc;
    kc.name = c.name;
    auto def = KeyColumnDef(c);
    if (!def.ok()) {
      return Annotate(def.status(), absl::StrCat(source.db, ".", source.table));
    }
    kc.def = *def;
    kc.hex = c.data_type == "char" || c.data_type == "varchar" || c.data_type == "binary" ||
             c.data_type == "varbinary";
    kc.charset = c.charset.empty() && kc.hex ? "binary" : c.charset;
    if (!k.key_sql_.empty()) {
      k.key_sql_.push_back(',');
      k.select_sql_.push_back(',');
    }
    AppendIdentifier(c.name, &k.key_sql_);
    if (kc.hex) k.select_sql_.append("HEX(");
    AppendIdentifier(c.name, &k.select_sql_);
    if (kc.hex) k.select_sql_.push_back(')');
    k.key_.push_back(std::move(kc));
  }
  if (after) {
    // A bound from a checkpoint: its values are written into SQL, so they
    // must encode (which validates numbers) to the key it recorded.
    std::string ordered;
    for (size_t i = 0; i < k.key_.size() && i < after->values.size(); ++i) {
      BR_RETURN_IF_ERROR(AppendOrderedComponentFromText(k.key_[i].def, after->values[i], &ordered));
    }
    if (after->values.size() != k.key_.size() || ordered != after->ordered) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the resume bound for ", source.db, ".", source.table,
          " does not match its primary key; the move's checkpoint is damaged"));
    }
  }
  k.last_ = std::move(after);
  return k;
}

void KeyRangeChunker::AppendLiteral(const KeyColumn& c, const std::string& value,
                                    std::string* out) const {
  if (!c.hex) {
    // Integers and DECIMAL bare (validated digits, when read: a quoted one
    // would be compared as a DOUBLE, inexact past 15 digits); temporal
    // values as quoted text, converted once to the column's type.
    if (c.def.type == protocol::kTypeNewDecimal || protocol::IntegerWidth(c.def.type) != 0) {
      out->append(value);
    } else {
      AppendQuotedString(value, out);
    }
    return;
  }
  // In the column's character set, so the comparison uses its collation.
  if (c.charset != "binary") absl::StrAppend(out, "_", c.charset, " ");
  absl::StrAppend(out, "X'", absl::BytesToHexString(AV(value)), "'");
}

// Lexicographic comparison of the key with `b`, expanded so that the range
// optimizer uses the primary key: (a > x) OR (a = x AND b > y) ...
std::string KeyRangeChunker::Compare(const KeyBound& b, bool after) const {
  std::string out = "(";
  for (size_t i = 0; i < key_.size(); ++i) {
    if (i > 0) out.append(" OR ");
    out.push_back('(');
    for (size_t j = 0; j < i; ++j) {
      AppendIdentifier(key_[j].name, &out);
      out.append(" = ");
      AppendLiteral(key_[j], b.values[j], &out);
      out.append(" AND ");
    }
    AppendIdentifier(key_[i].name, &out);
    const bool last = i + 1 == key_.size();
    out.append(after ? " > " : (last ? " <= " : " < "));
    AppendLiteral(key_[i], b.values[i], &out);
    out.push_back(')');
  }
  out.push_back(')');
  return out;
}

std::string KeyRangeChunker::After(const KeyBound& b) const { return Compare(b, true); }
std::string KeyRangeChunker::AtMost(const KeyBound& b) const { return Compare(b, false); }

absl::StatusOr<std::optional<KeyBound>> KeyRangeChunker::ReadBound(
    replication::SqlSource& source, const std::string& sql) const {
  BR_ASSIGN_OR_RETURN(std::vector<replication::SqlRow> found, source.Query(sql));
  if (found.empty()) return std::optional<KeyBound>();
  if (found[0].size() != key_.size()) {
    return absl::InternalError(absl::StrCat("chunk bound query on ", source.Peer(), " returned ",
                                            found[0].size(), " columns for ", key_.size(),
                                            " key columns"));
  }
  KeyBound upper;
  for (size_t i = 0; i < key_.size(); ++i) {
    if (!found[0][i]) {
      return absl::DataLossError(absl::StrCat("primary-key column `", key_[i].name, "` of ",
                                              table_sql_, " is NULL on ", source.Peer()));
    }
    std::string value = *found[0][i];
    if (key_[i].hex) {
      if (value.size() % 2 != 0 ||
          value.find_first_not_of("0123456789ABCDEFabcdef") != std::string::npos) {
        return absl::DataLossError(absl::StrCat("HEX(`", key_[i].name, "`) on ", source.Peer(),
                                                " returned '", value.substr(0, 80), "'"));
      }
      value = absl::HexStringToBytes(value);
    }
    // Validates numbers (they are written into SQL bare) as it encodes.
    BR_RETURN_IF_ERROR(AppendOrderedComponentFromText(key_[i].def, value, &upper.ordered));
    upper.values.push_back(std::move(value));
  }
  return std::optional<KeyBound>(std::move(upper));
}

absl::StatusOr<std::optional<KeyBound>> KeyRangeChunker::Highest(
    replication::SqlSource& server, const std::string& table_sql) const {
  std::string order;
  for (size_t i = 0; i < key_.size(); ++i) {
    if (i > 0) order.push_back(',');
    AppendIdentifier(key_[i].name, &order);
    order.append(" DESC");
  }
  return ReadBound(server, absl::StrCat("SELECT ", select_sql_, " FROM ", table_sql, " ORDER BY ",
                                        order, " LIMIT 1"));
}

absl::StatusOr<std::optional<KeyRange>> KeyRangeChunker::Next(replication::SqlSource& source,
                                                              uint64_t rows) {
  if (done_) return std::optional<KeyRange>();
  // The move's session has no PAD_CHAR_TO_FULL_LENGTH, which would pad CHAR
  // bounds unlike the binlog's (move_session.h).
  std::string sql = absl::StrCat("SELECT ", select_sql_, " FROM ", table_sql_);
  if (last_) absl::StrAppend(&sql, " WHERE ", After(*last_));
  absl::StrAppend(&sql, " ORDER BY ", key_sql_, " LIMIT 1 OFFSET ", rows > 0 ? rows - 1 : 0);
  BR_ASSIGN_OR_RETURN(std::optional<KeyBound> found, ReadBound(source, sql));
  KeyRange r;
  r.lower = last_;
  if (!found) {
    // Fewer than `rows` left: the last range, to the end of the table.
    done_ = true;
    r.where = last_ ? After(*last_) : "TRUE";
    return std::optional<KeyRange>(std::move(r));
  }
  KeyBound upper = std::move(*found);
  r.where = last_ ? absl::StrCat(After(*last_), " AND ", AtMost(upper)) : AtMost(upper);
  r.upper = upper;
  last_ = std::move(upper);
  return std::optional<KeyRange>(std::move(r));
}

std::optional<KeyRange> KeyRangeChunker::NextTo(const std::optional<KeyBound>& upper) {
  if (done_) return std::nullopt;
  KeyRange r;
  r.lower = last_;
  if (!upper) {
    done_ = true;
    r.where = last_ ? After(*last_) : "TRUE";
    return r;
  }
  r.where = last_ ? absl::StrCat(After(*last_), " AND ", AtMost(*upper)) : AtMost(*upper);
  r.upper = upper;
  last_ = upper;
  return r;
}

}  // namespace binrelay::apply
