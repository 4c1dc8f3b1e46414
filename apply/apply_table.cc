#include "apply/apply_table.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "apply/row_key.h"
#include "apply/sql_literal.h"
#include "protocol/byte_cursor.h"
#include "protocol/column_type.h"
#include "protocol/decimal.h"
#include "protocol/row_image.h"
#include "protocol/temporal.h"
#include "protocol/status_macros.h"

namespace binrelay::apply {
namespace {

// BINARY(n) -> n, else 0.
uint32_t BinaryLength(const ShapeColumn& c) {
  if (c.data_type != "binary") return 0;
  size_t open = c.column_type.find('(');
  size_t close = c.column_type.find(')');
  uint32_t n = 0;
  if (open == std::string::npos || close == std::string::npos) return 0;
  if (!absl::SimpleAtoi(c.column_type.substr(open + 1, close - open - 1), &n)) return 0;
  return n;
}

}  // namespace

ApplyTable MakeApplyTable(TableShape source, TableShape target) {
  ApplyTable t;
  t.keyed = KeyIsMemComparable(target);
  AppendIdentifier(target.db, &t.qualified);
  t.qualified.push_back('.');
  AppendIdentifier(target.table, &t.qualified);
  t.replace_head = absl::StrCat("REPLACE INTO ", t.qualified, " (");
  bool first = true;
  for (const ShapeColumn& c : target.columns) {
    if (c.generated) continue;
    if (!first) t.replace_head.push_back(',');
    first = false;
    AppendIdentifier(c.name, &t.replace_head);
  }
  t.replace_head.append(") VALUES ");
  t.bulk_replace = t.replace_head;
  t.bulk_replace.push_back('(');
  for (const ShapeColumn& c : target.columns) {
    if (c.generated) continue;
    if (t.bulk_params > 0) t.bulk_replace.push_back(',');
    t.bulk_replace.push_back('?');
    ++t.bulk_params;
  }
  t.bulk_replace.push_back(')');
  t.delete_head = absl::StrCat("DELETE FROM ", t.qualified, " WHERE ");
  for (const ShapeColumn& c : target.columns) t.styles.push_back(ColumnStyle(c.data_type));
  // MySQL's JSON column has no character set, and refuses a binary string
  // (error 3144): MariaDB's JSON, a LONGTEXT, arrives as its text's bytes
  // and is written as text in the source column's character set.
  for (size_t i = 0; i < target.columns.size() && i < source.columns.size(); ++i) {
    ShapeColumn& c = target.columns[i];
    if (c.data_type == "json" && c.charset.empty()) {
      c.charset = source.columns[i].charset.empty() ? "utf8mb4" : source.columns[i].charset;
    }
    // A bound JSON value is text in character_set_client (utf8mb4): other
    // bytes would be refused or stored as other characters.
    if (c.data_type == "json" && c.charset != "utf8mb4" && c.charset != "utf8mb3" &&
        c.charset != "utf8" && c.charset != "ascii") {
      t.bind_values = false;
    }
  }
  t.source = std::move(source);
  t.target = std::move(target);
  return t;
}

bool SameTableMap(const protocol::TableDef& map, const ApplyTable& t) {
  if (!t.def_ready || map.columns.size() != t.def.columns.size()) return false;
  for (size_t i = 0; i < map.columns.size(); ++i) {
    if (map.columns[i].type != t.def.columns[i].type ||
        map.columns[i].meta != t.def.columns[i].meta) {
      return false;
    }
  }
  return true;
}

absl::Status MergeTableMap(const protocol::TableDef& map, ApplyTable* t) {
  if (map.columns.size() != t->source.columns.size()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the binlog's `", map.db, "`.`", map.table, "` has ", map.columns.size(),
        " columns but the table checked at start has ", t->source.columns.size(),
        ": its shape changed in a way the pipeline did not see (a DDL before its start "
        "position?); make the target match and restart binrelay"));
  }
  t->def = map;
  for (size_t i = 0; i < map.columns.size(); ++i) {
    protocol::ColumnDef& c = t->def.columns[i];
    const ShapeColumn& s = t->source.columns[i];
    c.name = s.name;
    c.is_unsigned = absl::StrContains(s.column_type, "unsigned");
    c.unsigned_known = true;
    if (uint32_t n = BinaryLength(s)) c.binary_length = n;
    if (s.charset.empty() && c.collation == 0) c.collation = protocol::kBinaryCollation;
  }
  t->def.primary_key = t->source.primary_key;
  t->def.names_known = true;
  t->def_ready = true;
  return absl::OkStatus();
}

absl::Status AppendRowValues(const ApplyTable& t, std::string_view image, std::string* scratch,
                             std::string* out) {
  out->push_back('(');
  bool first = true;
  BR_RETURN_IF_ERROR(protocol::ForEachImageValue(
      image, t.def, scratch, [&](size_t i, const protocol::ValueView* v) {
        const ShapeColumn& c = t.target.columns[i];
        if (c.generated) return true;
        if (!first) out->push_back(',');
        first = false;
        AppendSqlLiteral(v, c.charset, out, t.styles[i]);
        return true;
      }));
  out->push_back(')');
  return absl::OkStatus();
}

absl::Status AppendKeyMatch(const ApplyTable& t, std::string_view image, std::string* scratch,
                            std::string* out) {
  const auto& pk = t.target.primary_key;
  uint32_t last = 0;
  for (uint32_t c : pk) last = std::max(last, c);
  if (pk.size() > 1) out->push_back('(');
  bool first = true;
  // Key columns in image order; the match is a conjunction, so order is free.
  BR_RETURN_IF_ERROR(protocol::ForEachImageValue(
      image, t.def, scratch, [&](size_t i, const protocol::ValueView* v) {
        bool in_key = false;
        for (uint32_t c : pk) in_key = in_key || c == i;
        if (in_key) {
          if (!first) out->append(" AND ");
          first = false;
          const ShapeColumn& c = t.target.columns[i];
          AppendIdentifier(c.name, out);
          out->append(" = ");
          AppendSqlLiteral(v, c.charset, out, t.styles[i]);
        }
        return i < last;
      }));
  if (pk.size() > 1) out->push_back(')');
  return absl::OkStatus();
}

namespace {

// Statements of at most max_rows rows; a row joins the statement only if it
// stays within max_bytes (a first row always does), and no statement may
// exceed the target's max_allowed_packet.
absl::Status BuildBatches(const ApplyTable& t, const BufferedRow* const* rows, size_t n,
                          size_t max_rows, size_t max_bytes, bool deletes,
                          absl::FunctionRef<absl::Status(std::string_view, size_t)> emit) {
  const std::string& head = deletes ? t.delete_head : t.replace_head;
  const std::string_view sep = deletes ? " OR " : ",";
  std::string sql;
  std::string row_sql;
  std::string scratch;
  size_t in_batch = 0;
  for (size_t i = 0; i < n; ++i) {
    row_sql.clear();
    BR_RETURN_IF_ERROR(deletes ? AppendKeyMatch(t, rows[i]->image, &scratch, &row_sql)
                               : AppendRowValues(t, rows[i]->image, &scratch, &row_sql));
    if (head.size() + row_sql.size() > t.max_statement_bytes) {
      return absl::FailedPreconditionError(absl::StrCat(
          "a row of ", t.Name(), " needs a statement of ", head.size() + row_sql.size(),
          " bytes, more than the target's max_allowed_packet allows (", t.max_statement_bytes,
          "); raise max_allowed_packet on the target"));
    }
    if (in_batch > 0 && (sql.size() + sep.size() + row_sql.size() > max_bytes ||
                         sql.size() + sep.size() + row_sql.size() > t.max_statement_bytes)) {
      BR_RETURN_IF_ERROR(emit(sql, in_batch));
      in_batch = 0;
    }
    if (in_batch == 0) {
      sql.assign(head);
    } else {
      sql.append(sep);
    }
    sql.append(row_sql);
    if (++in_batch >= max_rows) {
      BR_RETURN_IF_ERROR(emit(sql, in_batch));
      in_batch = 0;
    }
  }
  if (in_batch > 0) BR_RETURN_IF_ERROR(emit(sql, in_batch));
  return absl::OkStatus();
}

}  // namespace

absl::Status BuildReplaces(const ApplyTable& t, const BufferedRow* const* rows, size_t n,
                           size_t max_rows, size_t max_bytes,
                           absl::FunctionRef<absl::Status(std::string_view, size_t)> emit) {
  return BuildBatches(t, rows, n, max_rows, max_bytes, false, emit);
}

namespace {

absl::Status AddBulkValue(const protocol::ValueView* v, LiteralStyle style, bool as_text,
                          protocol::BulkExecuteBuilder* bulk) {
  using protocol::ValueKind;
  if (v == nullptr || v->kind == ValueKind::kNull) {
    bulk->AddNull();
    return absl::OkStatus();
  }
  switch (v->kind) {
    case ValueKind::kSigned:
      return bulk->AddInt(v->i);
    case ValueKind::kUnsigned:
    case ValueKind::kYear:
    case ValueKind::kEnum:
    case ValueKind::kSet:
      return bulk->AddUnsigned(v->u);
    case ValueKind::kFloat:
    case ValueKind::kDouble:
      return bulk->AddDouble(v->d);
    case ValueKind::kFormatted:
      if (v->has_temporal) {
        switch (v->temporal_form) {
          case protocol::TemporalForm::kDate:
            return bulk->AddDate(v->temporal);
          case protocol::TemporalForm::kDatetime:
            return bulk->AddDatetime(v->temporal);
          case protocol::TemporalForm::kTime:
            return bulk->AddTime(v->temporal);
        }
      }
      return style == LiteralStyle::kExactNumber ? bulk->AddDecimalText(v->bytes)
                                                 : bulk->AddString(v->bytes);
    case ValueKind::kJsonText:
    case ValueKind::kText:
    case ValueKind::kBinary:
    case ValueKind::kNull:
      break;
  }
  return as_text ? bulk->AddString(v->bytes) : bulk->AddBlob(v->bytes);
}

// How one column of a row image becomes a bulk parameter. Images reaching a
// drain were checked value by value when read (RowImageSplitter), so the
// common types are written straight from their bytes; every other type goes
// through DecodeValue and AddBulkValue. About a third fewer instructions per
// row than decoding every value into a ValueView (callgrind, insert-heavy).
enum class BulkOp : uint8_t {
  kGeneric,   // DecodeValue + AddBulkValue
  kInteger,   // `width` little-endian bytes
  kPrefixed,  // `width`-byte length, then the bytes (VARCHAR, BLOB)
  kDecimal,   // packed DECIMAL, sent as text
  kTemporal,  // MYSQL_TIME layouts
};

struct BulkStep {
  BulkOp op = BulkOp::kGeneric;
  uint8_t width = 0;
  bool is_unsigned = false;
  bool skip = false;  // a generated column: read past, not sent
  // Strings as text in character_set_client (utf8mb4), not as binary: a
  // MySQL JSON column refuses a binary string (ER_INVALID_JSON_CHARSET);
  // its values are JSON text, which is utf8mb4.
  bool as_text = false;
};

std::vector<BulkStep> PlanBulkRow(const ApplyTable& t) {
  std::vector<BulkStep> plan(t.def.columns.size());
  for (size_t i = 0; i < plan.size(); ++i) {
    const protocol::ColumnDef& col = t.def.columns[i];
    BulkStep& s = plan[i];
    s.skip = t.target.columns[i].generated;
    s.is_unsigned = col.is_unsigned;
    s.as_text = t.target.columns[i].data_type == "json";
    if (const size_t width = protocol::IntegerWidth(col.type); width != 0) {
      s.op = BulkOp::kInteger;
      s.width = static_cast<uint8_t>(width);
      continue;
    }
    switch (col.type) {
      case protocol::kTypeVarchar:
      case protocol::kTypeVarString:
        s.op = BulkOp::kPrefixed;
        s.width = col.meta < 256 ? 1 : 2;
        break;
      case protocol::kTypeTinyBlob:
      case protocol::kTypeMediumBlob:
      case protocol::kTypeLongBlob:
      case protocol::kTypeBlob:
        if (col.meta >= 1 && col.meta <= 4) {
          s.op = BulkOp::kPrefixed;
          s.width = static_cast<uint8_t>(col.meta);
        }
        break;
      case protocol::kTypeNewDecimal:
        if (t.styles[i] == LiteralStyle::kExactNumber) s.op = BulkOp::kDecimal;
        break;
      default:
        if (protocol::IsTemporalType(col.type)) s.op = BulkOp::kTemporal;
        break;
    }
  }
  return plan;
}

// Built only on failure: this runs for every row of a drain.
absl::Status BadImage(const ApplyTable& t, size_t column, absl::Status s) {
  return Annotate(s, absl::StrCat("row image of ", t.Name(), ", column ", column + 1, " `",
                                  t.def.columns[column].name, "`"));
}

absl::Status AddBulkRow(const ApplyTable& t, const std::vector<BulkStep>& plan,
                        std::string_view image, std::string* scratch,
                        protocol::BulkExecuteBuilder* bulk) {
  protocol::ByteCursor c(image);
  const size_t n = t.def.columns.size();
  const std::string_view nulls = c.Bytes((n + 7) / 8);
  if (!c.ok()) {
    return absl::DataLossError(
        absl::StrCat("row image of ", t.Name(), " is shorter than its NULL bitmap"));
  }
  for (size_t i = 0; i < n; ++i) {
    const BulkStep& step = plan[i];
    if ((static_cast<uint8_t>(nulls[i / 8]) >> (i % 8)) & 1) {
      if (!step.skip) bulk->AddNull();
      continue;
    }
    absl::Status added;
    switch (step.op) {
      case BulkOp::kInteger: {
        const uint64_t v = c.Fixed(step.width);
        if (step.skip) break;
        if (step.is_unsigned) {
          added = bulk->AddUnsigned(v);
        } else {
          const int shift = 64 - 8 * step.width;
          added = bulk->AddInt(static_cast<int64_t>(v << shift) >> shift);  // sign-extend
        }
        break;
      }
      case BulkOp::kPrefixed: {
        const uint64_t length = c.Fixed(step.width);
        const std::string_view bytes = c.Bytes(length);
        if (!step.skip && c.ok()) added = step.as_text ? bulk->AddString(bytes) : bulk->AddBlob(bytes);
        break;
      }
      case BulkOp::kDecimal: {
        const protocol::ColumnDef& col = t.def.columns[i];
        const int precision = col.meta >> 8, scale = col.meta & 0xFF;
        const std::string_view packed = c.Bytes(protocol::DecimalBinarySize(precision, scale));
        if (step.skip || !c.ok()) break;
        scratch->clear();
        added = protocol::AppendDecimalText(packed, precision, scale, scratch);
        if (added.ok()) added = bulk->AddDecimalText(*scratch);
        break;
      }
      case BulkOp::kTemporal: {
        const protocol::ColumnDef& col = t.def.columns[i];
        protocol::TemporalParts parts;
        protocol::TemporalForm form;
        added = protocol::DecodeTemporalParts(c, col.type, col.meta, &parts, &form);
        if (step.skip || !added.ok()) break;
        switch (form) {
          case protocol::TemporalForm::kDate:
            added = bulk->AddDate(parts);
            break;
          case protocol::TemporalForm::kDatetime:
            added = bulk->AddDatetime(parts);
            break;
          case protocol::TemporalForm::kTime:
            added = bulk->AddTime(parts);
            break;
        }
        break;
      }
      case BulkOp::kGeneric: {
        protocol::ValueView v;
        added = protocol::DecodeValue(c, t.def.columns[i], scratch, &v);
        if (!step.skip && added.ok()) added = AddBulkValue(&v, t.styles[i], step.as_text, bulk);
        break;
      }
    }
    if (!c.ok()) return BadImage(t, i, c.status("value"));
    if (!added.ok()) return BadImage(t, i, added);
  }
  return bulk->EndRow();
}

}  // namespace

absl::Status BuildBulkReplaces(const ApplyTable& t, const BufferedRow* const* rows, size_t n,
                               size_t max_rows, size_t max_bytes,
                               protocol::BulkExecuteBuilder* bulk,
                               absl::FunctionRef<absl::Status(size_t rows)> emit) {
  std::string scratch;
  const std::vector<BulkStep> plan = PlanBulkRow(t);
  bulk->Start(0, t.bulk_params);
  for (size_t i = 0; i < n; ++i) {
    const protocol::BulkExecuteBuilder::Mark before = bulk->mark();
    BR_RETURN_IF_ERROR(AddBulkRow(t, plan, rows[i]->image, &scratch, bulk));
    if (before.rows > 0 && (bulk->size() > max_bytes || bulk->size() > t.max_statement_bytes)) {
      // This row starts the next command.
      bulk->TruncateTo(before);
      BR_RETURN_IF_ERROR(emit(bulk->rows()));
      bulk->Start(0, t.bulk_params);
      BR_RETURN_IF_ERROR(AddBulkRow(t, plan, rows[i]->image, &scratch, bulk));
    }
    if (bulk->size() > t.max_statement_bytes) {
      return absl::FailedPreconditionError(absl::StrCat(
          "a row of ", t.Name(), " needs a command of ", bulk->size(),
          " bytes, more than the target's max_allowed_packet allows (", t.max_statement_bytes,
          "); raise max_allowed_packet on the target"));
    }
    if (bulk->rows() >= max_rows) {
      BR_RETURN_IF_ERROR(emit(bulk->rows()));
      bulk->Start(0, t.bulk_params);
    }
  }
  if (bulk->rows() > 0) BR_RETURN_IF_ERROR(emit(bulk->rows()));
  return absl::OkStatus();
}

absl::Status BuildDeletes(const ApplyTable& t, const BufferedRow* const* rows, size_t n,
                          size_t max_rows, size_t max_bytes,
                          absl::FunctionRef<absl::Status(std::string_view, size_t)> emit) {
  return BuildBatches(t, rows, n, max_rows, max_bytes, true, emit);
}

namespace {

// A sortable encoding of one index column: integers in numeric order,
// everything else by bytes (equal values are equal bytes, which is what
// the cut points need).
void AppendSortComponent(const protocol::ValueView* v, std::string* out) {
  using protocol::ValueKind;
  if (v == nullptr || v->kind == ValueKind::kNull) {
    out->push_back('\0');
    return;
  }
  out->push_back('\1');
  auto be = [&](uint64_t x) {
    for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(x >> shift));
  };
  switch (v->kind) {
    case ValueKind::kSigned:
      be(static_cast<uint64_t>(v->i) ^ (1ull << 63));
      return;
    case ValueKind::kUnsigned:
    case ValueKind::kYear:
    case ValueKind::kEnum:
    case ValueKind::kSet:
      be(v->u);
      return;
    default:
      // Raw bytes, so strings sort in byte order (not length first).
      out->append(v->bytes);
      out->push_back('\0');
      return;
  }
}

}  // namespace

absl::StatusOr<std::vector<std::pair<size_t, size_t>>> PartitionUpserts(
    const ApplyTable& t, std::vector<const BufferedRow*>* upserts, size_t max_rows) {
  std::vector<std::pair<size_t, size_t>> batches;
  const size_t n = upserts->size();
  max_rows = std::max<size_t>(1, max_rows);
  if (t.target.unique_keys.empty() || n <= 1) {
    for (size_t at = 0; at < n; at += max_rows) batches.emplace_back(at, std::min(n, at + max_rows));
    return batches;
  }
  // Pass 1: the leading value of each unique index, per row; the index
  // with the fewest distinct leading values clusters most.
  const auto& keys = t.target.unique_keys;
  std::vector<std::vector<std::string>> leading(keys.size(), std::vector<std::string>(n));
  std::string scratch;
  for (size_t r = 0; r < n; ++r) {
    BR_RETURN_IF_ERROR(protocol::ForEachImageValue(
        (*upserts)[r]->image, t.def, &scratch, [&](size_t col, const protocol::ValueView* v) {
          for (size_t k = 0; k < keys.size(); ++k) {
            if (keys[k][0] == col) AppendSortComponent(v, &leading[k][r]);
          }
          return true;
        }));
  }
  size_t best = 0;
  size_t best_distinct = SIZE_MAX;
  for (size_t k = 0; k < keys.size(); ++k) {
    std::vector<std::string> v = leading[k];
    std::sort(v.begin(), v.end());
    const size_t distinct = static_cast<size_t>(std::unique(v.begin(), v.end()) - v.begin());
    if (distinct < best_distinct) {
      best = k;
      best_distinct = distinct;
    }
  }
  // Pass 2: the chosen index's columns, in index order, as one sort key.
  const std::vector<uint32_t>& index = keys[best];
  std::vector<std::string> sort_key(n);
  std::vector<std::string> parts(index.size());
  for (size_t r = 0; r < n; ++r) {
    for (auto& p : parts) p.clear();
    BR_RETURN_IF_ERROR(protocol::ForEachImageValue(
        (*upserts)[r]->image, t.def, &scratch, [&](size_t col, const protocol::ValueView* v) {
          for (size_t pos = 0; pos < index.size(); ++pos) {
            if (index[pos] == col) AppendSortComponent(v, &parts[pos]);
          }
          return true;
        }));
    for (const auto& p : parts) sort_key[r] += p;
  }
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return sort_key[a] < sort_key[b]; });
  std::vector<const BufferedRow*> sorted(n);
  std::vector<const std::string*> lead(n);
  for (size_t i = 0; i < n; ++i) {
    sorted[i] = (*upserts)[order[i]];
    lead[i] = &leading[best][order[i]];
  }
  *upserts = std::move(sorted);
  // Cut at leading-value changes, filling batches up to max_rows; a group
  // larger than a batch is split.
  size_t begin = 0;
  size_t i = 0;
  while (i < n) {
    size_t group_end = i;
    while (group_end < n && *lead[group_end] == *lead[i]) ++group_end;
    if (group_end - begin > max_rows && i > begin) {
      batches.emplace_back(begin, i);  // this group does not fit: close the batch before it
      begin = i;
    }
    while (group_end - begin > max_rows) {
      batches.emplace_back(begin, begin + max_rows);
      begin += max_rows;
    }
    i = group_end;
  }
  if (begin < n) batches.emplace_back(begin, n);
  return batches;
}

}  // namespace binrelay::apply
